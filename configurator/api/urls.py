"""URLs of the JSON API.  No ``app_name``: included from ``configurator/urls.py``
(``path("", include("configurator.api.urls"))``) the names join the ``configurator`` namespace
(``configurator:api_plan``)."""

from django.urls import path

from configurator.api import views as api_views

urlpatterns = [
    path("api/plan", api_views.plan_api, name="api_plan"),
    path("api/recommend", api_views.recommend_api, name="api_recommend"),
]
