"""Fill msgstr entries of django.po from the *.tsv files here (msgid<TAB>msgstr).

The TSVs are the reviewable source of the Chinese wording (industry terms from
the glossary); run ``python locale/zh_Hans/fill.py`` after ``makemessages``.
Entries missing from the TSV are listed so nothing user-facing stays English.
"""

from pathlib import Path

import polib

HERE = Path(__file__).resolve().parent
PO = HERE / "LC_MESSAGES" / "django.po"


def load_tsv() -> dict[str, str]:
    """Every ``*.tsv`` beside this file (one per area of the app)."""
    table = {}
    for tsv in sorted(HERE.glob("*.tsv")):
        for line in tsv.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#") or "\t" not in line:
                continue
            msgid, _, msgstr = line.partition("\t")
            if msgstr.strip():
                table[msgid.replace("\\n", "\n")] = msgstr.replace("\\n", "\n")
    return table


def main() -> int:
    table = load_tsv()
    po = polib.pofile(str(PO))
    missing = []
    for entry in po:
        if entry.msgid in table:
            entry.msgstr = table[entry.msgid]
            if "fuzzy" in entry.flags:
                entry.flags.remove("fuzzy")
        elif not entry.msgstr or "fuzzy" in entry.flags:
            # A fuzzy entry is makemessages' guess from a similar old string: it is not compiled,
            # so the page shows English until the TSV gives the real translation.
            missing.append(entry.msgid)
    po.metadata["Content-Type"] = "text/plain; charset=UTF-8"
    po.metadata["Language"] = "zh_Hans"
    po.save(str(PO))
    for msgid in missing:
        print("untranslated:", msgid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
