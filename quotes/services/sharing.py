"""Customer share links: create, revoke, resolve and log a link; the customer's acceptance and
questions through it.

Moved here from the sales workflow (``quotes/workflow/changes.py``): every state change of a quote is a service, in one
transaction with its audit row.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.dispatch import Signal
from django.http import Http404
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from configurator.public import is_zh

from ..frozen import revision_quote
from ..models import QuoteRevision
from ..statuses import AuditAction, PdfStatus, QuoteStatus, RevisionStatus
from ..textcheck import control_chars
from ..workflow import notify
from ..workflow.models import CustomerAcceptance, CustomerQuestion, ShareLink, ShareView, token_digest
from .base import audit, quote_lock, require_edit
from .transitions import transition_locked

logger = logging.getLogger(__name__)

# Sent when a customer link is created for a revision whose proposal PDF is neither stored nor on
# its way, with ``revision`` and ``by``: the documents app connects here to render it (from its
# AppConfig.ready(), so it is registered in every process; quotes imports nothing of documents).
proposal_pdf_wanted = Signal()

QUESTIONS_PER_LINK_PER_HOUR = 10


# --------------------------------------------------------------------------- customer share links


def share_create(*, revision: QuoteRevision, by, days: int | None = None) -> tuple[ShareLink, str]:
    """A new customer link to ``revision``; returns the link and its token (shown once, never stored).

    Only an issued revision is shared (the customer sees what is frozen).  The
    latest revision of a draft quote is sent first (which issues it, after the
    same approval and validity checks as "Send to customer").
    """
    with transaction.atomic():
        quote = quote_lock(revision.quote, None)
        require_edit(by, quote)
        current = QuoteRevision.objects.get(pk=revision.pk)
        latest = quote.revisions.order_by("-index").first()
        is_latest = latest is not None and latest.pk == current.pk
        if current.status == RevisionStatus.DRAFT and not (is_latest and quote.status == QuoteStatus.DRAFT):
            raise ValidationError(
                _("Only an issued revision can be shared with the customer; issue %(number)s first.")
                % {"number": current.number}
            )
        if is_latest and quote.status == QuoteStatus.DRAFT:
            # Sharing the latest revision sends the quote (issuing it first if it is a draft),
            # with the same approval and validity checks as "Send to customer".
            transition_locked(quote=quote, to_status=QuoteStatus.SENT, by=by, comment="")
            current.refresh_from_db()
        token = secrets.token_urlsafe(32)
        lifetime = days if days is not None else settings.QUOTE_SHARE_DAYS
        if not 1 <= int(lifetime) <= 365:
            raise ValidationError({"days": _("A link lasts between 1 and 365 days.")})
        link = ShareLink.objects.create(
            revision=current,
            token_sha256=token_digest(token),
            created_by=by,
            expires_at=timezone.now() + dt.timedelta(days=int(lifetime)),
        )
        audit(
            actor=by,
            action=AuditAction.SHARE_CREATED,
            obj=link,
            quote=quote,
            detail={"number": current.number, "expires_at": link.expires_at},
        )
    _queue_pdf(current, by)
    return link, token


def _queue_pdf(revision: QuoteRevision, by) -> None:
    """Make sure the proposal PDF the customer will download is on its way.

    Issuing renders it already (``issuing.revision_issued`` → ``documents.pdf.jobs.on_revision_issued``);
    this covers a revision issued before that: :data:`proposal_pdf_wanted` asks the documents app to
    render it as the system (the link is no engineer's render).  A refusal (e.g. too large to
    render) leaves the link working: the customer page says the document is being prepared.
    """
    current = QuoteRevision.objects.get(pk=revision.pk)
    if current.pdf_status in (PdfStatus.READY, PdfStatus.QUEUED, PdfStatus.RENDERING):
        return
    proposal_pdf_wanted.send(sender=QuoteRevision, revision=current, by=by)


def share_revoke(*, link: ShareLink, by) -> ShareLink:
    with transaction.atomic():
        quote = quote_lock(link.revision.quote, None)
        require_edit(by, quote)
        locked = ShareLink.objects.select_for_update().get(pk=link.pk)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.revoked_by = by
            locked.save(update_fields=["revoked_at", "revoked_by"])
            audit(
                actor=by,
                action=AuditAction.SHARE_REVOKED,
                obj=locked,
                quote=quote,
                detail={"number": link.revision.number},
            )
    return locked


def share_resolve(token: str) -> ShareLink:
    """The active link of a token, else 404 (unknown, revoked and expired links look alike)."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise Http404("No such link.")
    link = (
        ShareLink.objects.select_related("revision", "revision__quote", "revision__quote__customer")
        .filter(token_sha256=token_digest(token))
        .first()
    )
    if link is None or not link.is_active:
        raise Http404("No such link.")
    return link


def client_ip(request) -> str | None:
    """The client's address by the same trusted-proxy rule as log-in (``accounts.client_ip``):
    behind the proxies named in ``TRUSTED_PROXIES`` the client the nearest proxy saw, else
    REMOTE_ADDR.  None when neither is an address (the field stores addresses only)."""
    from accounts.client_ip import client_ip as trusted_client_ip

    address = trusted_client_ip(request)
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return None
    return address


def share_log(*, link: ShareLink, request, what: str) -> ShareView:
    return ShareView.objects.create(
        link=link,
        what=what,
        ip=client_ip(request),
        user_agent=str(request.META.get("HTTP_USER_AGENT", ""))[:300],
    )


def acceptance_refusal(link: ShareLink) -> str:
    """Why the customer cannot accept through this link now ('' when they can)."""
    revision, quote = link.revision, link.revision.quote
    if hasattr(revision, "customer_acceptance"):
        return _("This offer was accepted on %(date)s.") % {
            "date": revision.customer_acceptance.accepted_at.strftime("%Y-%m-%d")
        }
    latest = quote.revisions.aggregate(top=Max("index"))["top"]
    if revision.index != latest:
        return _("This offer has been replaced by a newer one; please ask your contact for it.")
    if quote.status != QuoteStatus.SENT:
        return _("This offer cannot be accepted online any more; please contact us.")
    if revision.lines_withholding_the_total:
        return _(
            "This offer has items priced on request (%(items)s); it can be accepted once they are priced."
        ) % {
            "items": ", ".join(
                line.description_in(zh=is_zh(get_language())) for line in revision.lines_withholding_the_total
            )
        }
    valid_until = revision_quote(revision).valid_until  # the validity the offer was issued with
    if valid_until < timezone.localdate():
        return _("This offer expired on %(date)s; please ask your contact for a new one.") % {
            "date": valid_until.isoformat()
        }
    return ""


def _clean_text(
    value: Any, field: str, label: str, *, required: bool, max_length: int, multiline: bool = False
) -> str:
    text = str(value or "").strip()
    if required and not text:
        raise ValidationError({field: _("Please enter your %(what)s.") % {"what": label}})
    if len(text) > max_length:
        raise ValidationError({field: _("At most %(n)s characters, please.") % {"n": max_length}})
    # One line for a name or a title (they are printed in the audit trail, the notice and the
    # acceptance statement); a question may have line breaks.  Control characters, bidi
    # overrides (U+202E …) and line separators are refused either way, as the catalog does.
    allowed = "\n\t" if multiline else ""
    bad = control_chars("".join(ch for ch in text if ch not in allowed))
    if bad:
        raise ValidationError(
            {
                field: _("Please remove the control or text-direction characters (%(chars)s).")
                % {"chars": ", ".join(bad[:5])}
            }
        )
    return text


OPTION_LETTERS = "ABC"  # the quoted configuration (A) and at most two options (proposals.options)


def offered_options(revision) -> list[str]:
    """The options the proposal of ``revision`` offers, as it labels them ("Option A" …): none when
    the quote has no alternatives (the quoted configuration is the offer)."""
    count = revision.quote.options.count()  # proposals.ProposalOption (related name "options")
    if not count:
        return []
    return [_("Option %(letter)s") % {"letter": letter} for letter in OPTION_LETTERS[: 1 + min(count, 2)]]


def accepted_option(revision, option: str) -> str:
    """The offered option the customer named ("B", "Option B", "方案 B"), as the proposal labels it;
    refused (``option``) when it is not one of the revision's options, or when there are none."""
    if not option:
        return ""
    offered = offered_options(revision)
    if not offered:
        raise ValidationError(
            {"option": _("This offer has no options to choose from; leave the option empty.")}
        )
    key = "".join(option.split()).upper()
    for letter, label in zip(OPTION_LETTERS, offered, strict=False):
        if key in (letter, f"OPTION{letter}", "".join(label.split()).upper()):
            return label
    raise ValidationError(
        {"option": _("Choose one of the options offered: %(options)s.") % {"options": ", ".join(offered)}}
    )


def customer_accept(
    *, link: ShareLink, request, name: str, title: str, option: str = "", confirmed: bool = False
) -> CustomerAcceptance:
    """Record the customer's acceptance (name, title, time, IP, confirmation) and mark the quote accepted."""
    name = _clean_text(name, "name", _("name"), required=True, max_length=200)
    title = _clean_text(title, "title", _("job title"), required=True, max_length=200)
    option = _clean_text(option, "option", _("option"), required=False, max_length=200)
    if not confirmed:
        raise ValidationError({"confirm": _("Please tick the box to confirm the acceptance.")})
    with transaction.atomic():
        quote = quote_lock(link.revision.quote, None)
        link = ShareLink.objects.select_for_update().select_related("revision").get(pk=link.pk)
        link.revision.quote = quote
        if not link.is_active:
            raise Http404("No such link.")
        refusal = acceptance_refusal(link)
        if refusal:
            raise ValidationError(refusal)
        revision = link.revision
        option = accepted_option(revision, option)
        statement = _(
            "I, %(name)s (%(title)s), accept offer %(number)s of %(date)s for %(customer)s: "
            "net total %(total)s %(currency)s%(option)s."
        ) % {
            "name": name,
            "title": title,
            "number": revision.number,
            "date": (revision.issued_at or revision.created_at).strftime("%Y-%m-%d"),
            "customer": revision_quote(revision).customer.name,
            "total": f"{revision.net_total:,.2f}",
            "currency": revision.currency,
            "option": f" ({option})" if option else "",
        }
        acceptance = CustomerAcceptance.objects.create(
            revision=revision,
            link=link,
            name=name,
            title=title,
            option=option,
            confirmation=statement,
            ip=client_ip(request),
            user_agent=str(request.META.get("HTTP_USER_AGENT", ""))[:300],
        )
        share_log(link=link, request=request, what=ShareView.What.ACCEPT)
        audit(
            actor=None,
            action=AuditAction.CUSTOMER_ACCEPTED,
            obj=acceptance,
            quote=quote,
            detail={
                "number": revision.number,
                "name": name,
                "title": title,
                "option": option,
                "ip": acceptance.ip,
                "confirmation": statement,
            },
        )
        transition_locked(
            quote=quote, to_status=QuoteStatus.ACCEPTED, by=None, comment=f"accepted by {name} ({title})"
        )
        notify.customer_accepted(acceptance)
    return acceptance


def customer_ask(*, link: ShareLink, request, name: str, contact: str, text: str) -> CustomerQuestion:
    """Record a question from the share page and pass it to the quote's owner."""
    name = _clean_text(name, "name", _("name"), required=True, max_length=200)
    contact = _clean_text(contact, "contact", _("e-mail or phone"), required=False, max_length=200)
    text = _clean_text(text, "text", _("question"), required=True, max_length=4000, multiline=True)
    with transaction.atomic():
        # Counted per revision (a new link to the same offer does not start again) under the
        # revision's row lock, so parallel posts are counted one after the other.
        QuoteRevision.objects.select_for_update().filter(pk=link.revision_id).first()
        recent = CustomerQuestion.objects.filter(
            revision_id=link.revision_id, asked_at__gte=timezone.now() - dt.timedelta(hours=1)
        )
        if recent.count() >= QUESTIONS_PER_LINK_PER_HOUR:  # a link is no way to flood an engineer's inbox
            raise ValidationError(
                _(
                    "Many questions were sent about this offer in the last hour; please write to your contact directly."
                )
            )
        question = CustomerQuestion.objects.create(
            revision=link.revision, link=link, name=name, contact=contact, text=text, ip=client_ip(request)
        )
        share_log(link=link, request=request, what=ShareView.What.QUESTION)
        audit(
            actor=None,
            action=AuditAction.CUSTOMER_QUESTION,
            obj=question,
            quote=link.revision.quote,
            detail={"number": link.revision.number, "name": name, "contact": contact},
        )
        notify.customer_question(question)
    return question
