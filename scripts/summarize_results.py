"""Put the table of all verdicts at the top of RESULTS.md.

Every claim script writes, with its entry, one hidden line per paper figure
(``<!-- verdict {"claim": ..., "paper": ..., "project": ..., "verdict": ...} -->``).
This collects them in file order and writes the summary table between the
header's ``<!-- summary -->`` marker and ``<!-- /summary -->``, replacing an
earlier summary, so running it twice gives the same file.

    .venv/bin/python scripts/summarize_results.py [--results RESULTS.md]
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK, END = "<!-- summary -->", "<!-- /summary -->"
ROW = re.compile(r"^<!-- verdict (\{.*\}) -->$", re.M)


def summary(text: str) -> str:
    rows = [json.loads(m.group(1)) for m in ROW.finditer(text)]
    head = ["## Summary: every figure of the paper against the project's", "",
            "One row per figure the paper reports (its entry below has the definitions, "
            "intervals and tables).", "",
            "| claim | the paper reports | the project measures | verdict |",
            "|---|---|---|---|"]
    esc = lambda s: s.replace("|", "\\|").replace("\n", " ")
    body = [f"| {r['claim']} | {esc(r['paper'])} | {esc(r['project'])} | {esc(r['verdict'])} |"
            for r in rows]
    return "\n".join(head + body) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", default=str(ROOT / "RESULTS.md"))
    args = p.parse_args(argv)
    path = Path(args.results)
    text = path.read_text(encoding="utf-8")
    if MARK not in text:
        raise SystemExit(f"{path}: no '{MARK}' marker (was it made by the claim scripts?)")
    pre, post = text.split(MARK, 1)
    if END in post:
        post = post.split(END, 1)[1]
    path.write_text(pre + MARK + "\n" + summary(text) + END + post, encoding="utf-8")
    print(f"wrote the summary of {len(ROW.findall(text))} verdicts into {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
