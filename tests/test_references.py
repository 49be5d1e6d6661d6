"""Prose that names the code names something that exists.

The prose read here: the docstrings (module, class and function) and the
comments of every ``.py`` file under stormsim/, tests/, scripts/, benchmarks/,
examples/ and docs/, and the whole text of README.md, scripts/README.md,
benchmarks/README.md and docs/*.md (not docs/reference/, which is generated
from the code and checked by tests/test_docs.py).

The rules:

- **Dotted references.** A dotted name that starts with ``stormsim.`` is a
  reference to the package. So is a dotted name that starts with a wing
  (``engine``, ``stats``, ``risk``, ``sweep``, ``store``; not after another
  dot) when its second part is a module of that wing (``engine.cost...``,
  ``risk.exact``) or a name some stormsim module defines at its top level
  (``store.exact_column_sums``, ``risk.fixed_batch``: a package name put in
  the wrong place); the same spelling with any other second part is an
  object's attribute (``risk.levels`` on a StormRisk, ``sweep.toml`` a file)
  and is not checked, nor is any wing-relative spelling inside a fenced
  code block of a page (code, where ``risk`` is a variable). A reference
  resolves when its longest module prefix imports and each further part is
  an attribute of what comes before it.
- **Test paths.** Every ``tests/...`` path named anywhere in those ``.py``
  files (code included) and pages exists.
- This file's own examples of wrong references and paths are not read.
- **Wing maps.** The docstring of each wing's ``__init__`` names every module
  of the wing as ``name`` in double backticks ("What lives here: ..."), and
  docs/architecture.md's table of wings names each as `name.py` in the
  wing's row (each root module and face, except ``__init__`` and
  ``__main__``, in the "root modules" or the "faces" row).
- **Command lists.** ``stormsim --help``'s summary (cli_parser's docstring)
  and the README's line on ``stormsim/cli.py`` name every subcommand.
"""
from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "stormsim"
WINGS = ("engine", "stats", "risk", "sweep", "store")
CODE_DIRS = ("stormsim", "tests", "scripts", "benchmarks", "examples", "docs")
PAGES = ["README.md", "scripts/README.md", "benchmarks/README.md",
         *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").glob("*.md")))]

_DOTTED = re.compile(r"(?<![\w.])((?:stormsim|engine|stats|risk|sweep|store)(?:\.[A-Za-z_]\w*)+)")
_TEST_PATH = re.compile(r"(?<![\w/.])tests/[\w/.-]*[\w/]")


def _py_files(root: Path = ROOT) -> list[Path]:
    return sorted(p for d in CODE_DIRS for p in (root / d).rglob("*.py")
                  if "__pycache__" not in p.parts and p.resolve() != Path(__file__).resolve())


def prose_of(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python source."""
    out = [(tok.start[0], tok.string)
           for tok in tokenize.generate_tokens(io.StringIO(source).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out.append((first.lineno, first.value.value))
    return out


def _texts(root: Path = ROOT):
    """(where, prose, whether wing-relative spellings count) of every place the rules read."""
    for path in _py_files(root):
        for line, text in prose_of(path.read_text()):
            yield f"{path.relative_to(root)}:{line}", text, True
    for page in PAGES:
        if (root / page).exists():
            fenced = False
            for i, line in enumerate((root / page).read_text().splitlines(), 1):
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                yield f"{page}:{i}", line, not fenced


def _modules(package: Path = PACKAGE) -> set[str]:
    """Every module of the package, dotted from ``stormsim`` (packages too)."""
    found = {"stormsim"}
    for p in package.rglob("*.py"):
        parts = p.relative_to(package.parent).with_suffix("").parts
        found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def _top_level_names(package: Path = PACKAGE) -> set[str]:
    """The names the package's modules define or assign at their top level."""
    names = set()
    for p in package.rglob("*.py"):
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def references(text: str, modules: set[str], names: set[str], wings: bool = True) -> list[str]:
    """The package references in a text, each spelled from ``stormsim`` (with
    ``wings=False`` only those that start with ``stormsim.``)."""
    out = []
    for m in _DOTTED.finditer(text):
        parts = m.group(1).split(".")
        if parts[0] != "stormsim":
            if not wings or not (f"stormsim.{parts[0]}.{parts[1]}" in modules
                                 or parts[1] in names):
                continue
            parts = ["stormsim", *parts]
        out.append(".".join(parts))
    return out


def resolves(reference: str) -> bool:
    """Whether a dotted name is an importable module or an attribute of one."""
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def unresolved_references(root: Path = ROOT, package: Path = PACKAGE) -> list[str]:
    modules, names = _modules(package), _top_level_names(package)
    return [f"{where}: {ref}" for where, text, wings in _texts(root)
            for ref in references(text, modules, names, wings) if not resolves(ref)]


def missing_test_paths(root: Path = ROOT) -> list[str]:
    texts = [(str(p.relative_to(root)), p.read_text()) for p in _py_files(root)]
    texts += [(page, (root / page).read_text()) for page in PAGES if (root / page).exists()]
    return [f"{where}: {m.group(0)}" for where, text in texts
            for m in _TEST_PATH.finditer(text) if not (root / m.group(0)).exists()]


def wing_map_gaps(package: Path = PACKAGE) -> list[str]:
    gaps = []
    for wing in WINGS:
        init = package / wing / "__init__.py"
        named = set(re.findall(r"``(\w+)``", ast.get_docstring(ast.parse(init.read_text())) or ""))
        gaps += [f"{wing}.{p.stem}" for p in sorted((package / wing).glob("*.py"))
                 if p.stem != "__init__" and p.stem not in named]
    return gaps


def architecture_gaps(root: Path = ROOT, package: Path = PACKAGE) -> list[str]:
    rows = dict(re.findall(r"^\| (`stormsim/\w+/`|root modules|faces) \|(.*)$",
                           (root / "docs" / "architecture.md").read_text(), re.M))
    named = {w: set(re.findall(r"`(\w+)\.py`", rows.get(f"`stormsim/{w}/`", ""))) for w in WINGS}
    top = set(re.findall(r"`(\w+)\.py`", rows.get("root modules", "") + rows.get("faces", "")))
    gaps = [f"{w}.{p.stem}" for w in WINGS for p in sorted((package / w).glob("*.py"))
            if p.stem != "__init__" and p.stem not in named[w]]
    return gaps + [p.stem for p in sorted(package.glob("*.py"))
                   if p.stem not in ("__init__", "__main__") and p.stem not in top]


def subcommands() -> set[str]:
    import argparse

    from stormsim.cli_parser import parser

    return {name for action in parser()._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices}


def commands_missing(summary: str, readme: str, commands: set[str]) -> list[str]:
    """The subcommands the --help summary (lines ``    stormsim NAME ...``) or the
    README's ``stormsim/cli.py`` line (``(a, b, ...)``) leave out."""
    listed = set(re.findall(r"^ +stormsim (\w+)", summary, re.M))
    line = re.search(r"^- `stormsim/cli\.py`:.*\(([^)]*)\)", readme, re.M)
    in_readme = set(re.findall(r"\w+", line.group(1))) if line else set()
    return ([f"--help: {c}" for c in sorted(commands - listed)]
            + [f"README: {c}" for c in sorted(commands - in_readme)])


# -- the checks --------------------------------------------------------------------------

def test_every_dotted_reference_resolves():
    bad = unresolved_references()
    assert not bad, "prose names what does not exist (point it at the current home):\n" + \
        "\n".join(bad)


def test_every_tests_path_exists():
    bad = missing_test_paths()
    assert not bad, "\n".join(bad)


def test_each_wing_init_names_all_its_modules():
    gaps = wing_map_gaps()
    assert not gaps, f"a wing's __init__ docstring (What lives here) does not name {gaps}"


def test_the_architecture_page_names_every_module():
    gaps = architecture_gaps()
    assert not gaps, f"docs/architecture.md's table of wings does not name {gaps}"


def test_the_command_lists_name_every_subcommand():
    import stormsim.cli_parser

    commands = subcommands()
    assert {"sweep", "inspect", "risk", "report", "plan", "demo"} <= commands
    missing = commands_missing(stormsim.cli_parser.__doc__, (ROOT / "README.md").read_text(),
                               commands)
    assert not missing, missing


# -- the checkers can fail ---------------------------------------------------------------

def test_the_rule_tells_references_from_attributes():
    modules, names = _modules(), _top_level_names()
    text = ("``stormsim.engine.cost.default_batch``, engine.cost.default_batch, risk.exact, "
            "store.exact_column_sums, risk.levels, sweep.toml, risk.h5, scipy.stats.norm, "
            "x.engine.cost")
    assert references(text, modules, names) == [
        "stormsim.engine.cost.default_batch", "stormsim.engine.cost.default_batch",
        "stormsim.risk.exact", "stormsim.store.exact_column_sums"]
    assert references(text, modules, names, wings=False) == ["stormsim.engine.cost.default_batch"]
    assert resolves("stormsim.engine.cost.default_batch") and resolves("stormsim.risk.exact")
    assert resolves("stormsim.Fleet.from_jobs")
    for wrong in ("stormsim.store.exact_column_sums", "stormsim._kernel",
                  "stormsim.engine.cost.no_such_name", "stormsim.no_such_module.x"):
        assert not resolves(wrong), wrong


def _tree(tmp_path: Path, text: str) -> Path:
    (tmp_path / "stormsim").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_here.py").write_text(text)
    return tmp_path


def test_the_reference_checker_sees_a_stale_reference(tmp_path):
    root = _tree(tmp_path, '"""See ``stormsim.engine.nowhere`` and tests/test_gone.py."""\n'
                           "# and store.exact_column_sums, never risk.levels\n"
                           "x = 'stormsim.not_in_prose'\n")
    bad = unresolved_references(root, PACKAGE)
    assert bad == ["tests/test_here.py:2: stormsim.store.exact_column_sums",
                   "tests/test_here.py:1: stormsim.engine.nowhere"], bad
    (root / "README.md").write_text("Use `stormsim.engine.cost.no_such_name`.\n\n```python\n"
                                    "risk.storms_per_day, stormsim.nowhere\n```\n")
    assert unresolved_references(root, PACKAGE)[-2:] == [
        "README.md:1: stormsim.engine.cost.no_such_name", "README.md:4: stormsim.nowhere"]


def test_the_path_checker_sees_a_missing_test(tmp_path):
    root = _tree(tmp_path, "PATH = 'tests/test_here.py'  # and tests/test_gone.py\n")
    assert missing_test_paths(root) == ["tests/test_here.py: tests/test_gone.py"]


def test_the_wing_map_checker_sees_an_unnamed_module(tmp_path):
    for wing in WINGS:
        (tmp_path / wing).mkdir()
        (tmp_path / wing / "__init__.py").write_text('"""What lives here: ``named``."""\n')
        (tmp_path / wing / "named.py").write_text("")
    (tmp_path / "risk" / "unnamed.py").write_text("")
    assert wing_map_gaps(tmp_path) == ["risk.unnamed"]


def test_the_architecture_checker_sees_an_unnamed_module(tmp_path):
    (tmp_path / "docs").mkdir()
    page = (ROOT / "docs" / "architecture.md").read_text()
    (tmp_path / "docs" / "architecture.md").write_text(page.replace("`exact.py`", "`exakt.py`")
                                                       .replace("`fleetplan.py`", "`plan.py`"))
    assert architecture_gaps(tmp_path) == ["risk.exact", "fleetplan"]


def test_the_command_list_checker_sees_a_missing_command():
    summary = "    stormsim sweep X   run\n    stormsim demo   a demo\n"
    readme = "- `stormsim/cli.py`: the `stormsim` command (sweep, plan).\n"
    assert commands_missing(summary, readme, {"sweep", "demo", "plan"}) == [
        "--help: plan", "README: demo"]


@pytest.mark.parametrize("source, expected", [
    ('"""doc"""\nx = "not prose"  # a comment\n', ["doc", "# a comment"]),
    ('def f():\n    """inner"""\n    return "code"\n', ["inner"]),
])
def test_prose_is_docstrings_and_comments(source, expected):
    assert sorted(t for _, t in prose_of(source)) == sorted(expected)
