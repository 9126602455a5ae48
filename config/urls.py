"""Top-level URL map.  Every view requires log-in except the log-in page, the
language switch, /healthz and /favicon.ico."""

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from accounts.views import set_language
from config.health import healthz
from documents import urls as documents_urls
from quotes import urls as quotes_urls

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico on every page the <link rel="icon"> does not reach (the admin).
    path(
        "favicon.ico",
        login_not_required(lambda request: HttpResponsePermanentRedirect(static("favicon.svg"))),
    ),
    # The language switch also works on the log-in page, before log-in.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    # One ``quotes`` namespace: the quote pages, then the documents of a revision (documents/urls.py),
    # so ``quotes:pdf``, ``quotes:xlsx``, ``quotes:bundle`` … keep their names and paths.
    path("quotes/", include((quotes_urls.urlpatterns + documents_urls.urlpatterns, quotes_urls.app_name))),
    path("", include("configurator.urls")),
]
