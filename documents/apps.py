from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DocumentsConfig(AppConfig):
    """The proposal PDF, the workbook and the launch bundle of a quote's revisions."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "documents"
    verbose_name = _("Documents")

    def ready(self) -> None:
        # quotes sends its signals without knowing who renders: issuing a revision renders its
        # proposal PDF from the issued state (the issued revision never serves the draft-stamped
        # copy), and a customer link asks for the PDF it will serve.
        from quotes.services.issuing import revision_issued
        from quotes.services.sharing import proposal_pdf_wanted

        from .pdf.jobs import on_proposal_pdf_wanted, on_revision_issued

        revision_issued.connect(on_revision_issued, dispatch_uid="documents.render_issued_proposal")
        proposal_pdf_wanted.connect(on_proposal_pdf_wanted, dispatch_uid="documents.render_shared_proposal")
