"""Notifications: an in-app list and an e-mail (Django's e-mail backend) for each event.

* a revision needs a discount approval → the sales managers of the quote's team
  (not the quote's owner nor the revision's author: they cannot decide on it);
* a manager decided → the quote's owner and the revision's author;
* the customer accepted or asked a question on the share link → the quote's owner;
* a price item of the price list in force changed → the owner of each open
  (draft or sent) quote whose latest revision bills that SKU at another price,
  with a link to the price-change report (``quotes:price_impact``).

The approval events are caught with ``post_save`` signals (connected in
``QuotesConfig.ready``), so every path that creates a pending revision or an
approval notifies, without touching the services.  The e-mail is sent after
the transaction commits; a failing mail server is logged and never undoes the
change (the in-app notice stays).  Each recipient's notice and e-mail are written in the
language they chose in the page's switch (``Profile.language``; the site's language until they
choose), links are absolute (``SITE_URL``) and times are in the site's time zone with the zone named.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from accounts import roles
from accounts.services import user_language
from accounts.timefmt import local_stamp

from ..models import Approval, QuoteRevision
from ..statuses import ApprovalDecision, ApprovalState
from ..textcheck import one_line
from .models import Notification

logger = logging.getLogger(__name__)


def _absolute(path: str) -> str:
    base = str(getattr(settings, "SITE_URL", "") or "").rstrip("/")
    return f"{base}{path}" if base else path


Composer = Callable[[], tuple[str, str]]


def notify(
    *, recipients: Iterable, kind: str, revision: QuoteRevision, compose: Composer
) -> list[Notification]:
    """Write one notice per distinct active recipient, in that recipient's language (``compose`` is
    called under it and returns the subject and body), and e-mail those with an address (after commit)."""
    seen: set[int] = set()
    created = []
    texts: dict[str, tuple[str, str]] = {}
    for user in recipients:
        if user is None or not user.is_active or user.pk in seen:
            continue
        seen.add(user.pk)
        language = user_language(user)
        if language not in texts:
            with translation.override(language):
                texts[language] = compose()
        subject, body = texts[language]
        # One line: a customer name typed with a line break made the subject a header Django refuses
        # (BadHeaderError), so the manager's approval request was only logged, never sent (issue 27).
        subject = one_line(subject)[:300]
        created.append(
            Notification.objects.create(
                recipient=user,
                kind=kind,
                quote=revision.quote,
                revision=revision,
                subject=one_line(subject)[:300],
                body=body,
            )
        )
    mails = [(n.pk, n.recipient.email, n.subject, n.body) for n in created if n.recipient.email]
    if mails:
        transaction.on_commit(lambda: _send(mails))
    return created


def _send(mails: list[tuple[int, str, str, str]]) -> None:
    for pk, address, subject, body in mails:
        try:
            send_mail(subject[:300], body, None, [address], fail_silently=False)
        except Exception:  # the mail server is down: the in-app notice stays
            logger.exception("Notification e-mail to %s failed", address)
            continue
        Notification.objects.filter(pk=pk).update(emailed=True)


def team_managers(revision: QuoteRevision):
    """Active sales managers of the quote's team who may decide on this revision."""
    team = revision.quote.team
    if team is None:
        return []
    users = (
        get_user_model()
        .objects.filter(is_active=True, profile__team=team, groups__name=roles.SALES_MANAGER)
        .exclude(pk__in=[revision.quote.owner_id, revision.created_by_id])
        .distinct()
    )
    return list(users)


def _quote_link(revision: QuoteRevision) -> str:
    return _absolute(f"{reverse('quotes:detail', args=[revision.quote_id])}?rev={revision.index}")


def approval_requested(revision: QuoteRevision) -> list[Notification]:
    def compose() -> tuple[str, str]:
        subject = _("Discount approval requested: %(number)s (%(customer)s)") % {
            "number": revision.number,
            "customer": revision.quote.customer.name,
        }
        body = _(
            "%(who)s asks for your approval of a discount of %(discount)s on %(number)s "
            "(net total %(total)s %(currency)s).\n\nOpen the quote: %(link)s"
        ) % {
            "who": revision.created_by.get_username(),
            "discount": f"{revision.effective_discount * 100:.2f} %",
            "number": revision.number,
            "total": f"{revision.net_total:,.2f}",
            "currency": revision.currency,
            "link": _quote_link(revision),
        }
        return subject, body

    return notify(
        recipients=team_managers(revision),
        kind=Notification.Kind.APPROVAL_REQUESTED,
        revision=revision,
        compose=compose,
    )


def approval_decided(approval: Approval) -> list[Notification]:
    revision = approval.revision

    def compose() -> tuple[str, str]:
        verdict = _("approved") if approval.decision == ApprovalDecision.APPROVED else _("rejected")
        subject = _("Discount %(verdict)s: %(number)s") % {"verdict": verdict, "number": revision.number}
        body = _("%(who)s %(verdict)s the discount of %(number)s.") % {
            "who": approval.decided_by.get_username(),
            "verdict": verdict,
            "number": revision.number,
        }
        if approval.comment:
            body += "\n\n" + _("Comment: %(comment)s") % {"comment": approval.comment}
        body += "\n\n" + _("Open the quote: %(link)s") % {"link": _quote_link(revision)}
        return subject, body

    return notify(
        recipients=[revision.quote.owner, revision.created_by],
        kind=Notification.Kind.APPROVAL_DECIDED,
        revision=revision,
        compose=compose,
    )


def customer_accepted(acceptance) -> list[Notification]:
    revision = acceptance.revision

    def compose() -> tuple[str, str]:
        subject = _("Accepted by the customer: %(number)s (%(customer)s)") % {
            "number": revision.number,
            "customer": revision.quote.customer.name,
        }
        body = _("%(name)s (%(title)s) accepted %(number)s at %(when)s from %(ip)s.") % {
            "name": acceptance.name,
            "title": acceptance.title,
            "number": revision.number,
            "when": local_stamp(acceptance.accepted_at),
            "ip": acceptance.ip or "?",
        }
        if acceptance.option:
            body += "\n" + _("Option: %(option)s") % {"option": acceptance.option}
        body += "\n\n" + _("Open the quote: %(link)s") % {"link": _quote_link(revision)}
        return subject, body

    return notify(
        recipients=[revision.quote.owner],
        kind=Notification.Kind.CUSTOMER_ACCEPTED,
        revision=revision,
        compose=compose,
    )


def customer_question(question) -> list[Notification]:
    revision = question.revision

    def compose() -> tuple[str, str]:
        subject = _("Question from the customer on %(number)s (%(customer)s)") % {
            "number": revision.number,
            "customer": revision.quote.customer.name,
        }
        body = _("%(name)s (%(contact)s) asks:") % {
            "name": question.name,
            "contact": question.contact or "—",
        }
        body += (
            "\n\n" + question.text + "\n\n" + _("Open the quote: %(link)s") % {"link": _quote_link(revision)}
        )
        return subject, body

    return notify(
        recipients=[revision.quote.owner],
        kind=Notification.Kind.CUSTOMER_QUESTION,
        revision=revision,
        compose=compose,
    )


@receiver(post_save, sender=QuoteRevision, dispatch_uid="quotes.workflow.notify.revision_saved")
def _revision_saved(sender, instance: QuoteRevision, created: bool, raw: bool = False, **kwargs):
    if created and not raw and instance.approval_state == ApprovalState.PENDING:
        approval_requested(instance)


@receiver(post_save, sender=Approval, dispatch_uid="quotes.workflow.notify.approval_saved")
def _approval_saved(sender, instance: Approval, created: bool, raw: bool = False, **kwargs):
    if created and not raw:
        approval_decided(instance)


def price_changed(item) -> list[Notification]:
    """Tell the owners of open quotes billing ``item.sku`` at another price than the list now says."""
    from catalog.selectors import price_list_in_force

    from ..models import BomLine
    from ..statuses import QuoteStatus

    price_list = item.price_list
    if price_list_in_force(price_list.currency) != price_list:
        return []  # a past or future list: open quotes are priced from the one in force
    lines = (
        BomLine.objects.filter(
            sku=item.sku,
            currency=price_list.currency,
            revision__quote__status__in=[QuoteStatus.DRAFT, QuoteStatus.SENT],
        )
        .exclude(unit_price=item.unit_price)
        .select_related("revision", "revision__quote", "revision__quote__owner", "revision__quote__customer")
    )
    created = []
    for line in lines:
        revision = line.revision
        if revision.quote.revisions.order_by("-index").values_list("pk", flat=True).first() != revision.pk:
            continue  # only the latest revision of a quote is open

        def compose(revision=revision, line=line) -> tuple[str, str]:
            subject = _("Price change affects %(number)s: %(sku)s %(old)s → %(new)s") % {
                "number": revision.number,
                "sku": item.sku,
                "old": f"{line.unit_price:,.2f}",
                "new": f"{item.unit_price:,.2f}",
            }
            body = _(
                "The price list now prices %(sku)s at %(new)s %(currency)s; %(number)s uses %(old)s. "
                "Issued revisions keep their prices; re-plan to make a new draft revision at the new price."
                "\n\nPrice-change report: %(link)s"
            ) % {
                "sku": item.sku,
                "new": f"{item.unit_price:,.2f}",
                "currency": price_list.currency,
                "number": revision.number,
                "old": f"{line.unit_price:,.2f}",
                "link": _absolute(reverse("quotes:price_impact")),
            }
            return subject, body

        created += notify(
            recipients=[revision.quote.owner],
            kind=Notification.Kind.PRICE_CHANGED,
            revision=revision,
            compose=compose,
        )
    return created


def _price_item_saving(sender, instance, raw: bool = False, **kwargs):
    """Remember the prices a price item had before this save (``_price_item_saved`` compares)."""
    if raw or instance.pk is None:
        return
    instance._prices_before = (
        type(instance).objects.filter(pk=instance.pk).values_list("unit_price", "lease_per_month").first()
    )


def _price_item_saved(sender, instance, created: bool, raw: bool = False, **kwargs):
    if raw:
        return
    if getattr(instance, "_unchanged_copy", False):
        return  # an unchanged item copied into a new version of its list (catalog/price_versions.py)
    before = getattr(instance, "_prices_before", None)
    if not created and before is not None and before == (instance.unit_price, instance.lease_per_month):
        return  # only the description, SKU text or source changed: no price changed (issue 27, finding 12)
    item_pk = instance.pk
    # After the admin's transaction commits (the price is then the one in force).

    def later():
        from catalog.models import PriceItem

        item = PriceItem.objects.select_related("price_list").filter(pk=item_pk).first()
        if item is not None:
            price_changed(item)

    transaction.on_commit(later)


def connect_catalog_signals() -> None:
    from catalog.models import PriceItem

    pre_save.connect(
        _price_item_saving, sender=PriceItem, dispatch_uid="quotes.workflow.notify.price_item_saving"
    )
    post_save.connect(
        _price_item_saved, sender=PriceItem, dispatch_uid="quotes.workflow.notify.price_item_saved"
    )
