"""The package's import graph: five wings in order, floors inside them, no
circle, nothing importing upward, no private name crossing a module, one door
into the kernel, short functions. Read from the source with ast (every import
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
    ("", ["_version", "errors", "_deprecated", "_format", "_args", "_interrupt",  # facts, no dependencies
          "glossary", "failures"]),
    ("engine", ["__init__", "_numba_cache", "units", "cost", "jobcsv", "model", "launch", "_kernel", "door",
                "run"]),                                       # a fleet in, trajectories out
    ("stats", ["__init__", "interval", "exact_sums", "survival", "analysis", "tails", "storms",
               "product_form", "stationary", "durations", "power", "goodput", "summary", "physical",
               "daly"]),
    ("risk", ["__init__", "settings", "split_estimate", "splitting", "result", "exact", "stormrisk"]),
    ("sweep", ["__init__", "progress", "executors", "checks", "grid", "jobtable", "keys", "cell", "spec",
               "cellrisk", "work", "planner"]),                         # the sweep file -> units of work
    ("store", ["__init__", "files", "parts", "identity", "cellresult", "layout", "tables", "export",
               "results", "stores"]),                                     # files, the layout, the reader
    ("", ["driver", "plots", "checkpointing", "plan_costs", "plan_power", "settling", "fleetplan", "report",
          "cli_parser", "cli", "__main__", "__init__"]),
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


NO_LONGER_THAN = 80      # lines of a function, its docstring not counted: past that it does two things
#: Functions allowed over the limit (module:qualified name -> why); none today.
LONGER_ALLOWED: dict[str, str] = {}
#: The numba kernels: one jitted loop each (a call inside a hot loop costs).
KERNELS = {"engine._kernel"}


def function_lengths(source: str):
    """(qualified name, lines) of every function and method in a module's
    source, its docstring's lines not counted."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                lines = child.end_lineno - child.lineno + 1
                doc = child.body[0]
                if (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                        and isinstance(doc.value.value, str)):
                    lines -= doc.end_lineno - doc.lineno + 1
                out.append((name, lines))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def long_functions(package=PACKAGE) -> dict[str, int]:
    return {f"{m}:{name}": n for m in _modules(package) if m not in KERNELS
            for name, n in function_lengths(_path(package, m).read_text()) if n > NO_LONGER_THAN}


def test_no_function_is_too_long():
    long = {k: n for k, n in long_functions().items() if k not in LONGER_ALLOWED}
    assert not long, long


def test_the_allowed_long_functions_are_still_long():
    """An entry of LONGER_ALLOWED whose function got short (or went) is removed."""
    stale = set(LONGER_ALLOWED) - set(long_functions())
    assert not stale, f"remove from LONGER_ALLOWED: {sorted(stale)}"


def test_the_checker_sees_a_long_function():
    """The length count can fail: a synthetic method of 81 lines below a docstring
    is flagged, under its class's name; one of 80 is not."""
    body = "".join(f"        x += {i}\n" for i in range(NO_LONGER_THAN - 1))
    source = ('class A:\n    def f(self, x):\n        """A docstring\n        of lines."""\n'
              f"{body}        return x\n\n\ndef g(x):\n    return x\n")
    assert dict(function_lengths(source)) == {"A.f": NO_LONGER_THAN + 1, "g": 2}


#: Modules holding their own copy of the levels' grammar ('N/q'), with why;
#: the grammar's home is ``_args`` (check_tail_level, tail_level, split_levels).
LEVEL_GRAMMAR_COPIES: dict[str, str] = {}


def level_grammars(package=PACKAGE) -> list[str]:
    """The modules whose source spells the 'N/q' pattern of a level."""
    return sorted(m for m in _modules(package) if r"N(?:/" in _path(package, m).read_text())


def test_one_parser_of_levels():
    assert level_grammars() == sorted(["_args", *LEVEL_GRAMMAR_COPIES])


def test_the_checker_sees_a_second_level_grammar(tmp_path):
    fake = tmp_path / "stormsim"
    fake.mkdir()
    (fake / "_args.py").write_text('LEVEL = r"N(?:/(\\d+))?"\n')
    (fake / "report.py").write_text('m = re.fullmatch(r"N(?:/(\\d+))?", s)\n')
    assert level_grammars(fake) == ["_args", "report"]


#: Modules with formatting helpers of their own (``_fmt_*``, ``fmt_*``), with
#: why; the home of formatting is ``_format``.
FORMATTERS_ELSEWHERE: dict[str, str] = {}


def formatters(package=PACKAGE) -> dict[str, list[str]]:
    """Module -> the formatting helpers it defines, ``_format`` aside."""
    found = {}
    for m in _modules(package):
        names = [node.name for node in ast.walk(ast.parse(_path(package, m).read_text()))
                 if isinstance(node, ast.FunctionDef) and node.name.lstrip("_").startswith("fmt")]
        if names and m != "_format":
            found[m] = names
    return found


def test_one_home_for_formatting():
    assert sorted(formatters()) == sorted(FORMATTERS_ELSEWHERE), formatters()


def test_the_checker_sees_a_formatter_elsewhere(tmp_path):
    fake = tmp_path / "stormsim"
    fake.mkdir()
    (fake / "_format.py").write_text("def fmt_value(v):\n    return str(v)\n")
    (fake / "report.py").write_text("def _fmt_share(x):\n    return f'{x:.2%}'\n")
    assert formatters(fake) == {"report": ["_fmt_share"]}


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
