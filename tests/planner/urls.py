"""The project's URLs with the auto-planner mounted inside the configurator namespace,
as ``configurator/urls.py`` will include it (``path("", include("configurator.web.planner.urls"))``)."""

from django.urls import include, path

import configurator.urls
import configurator.web.planner.urls
from config.urls import urlpatterns as project_urlpatterns

configurator_patterns = (
    [*configurator.urls.urlpatterns, *configurator.web.planner.urls.urlpatterns],
    "configurator",
)

urlpatterns = [
    *[p for p in project_urlpatterns if getattr(p, "namespace", None) != "configurator"],
    path("", include(configurator_patterns)),
]
