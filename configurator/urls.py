"""URLs of the configurator page; the JSON API (``api_urls``) and the auto-planner's pages
(``planner_urls``) are included into the same ``configurator`` namespace."""

from django.urls import include, path

from . import views

app_name = "configurator"
urlpatterns = [
    path("", views.home, name="home"),
    path("configurator/update", views.update, name="update"),
    path("configurator/preset", views.preset, name="preset"),
    path("configurator/fix", views.apply_fix, name="apply_fix"),
    path("configurator/acknowledge", views.acknowledge_warning, name="acknowledge"),
    path("configurator/preview", views.preview, name="preview"),
    path("configurator/bundle", views.bundle, name="bundle"),
    path("configurator/alternative", views.alternative, name="alternative"),
    path("", include("configurator.api_urls")),
    path("", include("configurator.planner_urls")),
]
