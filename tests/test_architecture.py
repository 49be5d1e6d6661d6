"""The package's import graph: five wings in order, floors inside them, no
circle, nothing importing upward, no private name crossing a module, one door
into the kernel, short files. Read from the source with ast (every import
counts, also those inside functions)."""
import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "stormsim"

#: The floors, lowest first: a module may import only modules listed before it.
#: A new module gets a place here (that is the decision of where it lives).
#: The wings come in this order; a wing's ``__init__`` says what lives in it.
WINGS = [
    ("", ["_version", "errors", "_format", "_args"]),           # facts without dependencies
    ("engine", ["__init__", "_numba_cache", "units", "cost", "jobcsv", "model", "launch", "_kernel", "door",
                "run"]),                                       # a fleet in, trajectories out
    ("stats", ["__init__", "exact_sums", "survival", "analysis", "tails", "storms", "product_form",
               "stationary", "durations", "summary", "physical"]),
    ("risk", ["__init__", "split_estimate", "splitting", "result", "exact", "stormrisk"]),
    ("sweep", ["__init__", "progress", "executors", "checks", "grid", "jobtable", "keys", "cell", "spec",
               "cellrisk", "work", "planner"]),                         # the sweep file -> units of work
    ("store", ["__init__", "files", "parts", "identity", "cellresult", "layout", "tables", "export",
               "results", "stores"]),                                     # files, the layout, the reader
    ("", ["driver", "plots", "fleetplan", "report", "cli_parser", "cli", "__main__", "__init__"]),
]


def floors(wings=WINGS) -> list[str]:
    return [f"{w}.{m}" if w else m for w, ms in wings for m in ms]


def _modules(package: Path) -> list[str]:
    return sorted(".".join(p.relative_to(package).with_suffix("").parts)
                  for p in package.rglob("*.py"))


def _path(package: Path, module: str) -> Path:
    return package.joinpath(*module.split(".")).with_suffix(".py")


def _package_of(module: str) -> list[str]:
    return module.split(".")[:-1]


def _resolve(package: Path, parts: list[str]) -> str:
    """A dotted name inside stormsim -> the module it loads (a package -> its __init__)."""
    name = ".".join(parts)
    if (package.joinpath(*parts) / "__init__.py").exists():
        return f"{name}.__init__" if name else "__init__"
    return name


def _imports(package: Path, module: str) -> list[tuple[str, str, int]]:
    """(imported module, name or '', line) for every stormsim import in a module."""
    path = _path(package, module)
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level >= 1:
                base = _package_of(module)
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                parts = base + (node.module.split(".") if node.module else [])
            elif (node.module or "").split(".")[0] == "stormsim":
                parts = node.module.split(".")[1:]
            else:
                continue
            for a in node.names:
                sub = parts + [a.name]
                if _path(package, ".".join(sub)).exists() or (package.joinpath(*sub)
                                                              / "__init__.py").exists():
                    out.append((_resolve(package, sub), "", node.lineno))
                else:
                    out.append((_resolve(package, parts), a.name, node.lineno))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "stormsim":
                    out.append((_resolve(package, a.name.split(".")[1:]), "", node.lineno))
    return out


def test_every_module_has_a_floor():
    assert sorted(floors()) == _modules(PACKAGE), "place each new module in WINGS"


def test_nothing_imports_upward_or_sideways(package=PACKAGE):
    rank = {m: i for i, m in enumerate(floors())}
    bad = [f"{m}:{line} imports {target}" for m in _modules(package)
           for target, _, line in _imports(package, m) if rank[target] >= rank[m]]
    assert not bad, bad


def test_no_wing_imports_a_wing_above_it():
    """The wings' order by itself (implied by the floors, stated for the reader)."""
    order = {w: i for i, (w, _) in enumerate(WINGS) if w}
    wing = lambda m: m.split(".")[0] if "." in m else None
    bad = [f"{m} imports {t}" for m in _modules(PACKAGE) if wing(m)
           for t, _, _ in _imports(PACKAGE, m) if wing(t) and order[wing(t)] > order[wing(m)]]
    assert not bad, bad


def test_the_import_graph_has_no_cycle():
    graph = {m: {t for t, _, _ in _imports(PACKAGE, m)} for m in _modules(PACKAGE)}
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


def test_a_wings_init_imports_nothing():
    """Importing one module of a wing must not load the whole wing."""
    bad = {w: _imports(PACKAGE, f"{w}.__init__") for w, _ in WINGS if w}
    assert not any(bad.values()), bad


def test_one_door_into_the_kernel():
    """Every driver reaches the kernels through ``engine.door`` (its inputs,
    keys, phases and threads are set up there once)."""
    users = sorted(m for m in _modules(PACKAGE)
                   for t, _, _ in _imports(PACKAGE, m) if t == "engine._kernel")
    assert users == ["engine.door"], users


def test_no_private_name_crosses_a_module():
    """``from .x import _y`` and ``x._y`` (x a stormsim module) reach into another
    module's privates: give the name a public spelling or keep it at home.
    (A private *module*, such as ``engine._kernel``, is guarded by the door test.)"""
    bad = [f"{m}:{line} imports {target}.{name}" for m in _modules(PACKAGE)
           for target, name, line in _imports(PACKAGE, m)
           if name.startswith("_") and not name.startswith("__")]
    for m in _modules(PACKAGE):
        tree = ast.parse(_path(PACKAGE, m).read_text())
        aliases = {a.asname or a.name for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and node.level >= 1 for a in node.names}
        bad += [f"{m}:{node.lineno} uses {node.value.id}.{node.attr}" for node in ast.walk(tree)
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")]
    assert not bad, bad


def test_the_checker_sees_an_upward_edge(tmp_path):
    """The floor test can fail: a module importing one above it is reported."""
    fake = tmp_path / "stormsim"
    for m in floors():
        path = _path(fake, m)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    _path(fake, "engine.model").write_text("from ..store.stores import HDF5Store\n")
    with pytest.raises(AssertionError, match=r"engine\.model:1 imports store\.stores"):
        test_nothing_imports_upward_or_sideways(fake)


NO_LONGER_THAN = 500     # lines: a module past ~500 holds more than one responsibility
LONGER_ALLOWED = {"plots",             # one figure per function: long, but flat
                  "engine._kernel"}    # every jitted function in one file (numba caches per file)


def test_no_module_is_too_long():
    long = {m: n for m in _modules(PACKAGE) if m not in LONGER_ALLOWED
            and (n := len(_path(PACKAGE, m).read_text().splitlines())) > NO_LONGER_THAN}
    assert not long, long


def test_no_issue_number_or_commit_hash_in_code():
    """Comments and docstrings say why; issue numbers and commit hashes belong
    in commits, benchmarks/ and RESULTS.md."""
    import re

    pattern = re.compile(r"\bissues? #?\d+\b|\b(?:commit|at) [0-9a-f]{7,40}\b", re.I)
    bad = [f"{m}:{i}: {line.strip()}" for m in _modules(PACKAGE)
           for i, line in enumerate(_path(PACKAGE, m).read_text().splitlines(), 1)
           if pattern.search(line)]
    assert not bad, bad


def test_units_and_parts_are_told_apart_by_their_kind():
    """A unit or part says what it is (``kind``): no driver, planner or store
    dispatches on its class."""
    import re

    pattern = re.compile(r"isinstance\([^)]*\b(RiskPart|RiskUnit|Part|Unit)\b")
    bad = [f"{m}:{i}" for m in _modules(PACKAGE)
           for i, line in enumerate(_path(PACKAGE, m).read_text().splitlines(), 1)
           if pattern.search(line)]
    assert not bad, bad
