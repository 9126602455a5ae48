"""Validators for catalog text that reaches generated files (issue 13).

Names, vendors and vLLM parser names are written into launch-script comments,
README tables, nginx/Prometheus comments, PDF proposals and XLSX workbooks.
The launch bundle makes every such line safe by construction, but the catalog
refuses the characters at the source too, so no admin edit can ever carry a
newline (or a bidi override, a line separator, NUL…) into a customer's file.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from configurator.engine.site_values import control_chars


def single_line(value: str) -> None:
    """Refuse control, format and line-separator characters (one printable line only)."""
    if not isinstance(value, str):
        return
    bad = control_chars(value)
    if bad:
        raise ValidationError(
            _(
                "Use one line of printable text: control or line-break characters are not allowed (%(chars)s)."
            ),
            code="control_characters",
            params={"chars": ", ".join(bad[:5])},
        )
