"""URLs of the configurator page (``web/views.py``); the JSON API (``api/urls.py``) and the
auto-planner's pages (``web/planner/urls.py``) are included into the same ``configurator`` namespace."""

from django.urls import include, path

from .web import views

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
    path("configurator/advice", views.advice, name="advice"),
    path("configurator/why", views.why, name="why"),
    path("", include("configurator.api.urls")),
    path("", include("configurator.web.planner.urls")),
]
