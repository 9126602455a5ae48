"""Strings of Django's own admin templates that its Chinese catalogue lacks (Django 5.x's accessible
table headers of the admin index), marked here so that ``makemessages`` puts them in the project's
catalogue and the Chinese admin shows no English (issue 31)."""

from django.utils.translation import gettext_noop

ADMIN_STRINGS = (
    gettext_noop("Model name"),
    gettext_noop("Add link"),
    gettext_noop("Change or view list link"),
)
