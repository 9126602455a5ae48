"""``manage.py proposal REQUEST.json OUT.pdf``: the proposal PDF of a plan request, without saving a quote;
``manage.py proposal --quote Q-2026-0001 --revision 2 OUT.pdf``: the proposal of a saved revision.

A saved revision is rendered as the PDF job renders it (``documents.pdf.render_proposal_pdf``, in the
quote's language unless ``--language`` says otherwise): an issued revision carries no draft stamp,
and when its issued PDF is stored, the customer edition written is that document, byte for byte
(rendering is deterministic, so a fresh render gives the same bytes unless the seller profile or
the terms were edited since; then the stored document of record wins and the command says so).

The request is planned on the server exactly as the configurator's "create
quote" does (``quotes.services.planning.configuration_plan``), a quote and its first
revision are built by ``quotes.services.quotes.quote_create_from_configuration`` and
rendered by ``documents.pdf.render_proposal_pdf`` — the same code as a quote's
PDF — inside a transaction that is then rolled back, so nothing is saved
(no quote, no customer, no quote number used).

Bad input (a missing or unreadable file, invalid JSON, a request the planner
refuses) ends with a one-line message and exit status 1, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import translation

from proposals.models import ProposalOption, SellerProfile
from proposals.options import option_add
from quotes.statuses import Language

MAX_REQUEST_BYTES = 1_000_000


class _Rollback(Exception):
    """Raised to leave the transaction without saving anything."""


class Command(BaseCommand):
    help = "Render the proposal PDF of a configuration request (JSON) without saving a quote."

    def add_arguments(self, parser):
        parser.add_argument(
            "request",
            nargs="?",
            default="",
            help="configuration request, JSON (as the configurator posts it); with --quote, the output",
        )
        parser.add_argument("output", nargs="?", default="", help="where to write the PDF")
        parser.add_argument("--quote", default="", metavar="Q-YYYY-NNNN", help="a saved quote's number")
        parser.add_argument(
            "--revision", type=int, default=0, metavar="N", help="its revision (default: the latest)"
        )
        parser.add_argument("--language", choices=list(Language.values), default=None)
        parser.add_argument("--edition", choices=["customer", "internal"], default="customer")
        parser.add_argument(
            "--customer", default="", help="customer name on the cover and the signature page"
        )
        parser.add_argument("--title", default="", help="proposal title (default: model on server)")
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            metavar="REQUEST.json",
            help="an alternative configuration to compare (good/better/best); at most two",
        )
        parser.add_argument(
            "--recommend",
            type=int,
            choices=[1, 2, 3],
            default=1,
            help="which configuration is recommended: 1 the main request, 2 and 3 the options in order",
        )

    def handle(self, *args, **options):
        from documents.pdf import render_proposal_pdf
        from quotes.services.planning import PlanningUnavailable, configuration_plan
        from quotes.services.quotes import quote_create_from_configuration

        if options["quote"]:
            return self._saved(options)
        if options["revision"]:
            raise CommandError("--revision needs --quote")
        if not options["request"] or not options["output"]:
            raise CommandError("give a request file and an output file, or --quote with an output file")
        options["language"] = options["language"] or Language.ZH_HANS
        request_json = self._read_request(Path(options["request"]))
        if len(options["option"]) > ProposalOption.MAX_OPTIONS:
            raise CommandError(f"at most {ProposalOption.MAX_OPTIONS} --option requests")
        if options["recommend"] > 1 + len(options["option"]):
            raise CommandError(
                f"--recommend {options['recommend']}: there are only {1 + len(options['option'])}"
            )
        option_requests = [self._read_request(Path(path)) for path in options["option"]]
        output = Path(options["output"])
        if not output.parent.is_dir():
            raise CommandError(f"{output.parent}: no such directory for the PDF")
        customer = options["customer"].strip() or (
            "客户" if options["language"] == Language.ZH_HANS else "Customer"
        )
        try:
            # the planner's messages in the proposal's language, its header and its findings alike
            with translation.override(options["language"]):
                planned = configuration_plan(request_json)
        except ValidationError as exc:
            raise CommandError("the request cannot be planned: " + " ".join(_messages(exc))) from None
        except PlanningUnavailable as exc:
            raise CommandError(str(exc)) from None

        pdf = b""
        try:
            with transaction.atomic():
                seller = SellerProfile.current()
                author = get_user_model().objects.create(
                    username="proposal-cli",
                    first_name=(seller.contact_name if seller else "") or "—",
                    is_superuser=True,
                )
                quote = quote_create_from_configuration(
                    by=author,
                    customer=customer,
                    request_json=planned.request_json,
                    resolved_json=planned.resolved_json,
                    result_json=planned.result_json,
                    prices_json=planned.prices_json,
                    usd_rate=planned.usd_rate,
                    currency=planned.currency,
                    language=options["language"],
                    title=options["title"],
                    discount=_planned_discount(planned.resolved_json),
                )
                for number, option_request in enumerate(option_requests, start=2):
                    try:
                        with translation.override(options["language"]):
                            option_add(
                                quote=quote,
                                request_json=option_request,
                                recommended=options["recommend"] == number,
                            )
                    except ValidationError as exc:
                        raise CommandError(
                            f"option {number - 1} cannot be planned: " + " ".join(_messages(exc))
                        ) from None
                revision = quote.revisions.order_by("index").first()
                pdf = _render(
                    render_proposal_pdf, revision, lang=options["language"], edition=options["edition"]
                )
                raise _Rollback
        except _Rollback:
            pass
        except ValidationError as exc:
            raise CommandError("the proposal cannot be built: " + "; ".join(_messages(exc))) from None
        try:
            output.write_bytes(pdf)
        except OSError as exc:
            raise CommandError(f"{output}: {exc.strerror or exc}") from None
        self.stdout.write(
            f"{output}: {len(pdf):,} bytes, {options['edition']} edition, {options['language']}"
        )

    def _saved(self, options) -> None:
        """Write the proposal of a saved quote's revision (the issued document, when there is one)."""
        from documents.pdf import render_proposal_pdf
        from quotes.models import Quote, QuoteRevision
        from quotes.services.pdf import pdf_file_present
        from quotes.statuses import RevisionStatus

        if options["option"]:
            raise CommandError("--option plans a new request; a saved quote keeps its own options")
        output = Path(options["output"] or options["request"] or "")
        if not str(output) or str(output) == ".":
            raise CommandError("give the file to write the PDF to")
        if not output.parent.is_dir():
            raise CommandError(f"{output.parent}: no such directory for the PDF")
        quote = Quote.objects.filter(number=options["quote"].strip()).first()
        if quote is None:
            raise CommandError(f"{options['quote']}: no such quote")
        revisions = QuoteRevision.objects.filter(quote=quote)
        revision = (
            revisions.filter(index=options["revision"]).first()
            if options["revision"]
            else revisions.order_by("-index").first()
        )
        if revision is None:
            raise CommandError(
                f"{quote.number}: no revision {options['revision']}"
                if options["revision"]
                else f"{quote.number}: no revision"
            )
        language = options["language"]
        pdf = _render(render_proposal_pdf, revision, lang=language, edition=options["edition"])
        note = "issued" if revision.status == RevisionStatus.ISSUED else "draft, not issued"
        stored_applies = (
            revision.status == RevisionStatus.ISSUED
            and options["edition"] == "customer"
            and (language is None or language == quote.language)
            and pdf_file_present(revision)
        )
        if stored_applies:
            with revision.pdf_file.open("rb") as handle:
                stored = handle.read()
            if stored != pdf:
                note += "; the issued document is written (the seller profile or terms changed since)"
            pdf = stored
        try:
            output.write_bytes(pdf)
        except OSError as exc:
            raise CommandError(f"{output}: {exc.strerror or exc}") from None
        self.stdout.write(
            f"{output}: {len(pdf):,} bytes, {revision.number} ({note}), {options['edition']} edition"
        )

    def _read_request(self, path: Path) -> dict:
        try:
            if path.stat().st_size > MAX_REQUEST_BYTES:
                raise CommandError(f"{path}: larger than {MAX_REQUEST_BYTES:,} bytes")
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: cannot be read ({exc.__class__.__name__})") from None
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno})") from None
        if not isinstance(data, dict) or not data:
            raise CommandError(f"{path}: the request must be a non-empty JSON object")
        return data


def _render(render, revision, **kwargs) -> bytes:
    """``render(revision, **kwargs)``; missing compiled translations end the command with one line."""
    from documents.pdf.render import TranslationsMissing

    try:
        return render(revision, **kwargs)
    except TranslationsMissing as exc:
        raise CommandError(str(exc)) from None


def _planned_discount(resolved: dict):
    commercial = resolved.get("commercial") if isinstance(resolved, dict) else None
    value = commercial.get("quote_discount") if isinstance(commercial, dict) else None
    return value if value not in (None, "") else 0


def _messages(exc: ValidationError) -> list[str]:
    if hasattr(exc, "message_dict"):
        return [f"{msg}" for msgs in exc.message_dict.values() for msg in msgs]
    return [str(m) for m in exc.messages]
