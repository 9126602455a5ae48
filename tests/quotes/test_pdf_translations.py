"""Every user-facing string of the proposal, its status panel and the exports has Chinese wording.

The wording lives in ``locale/zh_Hans/pdf.tsv`` (msgid<TAB>msgstr, glossary
terms) until it is merged into the project's catalog; this test extracts the
msgids the way ``makemessages`` does (``templatize`` for templates, gettext
calls for Python) and checks each one has a translation with the same
placeholders.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.conf import settings
from django.utils.translation.template import templatize

ROOT = Path(settings.BASE_DIR)
# pdf.tsv, and proposal.tsv for the editions, the commercial terms and the deployment path.
TSVS = sorted((ROOT / "locale" / "zh_Hans").glob("*.tsv"))  # every area's wording (fill.py reads them all)
TEMPLATES = [
    *sorted((ROOT / "quotes" / "templates" / "quotes" / "pdf").glob("*.html")),
    ROOT / "quotes" / "templates" / "quotes" / "_pdf_status.html",
]
PYTHON = [
    *sorted((ROOT / "documents" / "pdf").glob("*.py")),
    ROOT / "documents" / "exports.py",
    ROOT / "documents" / "views.py",
    ROOT / "documents" / "tasks.py",
    *sorted((ROOT / "proposals").glob("*.py")),
]
GETTEXT_NAMES = {"_", "gettext", "gettext_lazy", "gettext_noop", "pgettext", "pgettext_lazy"}
STRING = r"""u?(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
PLACEHOLDER = re.compile(r"%\(\w+\)s|%s|%d")


def template_msgids(path: Path) -> set[str]:
    code = templatize(path.read_text(encoding="utf-8"), origin=str(path))
    found = set()
    for match in re.finditer(rf"\b(p?)gettext\(({STRING})(?:,\s*({STRING}))?\)", code):
        literal = match.group(3) if match.group(1) else match.group(2)
        found.add(ast.literal_eval(literal.lstrip("u")))
    assert "ngettext(" not in code, f"{path.name}: plural forms are not supported by locale/zh_Hans/fill.py"
    return found


def python_msgids(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name not in GETTEXT_NAMES or not node.args:
            continue
        arg = node.args[-1] if name.startswith("pgettext") else node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.add(arg.value)
    return found


def load_tsv() -> dict[str, str]:
    # pdf.tsv, plus the files other branches add beside it (fill.py reads every *.tsv there).
    table = {}
    for tsv in TSVS:
        for line in tsv.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            msgid, tab, msgstr = line.partition("\t")
            assert tab, f"no TAB in {line!r}"
            table[msgid.replace("\\n", "\n")] = msgstr.replace("\\n", "\n")
    return table


def all_msgids() -> set[str]:
    msgids: set[str] = set()
    for path in TEMPLATES:
        msgids |= template_msgids(path)
    for path in PYTHON:
        msgids |= python_msgids(path)
    return msgids


def test_every_proposal_string_has_chinese_wording():
    table = load_tsv()
    msgids = all_msgids()
    # locale/zh_Hans/fill.py copies msgstr by msgid: a literal percent sign ("%%") would not survive.
    assert [m for m in msgids if "%%" in m] == []
    missing = sorted(m for m in msgids if not table.get(m))
    assert missing == [], "add to locale/zh_Hans/pdf.tsv:\n" + "\n".join(missing)


def test_translations_keep_their_placeholders():
    for msgid, msgstr in load_tsv().items():
        assert sorted(PLACEHOLDER.findall(msgid)) == sorted(PLACEHOLDER.findall(msgstr)), msgid
        assert msgstr.strip(), msgid


def test_extraction_finds_the_section_titles():
    # Guards the extraction itself: a template and a Python msgid that must be found.
    assert "Executive summary" in all_msgids()
    assert "Download proposal (PDF)" in all_msgids()
    assert "PDF service temporarily unavailable, try again" in all_msgids()
