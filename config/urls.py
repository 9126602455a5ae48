"""Top-level URL map.  Every view requires log-in except the login page and /healthz."""

from django.contrib import admin
from django.urls import include, path

from config.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("quotes/", include("quotes.urls")),
    path("", include("configurator.urls")),
]
