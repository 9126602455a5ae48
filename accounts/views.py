from django import forms
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from . import roles
from .models import ApiToken
from .services import API_TOKEN_DEFAULT_DAYS, api_token_create, api_token_revoke


class LoginView(auth_views.LoginView):
    """Django's log-in view with our template; redirects signed-in users home."""

    template_name = "registration/login.html"
    redirect_authenticated_user = True


class ApiTokenForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=100)
    expires_on = forms.DateField(
        label=gettext_lazy("Expires on"), widget=forms.DateInput(attrs={"type": "date"}), required=False
    )


def _tokens_page(request, form, *, new_token: str = "", status: int = 200):
    tokens = ApiToken.objects.filter(user=request.user).order_by("-created_at", "-id")
    now = timezone.now()
    rows = [
        {
            "token": t,
            "state": (
                _("revoked") if t.revoked_at else _("expired") if not t.is_usable(now) else _("active")
            ),
            "live": t.is_usable(now),
        }
        for t in tokens
    ]
    response = render(
        request,
        "accounts/api_tokens.html",
        {"form": form, "rows": rows, "new_token": new_token, "default_days": API_TOKEN_DEFAULT_DAYS},
        status=status,
    )
    response["Cache-Control"] = "no-store"  # the new token is on this page once; never cache it
    return response


@never_cache
@require_http_methods(["GET", "POST"])
def api_tokens(request):
    """The user's API tokens: create one (shown once), see when each was used, expires, revoke it."""
    _require_api_user(request.user)
    if request.method == "POST":
        form = ApiTokenForm(request.POST)
        if form.is_valid():
            try:
                token = api_token_create(
                    user=request.user,
                    name=form.cleaned_data["name"],
                    expires_on=form.cleaned_data["expires_on"],
                )
            except ValidationError as exc:
                for field, errors in exc.error_dict.items():
                    for error in errors:
                        form.add_error(field if field in form.fields else None, error)
            else:
                return _tokens_page(request, ApiTokenForm(), new_token=token)
        return _tokens_page(request, form, status=400)
    return _tokens_page(request, ApiTokenForm())


@require_POST
def api_token_revoke_view(request, pk: int):
    _require_api_user(request.user)
    get_object_or_404(ApiToken, pk=pk, user=request.user)  # someone else's token: 404, never 403
    if api_token_revoke(user=request.user, token_id=pk):
        messages.success(request, _("The token is revoked; requests with it are refused from now on."))
    return redirect("api_tokens")


def set_language(request):
    """Django's language switch, remembered for a signed-in user: the notices and e-mails they
    receive are then written in the language they read the site in (``Profile.language``)."""
    from django.conf import settings
    from django.views.i18n import set_language as django_set_language

    from .models import Profile

    response = django_set_language(request)
    code = request.POST.get("language", "")
    if request.method == "POST" and request.user.is_authenticated and code in dict(settings.LANGUAGES):
        Profile.objects.update_or_create(user=request.user, defaults={"language": code})
    return response


def _require_api_user(user) -> None:
    """API tokens call the planning API, which is the sales roles' (configurator/api); the catalog
    administrator works in the admin and has no use for one."""
    if not (roles.is_sales(user) or user.is_superuser):
        raise PermissionDenied(_("API tokens are for the sales roles, who use the planning API."))
