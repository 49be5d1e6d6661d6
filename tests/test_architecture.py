"""The package's import graph: floors, no circle, nothing importing upward, no
private name crossing a module boundary. Read from the source with ast (every
import counts, also those inside functions)."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "stormsim"

#: The floors, lowest first: a module may import only modules listed before it.
#: A new module gets a place here (that is the decision of where it lives).
FLOORS = [
    "_version", "errors", "_format", "_numba_cache",           # facts without dependencies
    "units",                                                   # physical units -> the model's
    "model", "launch", "_kernel", "engine",                    # the engine
    "survival", "analysis", "tails", "storms", "summary", "physical",  # statistics of arrays
    "splitestimate", "splitting",                              # forward flux sampling
    "risk",                                                    # storm_risk: simulate until precise
    "progress", "executors",                                   # where and how visibly units run
    "_checks", "_grid", "_jobtable", "_keys", "spec",          # the sweep file -> cells
    "cellrisk",                                                # a cell's storm risk: its unit
    "work",                                                    # units, parts, exact sums
    "_files", "_parts",                                        # files that survive a kill
    "layout",                                                  # the HDF5 result layout
    "tables", "export", "results", "store",                    # reading and writing results
    "sweep",                                                   # the driver
    "plots", "report", "cli", "__main__", "__init__",          # faces
]


def _modules():
    return sorted(p.stem for p in PACKAGE.glob("*.py"))


def _imports(name: str) -> list[tuple[str, str, int]]:
    """(imported module, name or '', line) for every stormsim import in a module."""
    tree = ast.parse((PACKAGE / f"{name}.py").read_text(), filename=f"{name}.py")
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = node.module
            elif node.level == 0 and (node.module or "").startswith("stormsim"):
                base = node.module[len("stormsim."):] if "." in node.module else None
            else:
                continue
            if base is None:                       # from . import x, y: modules (or __init__)
                for a in node.names:
                    target = a.name if (PACKAGE / f"{a.name}.py").exists() else "__init__"
                    out.append((target, "" if target == a.name else a.name, node.lineno))
            else:
                for a in node.names:
                    out.append((base.split(".")[0], a.name, node.lineno))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "stormsim":
                    out.append(("__init__", "", node.lineno))
                elif a.name.startswith("stormsim."):
                    out.append((a.name.split(".")[1], "", node.lineno))
    return out


def test_every_module_has_a_floor():
    assert sorted(FLOORS) == _modules(), "place each new module in FLOORS"


def test_nothing_imports_upward_or_sideways():
    rank = {m: i for i, m in enumerate(FLOORS)}
    bad = [f"{m}.py:{line} imports {target}" for m in _modules()
           for target, _, line in _imports(m) if rank[target] >= rank[m]]
    assert not bad, bad


def test_the_import_graph_has_no_cycle():
    graph = {m: {t for t, _, _ in _imports(m)} for m in _modules()}
    state = {}

    def visit(m, path):
        if state.get(m) == "open":
            pytest.fail("import cycle: " + " -> ".join(path + [m]))
        if state.get(m) == "done":
            return
        state[m] = "open"
        for t in sorted(graph[m]):
            visit(t, path + [m])
        state[m] = "done"

    for m in graph:
        visit(m, [])


def test_no_private_name_crosses_a_module():
    """``from .x import _y`` and ``x._y`` (x a stormsim module) reach into another
    module's privates: give the name a public spelling or keep it at home."""
    bad = []
    for m in _modules():
        tree = ast.parse((PACKAGE / f"{m}.py").read_text())
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                for a in node.names:
                    if node.module is None:
                        aliases[a.asname or a.name] = a.name
                    elif a.name.startswith("_") and not a.name.startswith("__"):
                        bad.append(f"{m}.py:{node.lineno} imports {node.module}.{a.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                bad.append(f"{m}.py:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    assert not bad, bad


def test_the_checker_sees_an_upward_edge(tmp_path, monkeypatch):
    """The floor test can fail: a module importing one above it is reported."""
    fake = tmp_path / "stormsim"
    fake.mkdir()
    for m in FLOORS:
        (fake / f"{m}.py").write_text("")
    (fake / "model.py").write_text("from .store import HDF5Store\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    with pytest.raises(AssertionError, match=r"model\.py:1 imports store"):
        test_nothing_imports_upward_or_sideways()


NO_LONGER_THAN = 540     # lines: a module past ~500 holds more than one responsibility
LONGER_ALLOWED = {"plots",    # one figure per function: long, but flat
                  "_kernel"}  # every jitted function in one file (numba caches per file)


def test_no_module_is_too_long():
    long = {m: n for m in _modules() if m not in LONGER_ALLOWED
            and (n := len((PACKAGE / f"{m}.py").read_text().splitlines())) > NO_LONGER_THAN}
    assert not long, long
