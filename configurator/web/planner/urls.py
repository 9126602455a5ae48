"""URLs of the auto-planner's pages.  No ``app_name``: included from ``configurator/urls.py``
(``path("", include("configurator.web.planner.urls"))``) the names join the
``configurator`` namespace (``configurator:planner``)."""

from django.urls import path

from configurator.web.planner import views as planner_views

urlpatterns = [
    path("planner/", planner_views.planner_page, name="planner"),
    path("planner/results", planner_views.planner_results, name="planner_results"),
    path("planner/preset", planner_views.planner_preset, name="planner_preset"),
    path("planner/open", planner_views.planner_open, name="planner_open"),
]
