from django.urls import include, path

from . import api_views, views

app_name = "configurator"
urlpatterns = [
    path("", views.home, name="home"),
    path("configurator/update", views.update, name="update"),
    path("configurator/preset", views.preset, name="preset"),
    path("configurator/fix", views.apply_fix, name="apply_fix"),
    path("configurator/acknowledge", views.acknowledge_warning, name="acknowledge"),
    path("configurator/preview", views.preview, name="preview"),
    path("configurator/bundle", views.bundle, name="bundle"),
    path("api/plan", api_views.plan_api, name="api_plan"),
    path("", include("configurator.planner_urls")),
]
