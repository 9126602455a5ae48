"""The repository cites only itself and public sources (issue 20).

Code comments, sources in the catalog and plan, templates, tests and docs cite the project's domain
reference as ``docs/domain.md §N`` — a file in the repository — and never the specification folder
that lived beside it (``../shared/…``, the ``seeds/…`` source documents): a reader of the repository
cannot open those.  The two source documents are described in docs/domain.md as [S1] and [S2].
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("accounts", "catalog", "configurator", "quotes", "proposals", "config", "templates", "tests")
SCANNED += ("docs", "scripts", "bench")
TEXT_SUFFIXES = {
    ".py",
    ".html",
    ".txt",
    ".md",
    ".json",
    ".yaml",
    ".yml",
    ".js",
    ".css",
    ".toml",
    ".sh",
    ".j2",
}
THIS_FILE = Path(__file__).resolve()
# The customer edition's forbidden-words list names the bare file on purpose.
BARE_NAME_ALLOWED = {ROOT / "tests/quotes/test_proposal_editions.py", ROOT / "docs/architecture.md"}

# A path into the old specification folder.  ``/quotes/shared/<token>/`` (the customer share URL) is a
# route, not a file: a ``shared/`` preceded by a slash or a quote is left alone.
OUTSIDE = re.compile(r"\.\./shared|/work/shared|(?<![\w/\"'])shared/|\bseeds/")
BARE_DOMAIN = re.compile(r"(?<![\w/\[`.-])(?<!\]\()domain\.md")
SECTION = re.compile(r"docs/domain\.md §(\d+)")


def _files() -> list[Path]:
    found = []
    for top in SCANNED:
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and path.resolve() != THIS_FILE:
                found.append(path)
    found.append(ROOT / "README.md")
    return sorted(found)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def test_the_patterns_catch_what_they_should():
    """Guards the checker: each old form is caught, the share URL and the new form are not."""
    for cited in (
        "see ../shared/domain.md §4",
        "/work/shared/reference/x.json",
        "seeds/000.md",
        "shared/glossary.md",
    ):
        assert OUTSIDE.search(cited), cited
    for fine in ('path("shared/<str:token>/")', "/quotes/shared/abc/", "docs/domain.md §4"):
        assert not OUTSIDE.search(fine), fine
    assert BARE_DOMAIN.search("(domain.md §7)") and not BARE_DOMAIN.search("(docs/domain.md §7)")


def test_no_file_cites_the_specification_folder_outside_the_repository():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for path in _files()
        for n, line in enumerate(_read(path).splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert found == []


def test_domain_citations_name_the_file_in_the_repository():
    """``domain.md §N`` alone reads as the old, outside file: every citation says ``docs/domain.md``."""
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for path in _files()
        if path not in BARE_NAME_ALLOWED and "migrations" not in path.parts
        for n, line in enumerate(_read(path).splitlines(), 1)
        if BARE_DOMAIN.search(line)
    ]
    assert found == []


def test_every_cited_section_exists_in_docs_domain_md():
    sections = {int(m) for m in re.findall(r"^## (\d+)\.", _read(ROOT / "docs/domain.md"), flags=re.M)}
    assert {2, 4, 7} <= sections
    cited: dict[int, list[str]] = {}
    for path in _files():
        for m in SECTION.finditer(_read(path)):
            cited.setdefault(int(m.group(1)), []).append(str(path.relative_to(ROOT)))
    assert len(cited) > 5  # the engine and its tests cite it throughout
    missing = {n: sorted(set(paths)) for n, paths in cited.items() if n not in sections}
    assert missing == {}
