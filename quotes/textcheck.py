"""Characters a name on an offer never holds: control (Cc), format (Cf: bidi overrides such as
U+202E, zero-width characters), line and paragraph separators (Zl, Zp), surrogates, private use
and unassigned code points.  Names and titles are printed in the audit trail, notices, e-mail
subjects and the acceptance statement, where they must read as one line, the way they were typed."""

from __future__ import annotations

import unicodedata

UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def control_chars(text: str) -> list[str]:
    """The distinct unsafe characters of ``text`` as U+XXXX codes (empty if none)."""
    found = sorted({ch for ch in text if unicodedata.category(ch) in UNSAFE_CATEGORIES})
    return [f"U+{ord(ch):04X}" for ch in found]


def one_line(text: str) -> str:
    """``text`` as one line: every unsafe character becomes a space, runs of spaces one."""
    out = "".join(" " if unicodedata.category(ch) in UNSAFE_CATEGORIES else ch for ch in str(text))
    return " ".join(out.split())


def refuse_unsafe(field: str, text: str) -> None:
    """Raise ``ValidationError({field: …})`` naming the characters when ``text`` holds any unsafe one
    (line breaks CR / LF, U+2028 / U+2029, bidi controls such as U+202E, surrogates …): a customer's
    name and a quote's title are printed as one line, as typed, in the proposal and the audit trail."""
    bad = control_chars(str(text or ""))
    if bad:
        from django.core.exceptions import ValidationError
        from django.utils.translation import gettext as _

        raise ValidationError(
            {
                field: _(
                    "Remove the line breaks and control characters (%(codes)s): this text is printed on "
                    "one line, as typed."
                )
                % {"codes": ", ".join(bad)}
            }
        )
