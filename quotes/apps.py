from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuotesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "quotes"
    # The admin heads the quotes' models (measured and promoted benchmarks) with the app's name.
    verbose_name = _("Quotes")

    def ready(self) -> None:
        # Issuing a revision renders its proposal PDF from the issued state (issue 13:
        # the issued revision never serves the draft-stamped copy).
        from . import notify
        from .pdf.jobs import on_revision_issued
        from .services.issuing import revision_issued

        revision_issued.connect(on_revision_issued, dispatch_uid="quotes.render_issued_proposal")
        # Notifications: approval requests and decisions (post_save receivers in quotes.notify),
        # and price changes → the owners of the open quotes they touch.
        notify.connect_catalog_signals()
