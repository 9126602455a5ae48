"""Teams and the user's place in one.

Roles are Django groups (see ``accounts.roles``); a team scopes which quotes a
sales engineer or manager may see.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Team(models.Model):
    """A sales team.  Engineers see their own quotes and their team's (read-only);
    managers see and approve their team's."""

    name = models.CharField(_("name"), max_length=100, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("team")
        verbose_name_plural = _("teams")

    def __str__(self) -> str:
        return self.name


class Profile(models.Model):
    """Per-user settings: team and preferred language."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, null=True, blank=True, related_name="members")
    display_name = models.CharField(_("display name"), max_length=100, blank=True)
    #: The language the user last chose in the page's switch: notices and e-mails are written in it
    #: (blank: the site's language, ``settings.LANGUAGE_CODE``).
    language = models.CharField(_("language"), max_length=10, choices=settings.LANGUAGES, blank=True)

    class Meta:
        ordering = ["user__username"]
        verbose_name = _("profile")
        verbose_name_plural = _("profiles")

    def __str__(self) -> str:
        return self.display_name or self.user.get_username()


class ApiToken(models.Model):
    """A per-user token for the JSON API (``Authorization: Bearer <token>``).

    Only the SHA-256 of the token is stored; the token itself is shown once
    when it is created.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(_("name"), max_length=100)
    key_sha256 = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters of the token, shown in the list so its owner can tell tokens apart.
    prefix = models.CharField(_("starts with"), max_length=12, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        ordering = ["user__username", "name"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.user} / {self.name}"

    def is_usable(self, now=None) -> bool:
        """Not revoked and not expired (a token without an expiry date is one made before they existed)."""
        from django.utils import timezone

        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)
