"""Warnings accepted with a reason (issue 17).

On the configurator page a warning can be accepted with a short reason; the
accepted warnings are kept in the session while the engineer works, folded out
of the findings list, and recorded on the quote revision created from the page
(``QuoteRevision.acknowledged_warnings``), where the approving manager sees
them.  Errors cannot be accepted: a deployment that does not work is never
waved through.
"""

from __future__ import annotations

import json
import unicodedata

from django.utils import timezone
from django.utils.translation import gettext as _

SESSION_KEY = "configurator_acks"
MAX_REASON = 300
MAX_ITEMS = 50
CODE_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_.")


def clean_reason(text: str) -> str:
    """A reason as stored: control characters out, spaces collapsed; refuses empty or long ones."""
    if not isinstance(text, str):
        raise ValueError(_("A reason must be text."))
    text = "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text)
    text = " ".join(text.split())
    if not text:
        raise ValueError(_("Give a short reason for accepting the warning."))
    if len(text) > MAX_REASON:
        raise ValueError(_("A reason has at most %(n)d characters.") % {"n": MAX_REASON})
    return text


def clean_code(code: str) -> str:
    if not isinstance(code, str) or not code or len(code) > 100 or set(code) - CODE_CHARS:
        raise ValueError(_("Unknown warning."))
    return code


def parse_acknowledged(raw: str) -> dict[str, str]:
    """``{"code": "reason"}`` as posted with a new quote (empty text: none)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise ValueError(_("The accepted warnings are not valid JSON.")) from None
    if not isinstance(data, dict) or len(data) > MAX_ITEMS:
        raise ValueError(_("The accepted warnings must be an object of at most 50 codes and reasons."))
    return {clean_code(code): clean_reason(reason) for code, reason in data.items()}


def session_acks(session) -> dict[str, str]:
    stored = session.get(SESSION_KEY)
    if not isinstance(stored, dict):
        return {}
    return {k: v for k, v in stored.items() if isinstance(k, str) and isinstance(v, str)}


def current_for(acks: dict[str, str], checks: list[dict]) -> dict[str, str]:
    """The accepted warnings that are warnings of this plan (errors are never accepted)."""
    warnings = {c.get("code") for c in checks if c.get("severity") == "warning"}
    return {code: reason for code, reason in acks.items() if code in warnings}


def record_on_revision(revision, acknowledged: dict[str, str], user) -> None:
    """Store the accepted warnings that the revision's frozen plan really has."""
    if revision is None or not acknowledged:
        return
    checks = (revision.result_json or {}).get("checks") or []
    by_code = {c.get("code"): c for c in checks if c.get("severity") == "warning"}
    now = timezone.now().isoformat(timespec="seconds")
    items = []
    for code, reason in acknowledged.items():
        check = by_code.get(code)
        if check is None:
            continue
        items.append(
            {
                "code": code,
                "message_en": check.get("message", ""),
                "message_zh": check.get("message_zh", ""),
                "reason": reason,
                "by": user.get_username(),
                "at": now,
            }
        )
    if items:
        revision.acknowledged_warnings = items
        revision.save(update_fields=["acknowledged_warnings"])
