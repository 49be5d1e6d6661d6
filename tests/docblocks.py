"""The code blocks of a markdown page, and running its Python blocks as written.

A page's convention: a fenced block without a language right after a
```python block (only blank lines between them) is that block's output, and
the block must print exactly it.
"""
from __future__ import annotations

import contextlib
import io
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    lang: str       # "" for a block without a language
    text: str
    line: int       # 1-based line of its opening fence
    output: str | None = None   # the output block that follows a python block, if any


def blocks(markdown: str) -> list[Block]:
    """Every fenced block, in order; a python block carries the output block after it."""
    found = [(m.group(1), m.group(2), markdown.count("\n", 0, m.start()) + 1, m.start(), m.end())
             for m in _FENCE.finditer(markdown)]
    out = []
    for i, (lang, text, line, _, end) in enumerate(found):
        output = None
        if lang == "python" and i + 1 < len(found):
            nlang, ntext, _, nstart, _ = found[i + 1]
            if nlang == "" and not markdown[end:nstart].strip():
                output = ntext
        out.append(Block(lang, text, line, output))
    return out


def python_blocks(markdown: str) -> list[Block]:
    return [b for b in blocks(markdown) if b.lang == "python"]


def run_python_blocks(page: Path, workdir: Path, monkeypatch, skip=lambda block: False) -> int:
    """Run a page's Python blocks in order in ``workdir`` (with a copy of examples/),
    each in a fresh namespace; check every output block shown. Returns how many ran."""
    if not (workdir / "examples").exists():
        shutil.copytree(ROOT / "examples", workdir / "examples")
    monkeypatch.chdir(workdir)
    ran = 0
    for b in python_blocks(page.read_text()):
        if skip(b):
            continue
        where = f"{page.name}:{b.line}"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(b.text, where, "exec"), {"__name__": "__main__"})
        if b.output is not None:
            assert printed.getvalue() == b.output, (
                f"{where} printed\n{printed.getvalue()}\nbut the page shows\n{b.output}")
        ran += 1
    return ran


#: The fences whose lines are shell commands.
SHELL = ("sh", "bash", "shell", "console")


def shell_commands(markdown: str) -> list[str]:
    """Every command line of a page's shell blocks, in order (blank and
    comment-only lines left out; a trailing comment kept)."""
    return [line.strip() for b in blocks(markdown) if b.lang in SHELL
            for line in b.text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
