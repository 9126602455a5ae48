"""The Chinese catalog is complete and the Chinese pages carry no English UI words.

``locale/zh_Hans/LC_MESSAGES/django.po`` is filled from the per-area TSVs by
``locale/zh_Hans/fill.py`` (``make messages``).  Every entry must have a
non-fuzzy translation whose format placeholders match the msgid (a missing or
renamed ``%(name)s`` raises ``KeyError`` at run time, an extra ``%`` breaks
``compilemessages``), and the log-in and configurator pages rendered in
zh-hans must not fall back to the English wording of their key labels.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings

PO = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"

# A Python %-directive: %(name)s, %d, %5.2f, "% r" … (not %%).
DIRECTIVE = re.compile(
    r"%(?:\((?P<name>\w+)\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])"
)
NAMED = re.compile(r"%\((\w+)\)")


def directives(text: str) -> tuple[Counter, list[str]]:
    """Named directives as a multiset of (name, conversion), unnamed ones in order."""
    named: Counter = Counter()
    unnamed: list[str] = []
    for match in DIRECTIVE.finditer(text):
        if match["conv"] == "%":
            continue
        if match["name"]:
            named[(match["name"], match["conv"])] += 1
        else:
            unnamed.append(match["conv"])
    return named, unnamed


def entries() -> list[polib.POEntry]:
    return [e for e in polib.pofile(str(PO)) if not e.obsolete]


def label(entry: polib.POEntry) -> str:
    where = ", ".join(f"{path}:{line}" for path, line in entry.occurrences[:2])
    return f"{entry.msgid!r} ({where})"


def test_the_catalog_has_entries():
    assert len(entries()) > 500


def test_every_entry_is_translated_and_not_fuzzy():
    untranslated = []
    for entry in entries():
        if entry.msgid_plural:
            done = entry.msgstr_plural and all(v.strip() for v in entry.msgstr_plural.values())
        else:
            done = bool(entry.msgstr.strip())
        if not done or "fuzzy" in entry.flags:
            untranslated.append(label(entry))
    assert not untranslated, "untranslated or fuzzy in django.po:\n" + "\n".join(untranslated)


def test_placeholders_match_the_msgid():
    wrong = []
    for entry in entries():
        translations = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        for msgstr in translations:
            if not msgstr:
                continue
            if "python-format" in entry.flags:
                if directives(msgstr) != directives(entry.msgid):
                    wrong.append(f"{label(entry)} → {msgstr!r}")
            elif set(NAMED.findall(msgstr)) != set(NAMED.findall(entry.msgid)):
                wrong.append(f"{label(entry)} → {msgstr!r}")
    assert not wrong, "placeholders differ from the msgid:\n" + "\n".join(wrong)


def test_directive_parser_reads_named_unnamed_and_escaped_percent():
    assert directives("%(n)d addresses for %(m)d nodes") == (Counter({("n", "d"): 1, ("m", "d"): 1}), [])
    assert directives("Sensitivity (±20 %%)") == (Counter(), [])
    assert directives("continuously (80 % rule)") == (Counter(), ["r"])


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="gettext's msgfmt is not installed")
def test_msgfmt_check_accepts_the_catalog(tmp_path):
    result = subprocess.run(
        ["msgfmt", "--check-format", "--check-domain", "-o", str(tmp_path / "django.mo"), str(PO)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- rendered pages


class VisibleText(HTMLParser):
    """Text a reader sees: element text plus title, placeholder, aria-label and button values."""

    SKIP = {"script", "style"}
    ATTRS = {"title", "placeholder", "aria-label", "alt"}

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
        for name, value in attrs:
            if value and (
                name in self.ATTRS or (tag == "input" and name == "value" and ("type", "submit") in attrs)
            ):
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in self.SKIP and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = VisibleText()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


LOGIN_ENGLISH = [
    "Log in",
    "User name",
    "Password",
    "Size, price and propose",
    "Inference Cluster Configurator",
]
LOGIN_CHINESE = ["登录", "用户名", "密码"]

CONFIGURATOR_ENGLISH = [
    "Configuration",
    "Scenario",
    "Model and hardware",
    "Topology",
    "Parallel layout",
    "Expert parallelism",
    "Serving (vLLM)",
    "Memory utilisation",
    "Prefix caching",
    "Workload",
    "Commercial terms",
    "Price list",
    "Discount rate",
    "Launch bundle",
    "Findings",
    "Suggested fix",
    "Apply",
    "Architecture",
    "Accelerator memory per rank",
    "KV cache and state",
    "Performance",
    "Time to first token",
    "Feeds and breakers",
    "Facility load",
    "Racks",
    "Network",
    "Buy vs lease",
    "Cost per million tokens",
    "Sensitivity",
    "Launch configuration",
    "Copy",
    "Download launch bundle",
    "Save as quote",
    "Customer",
    "Proposal language",
    "This deployment",
    "Log out",
]
CONFIGURATOR_CHINESE = [
    "配置",
    "检查结果",
    "部署架构",
    "每卡显存分配",
    "供电回路与断路器",
    "启动配置",
    "保存为报价单",
]


def english_left(text: str, words: list[str]) -> list[str]:
    return [w for w in words if re.search(rf"(?<![A-Za-z]){re.escape(w)}(?![A-Za-z])", text)]


def in_chinese(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    return {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


@pytest.mark.django_db
def test_login_page_in_chinese_has_no_english_labels(client):
    response = client.get("/accounts/login/", **in_chinese(client))
    assert response.status_code == 200
    text = visible_text(response.content.decode())
    assert all(word in text for word in LOGIN_CHINESE), text
    assert not english_left(text, LOGIN_ENGLISH), text


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/?scenario=software-engineering-agent"])
def test_configurator_page_in_chinese_has_no_english_labels(client, catalog, users, path):
    client.force_login(users["engineer"])
    response = client.get(path, **in_chinese(client))
    assert response.status_code == 200
    text = visible_text(response.content.decode())
    missing = [word for word in CONFIGURATOR_CHINESE if word not in text]
    assert not missing, f"the page did not render its results panel in Chinese: {missing}"
    left = english_left(text, CONFIGURATOR_ENGLISH)
    assert not left, f"English left on the Chinese configurator page: {left}"
