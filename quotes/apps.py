from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuotesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "quotes"
    # The admin heads the quotes' models (measured and promoted benchmarks) with the app's name.
    verbose_name = _("Quotes")

    def ready(self) -> None:
        # Issuing a revision renders its proposal PDF: the documents app connects to
        # ``services.issuing.revision_issued`` (documents/apps.py).
        from .workflow import notify

        # Notifications: approval requests and decisions (post_save receivers in quotes.workflow.notify),
        # and price changes → the owners of the open quotes they touch.
        notify.connect_catalog_signals()
