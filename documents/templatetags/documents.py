"""``{% load documents %}{% proposal_documents_panel %}``: the proposal-PDF panel of the quote page.

The quote page (``quotes/detail.html``) shows the PDF job's status, its render and retry buttons and
the downloads through this tag, so quotes' Python imports nothing of this app.
"""

from __future__ import annotations

from django import template

from ..views import pdf_panel_context

register = template.Library()


@register.inclusion_tag("quotes/_pdf_status.html", takes_context=True)
def proposal_documents_panel(context) -> dict:
    """The panel of ``context["revision"]`` for the user viewing the page."""
    revision = context.get("revision")
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    return {"revision": revision, **pdf_panel_context(revision, user)}
