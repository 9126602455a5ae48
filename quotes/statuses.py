"""Quote status pipeline, revision states and approval states, declared as data.

``TRANSITIONS`` is the only place that says which status may follow which;
``quotes.services.transitions.quote_transition`` enforces it and the detail page offers
exactly the transitions listed here.  Adding a status means adding a row here
(and a migration for the choices), not editing the service.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models
from django.utils.translation import gettext_lazy as _


class QuoteStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    SENT = "sent", _("Sent")
    ACCEPTED = "accepted", _("Accepted")
    WON = "won", _("Won")
    LOST = "lost", _("Lost")
    EXPIRED = "expired", _("Expired")


@dataclass(frozen=True)
class Transition:
    """One allowed move of the pipeline, with the label of its button."""

    source: str
    target: str
    label: str
    needs_comment: bool = False


# draft → sent → won / lost / expired.  A sent or expired quote goes back to
# draft when a new revision is made from it (the customer asked for a change);
# won and lost are final.  A customer's acceptance on the share link moves a
# sent quote to accepted (then won or lost).
TRANSITIONS: tuple[Transition, ...] = (
    Transition(QuoteStatus.DRAFT, QuoteStatus.SENT, _("Send to customer")),
    Transition(QuoteStatus.SENT, QuoteStatus.WON, _("Mark as won")),
    Transition(QuoteStatus.SENT, QuoteStatus.LOST, _("Mark as lost"), needs_comment=True),
    Transition(QuoteStatus.SENT, QuoteStatus.EXPIRED, _("Mark as expired")),
    # The customer accepts on the share link (quotes.share); the order then wins or falls through.
    Transition(QuoteStatus.SENT, QuoteStatus.ACCEPTED, _("Mark as accepted")),
    Transition(QuoteStatus.ACCEPTED, QuoteStatus.WON, _("Mark as won")),
    Transition(QuoteStatus.ACCEPTED, QuoteStatus.LOST, _("Mark as lost"), needs_comment=True),
    Transition(QuoteStatus.SENT, QuoteStatus.DRAFT, _("Reopen for revision")),
    Transition(QuoteStatus.EXPIRED, QuoteStatus.DRAFT, _("Reopen for revision")),
)

# Statuses in which no new revision may be made and nothing changes any more
# (an accepted quote only moves on to won or lost: the customer signed what it saw).
CLOSED_STATUSES = frozenset({QuoteStatus.WON, QuoteStatus.LOST, QuoteStatus.ACCEPTED})


def allowed_targets(source: str) -> tuple[str, ...]:
    """Statuses reachable from ``source`` in one step, in table order."""
    return tuple(t.target for t in TRANSITIONS if t.source == source)


def transition_for(source: str, target: str) -> Transition | None:
    """The table row for ``source → target``, or None when it is not allowed."""
    for t in TRANSITIONS:
        if t.source == source and t.target == target:
            return t
    return None


class RevisionStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    ISSUED = "issued", _("Issued")


class ApprovalState(models.TextChoices):
    NOT_NEEDED = "not_needed", _("Not needed")
    PENDING = "pending", _("Pending approval")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


class ApprovalDecision(models.TextChoices):
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


class PdfStatus(models.TextChoices):
    NONE = "none", _("Not rendered")
    QUEUED = "queued", _("Queued")
    RENDERING = "rendering", _("Rendering")
    READY = "ready", _("Ready")
    FAILED = "failed", _("Failed")


class BomCategory(models.TextChoices):
    SERVER = "server", _("Servers")
    SWITCH = "switch", _("Switches")
    OPTICS = "optics", _("Optics and cables")
    RACK = "rack", _("Racks and PDUs")
    SOFTWARE = "software", _("Software and support")
    INSTALL = "install", _("Installation")
    OM = "om", _("Operations and maintenance")
    LEASE = "lease", _("Lease")
    OTHER = "other", _("Other")


# Notes of a BOM line that has no price to print (quotes.bom): a price nobody has published for this
# market is quoted on request (stored at 0 so that no total counts it; never printed as 0), and
# open-source or free-of-charge software has no licence fee.  The strings are msgids (quotes.bom marks them).
PRICE_ON_REQUEST_NOTE = "Price on request"
NO_FEE_NOTE = "No licence fee"


# The lines whose price the plan's cost of ownership needs (configurator.engine.tco: servers, switches,
# optics, racks): one priced on request withholds the TCO, so the offer is no firm total until it is
# priced (approval to send it, no acceptance).  Added NIC cards and software licences on request are
# printed as such and excluded from the totals, without blocking the offer.
FIRM_TOTAL_CATEGORIES = frozenset({"server", "switch", "optics", "rack"})


# One-time purchase categories: what capex is made of.
CAPEX_CATEGORIES = frozenset(
    {
        BomCategory.SERVER,
        BomCategory.SWITCH,
        BomCategory.OPTICS,
        BomCategory.RACK,
        BomCategory.INSTALL,
        BomCategory.OTHER,
    }
)


class Language(models.TextChoices):
    """The proposal's language."""

    ZH_HANS = "zh-hans", "简体中文"
    EN = "en", "English"


class AuditAction(models.TextChoices):
    CUSTOMER_CREATED = "customer.created", _("Customer created")
    QUOTE_CREATED = "quote.created", _("Quote created")
    QUOTE_UPDATED = "quote.updated", _("Quote updated")
    QUOTE_TRANSITION = "quote.transition", _("Status changed")
    REVISION_CREATED = "revision.created", _("Revision created")
    REVISION_ISSUED = "revision.issued", _("Revision issued")
    REVISION_APPROVED = "revision.approved", _("Discount approved")
    REVISION_REJECTED = "revision.rejected", _("Discount rejected")
    PDF_QUEUED = "revision.pdf_queued", _("Proposal PDF queued")
    PDF_RENDERED = "revision.pdf_rendered", _("Proposal PDF rendered")
    PDF_FAILED = "revision.pdf_failed", _("Proposal PDF failed")
    QUOTE_CLONED = "quote.cloned", _("Quote cloned")
    SHARE_CREATED = "share.created", _("Customer link created")
    SHARE_REVOKED = "share.revoked", _("Customer link revoked")
    CUSTOMER_ACCEPTED = "customer.accepted", _("Accepted by the customer")
    CUSTOMER_QUESTION = "customer.question", _("Question from the customer")
