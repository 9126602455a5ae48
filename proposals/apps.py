from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProposalsConfig(AppConfig):
    """The seller's profile and each quote's commercial terms, as the proposal PDF prints them."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "proposals"
    verbose_name = _("Proposal terms")
