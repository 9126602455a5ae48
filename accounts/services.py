"""Role set-up and demo users."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction

from . import roles
from .models import Profile, Team

# Which app's permissions each role holds.  Object-level scoping (own quote,
# team's quotes) is enforced in the quotes selectors, not by these.
ROLE_PERMISSION_APPS = {
    roles.SALES_ENGINEER: {"quotes": ("add", "change", "view"), "catalog": ("view",)},
    roles.SALES_MANAGER: {"quotes": ("add", "change", "view", "delete"), "catalog": ("view",)},
    roles.CATALOG_ADMIN: {"catalog": ("add", "change", "delete", "view")},
}
# Model-level exceptions to the app-level grants above.  The performance calibration set is the
# catalog administrator's: it sees the measured benchmarks and promotes (adds), confirms (changes) and
# demotes (deletes) promoted measurements; the sales roles upload benchmarks to their own quotes
# (through the quote page) and hold no permission on promoted measurements.
ROLE_MODEL_PERMISSIONS = {
    roles.CATALOG_ADMIN: {
        "quotes.measuredbenchmark": ("view",),
        "quotes.promotedmeasurement": ("add", "change", "delete", "view"),
    },
}
ROLE_EXCLUDED_MODELS = {
    roles.SALES_ENGINEER: {"quotes.promotedmeasurement"},
    roles.SALES_MANAGER: {"quotes.promotedmeasurement"},
}


def roles_ensure() -> dict[str, Group]:
    """Create the role groups and (re)attach their permissions.  Idempotent."""
    groups = {}
    for role, apps in ROLE_PERMISSION_APPS.items():
        group, _ = Group.objects.get_or_create(name=role)
        perms = []
        excluded = ROLE_EXCLUDED_MODELS.get(role, set())
        for app_label, actions in apps.items():
            for perm in Permission.objects.filter(content_type__app_label=app_label).select_related(
                "content_type"
            ):
                model = f"{app_label}.{perm.content_type.model}"
                if perm.codename.split("_", 1)[0] in actions and model not in excluded:
                    perms.append(perm)
        for model, actions in ROLE_MODEL_PERMISSIONS.get(role, {}).items():
            app_label, model_name = model.split(".")
            perms += Permission.objects.filter(
                content_type__app_label=app_label,
                content_type__model=model_name,
                codename__in=[f"{action}_{model_name}" for action in actions],
            )
        group.permissions.set(perms)
        groups[role] = group
    return groups


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    role: str
    team: str | None
    display_name: str
    first_name: str = ""  # the name the admin greets (Chinese, as the team writes it)


DEMO_USERS = (
    DemoUser(
        "engineer",
        "demo-engineer-2026",
        roles.SALES_ENGINEER,
        "East China",
        "Li Wei (sales engineer)",
        "李伟",
    ),
    DemoUser(
        "engineer2",
        "demo-engineer2-2026",
        roles.SALES_ENGINEER,
        "North China",
        "Zhang Min (sales engineer)",
        "张敏",
    ),
    DemoUser(
        "manager", "demo-manager-2026", roles.SALES_MANAGER, "East China", "Chen Jing (sales manager)", "陈静"
    ),
    DemoUser("catalog", "demo-catalog-2026", roles.CATALOG_ADMIN, None, "Wang Fang (catalog admin)", "王芳"),
)


@transaction.atomic
def demo_users_create() -> list[tuple[DemoUser, bool]]:
    """Create the demo users if missing; returns (user, created) pairs.  Existing
    users keep their passwords."""
    groups = roles_ensure()
    User = get_user_model()
    out = []
    for demo in DEMO_USERS:
        user, created = User.objects.get_or_create(username=demo.username)
        if created:
            user.set_password(demo.password)
        user.is_staff = demo.role == roles.CATALOG_ADMIN
        user.first_name = user.first_name or demo.first_name
        user.save()
        user.groups.add(groups[demo.role])
        team = Team.objects.get_or_create(name=demo.team)[0] if demo.team else None
        Profile.objects.update_or_create(
            user=user, defaults={"team": team, "display_name": demo.display_name}
        )
        out.append((demo, created))
    return out


API_TOKEN_DEFAULT_DAYS = 90
API_TOKEN_MAX_DAYS = 365


def api_token_create(*, user, name: str, expires_on=None) -> str:
    """Create a token for ``user`` and return it; only its SHA-256 is stored, so this is the one
    time anybody sees it.  It expires at the end of ``expires_on`` (a date, at most
    ``API_TOKEN_MAX_DAYS`` ahead; default ``API_TOKEN_DEFAULT_DAYS``)."""
    import datetime as dt
    import hashlib
    import secrets

    from django.core.exceptions import ValidationError
    from django.utils import timezone
    from django.utils.translation import gettext as _

    from .models import ApiToken

    name = (name or "").strip()
    if not name or len(name) > 100 or any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise ValidationError(
            {"name": _("Give the token a name of up to 100 characters (e.g. the laptop it is for).")}
        )
    today = timezone.localdate()
    expires_on = expires_on or today + dt.timedelta(days=API_TOKEN_DEFAULT_DAYS)
    if not today < expires_on <= today + dt.timedelta(days=API_TOKEN_MAX_DAYS):
        raise ValidationError(
            {"expires_on": _("Choose an expiry date after today and at most %(days)s days ahead.")
             % {"days": API_TOKEN_MAX_DAYS}}
        )  # fmt: skip
    end_of_day = dt.datetime.combine(expires_on + dt.timedelta(days=1), dt.time.min)
    token = secrets.token_urlsafe(32)
    ApiToken.objects.create(
        user=user,
        name=name,
        key_sha256=hashlib.sha256(token.encode()).hexdigest(),
        prefix=token[:8],
        expires_at=timezone.make_aware(end_of_day),
    )
    return token


def api_token_revoke(*, user, token_id: int) -> bool:
    """Revoke one of ``user``'s own tokens; False when they have no such live token."""
    from django.utils import timezone

    from .models import ApiToken

    return bool(
        ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def api_token_user(token: str):
    """The active user a live (not expired, not revoked) token belongs to, or None."""
    import hashlib

    from django.utils import timezone

    from .models import ApiToken

    if not token or len(token) > 200:
        return None
    digest = hashlib.sha256(token.encode()).hexdigest()
    row = ApiToken.objects.select_related("user").filter(key_sha256=digest).first()
    now = timezone.now()
    if row is None or not row.user.is_active or not row.is_usable(now):
        return None
    ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row.user


def user_language(user) -> str:
    """The language to write to ``user`` in (notices, e-mails): their last choice in the page's
    switch (``Profile.language``), else the site's (``settings.LANGUAGE_CODE``)."""
    from django.conf import settings

    profile = getattr(user, "profile", None) if user is not None else None  # None: no profile row yet
    return (profile.language if profile is not None else "") or settings.LANGUAGE_CODE
