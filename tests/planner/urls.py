"""The project's URLs with the auto-planner mounted inside the configurator namespace,
as ``configurator/urls.py`` will include it (``path("", include("configurator.planner_urls"))``)."""

from django.urls import include, path

import configurator.planner_urls
import configurator.urls
from config.urls import urlpatterns as project_urlpatterns

configurator_patterns = (
    [*configurator.urls.urlpatterns, *configurator.planner_urls.urlpatterns],
    "configurator",
)

urlpatterns = [
    *[p for p in project_urlpatterns if getattr(p, "namespace", None) != "configurator"],
    path("", include(configurator_patterns)),
]
