"""Write docs/rules/<CODE>.md from the rule modules (their docstrings and examples).

    python scripts/gen_rule_docs.py          # rewrite the pages
    python scripts/gen_rule_docs.py --check  # exit 1 if a page is out of date (CI)
"""

from __future__ import annotations

import sys
from pathlib import Path

from graphmend.findings import CATALOGUE
from graphmend.rules import rule_doc

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def pages() -> dict[Path, str]:
    out = {DOCS / f"{code}.md": rule_doc(code).rstrip() + "\n" for code in CATALOGUE}
    index = ["# GraphMend rules", "", "| code | name | mend | Dynamo id |", "|---|---|---|---|"]
    for code, r in CATALOGUE.items():
        index.append(f"| [{code}]({code}.md) | {r.name} | {r.rewrite or 'reported'} | {r.gb_id or ''} |")
    out[DOCS / "README.md"] = "\n".join(index) + "\n"
    return out


def main(argv: list[str]) -> int:
    stale = []
    for path, text in pages().items():
        if "--check" in argv:
            if not path.is_file() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print("out of date (run scripts/gen_rule_docs.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
