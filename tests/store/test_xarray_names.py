"""The xarray view's names are data, never an xarray method: ``ds.median`` and
``ds.load`` are methods of ``xarray.Dataset``, so a variable or coordinate by
that name can only be reached as ``ds["median"]`` and reads as a trap. And the
docs reach data by item, never by attribute (``ds["p_ge"]``, not ``ds.p_ge``),
so a reader copying them never meets a method where they expected numbers."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT
from stormsim import open_results, run_sweep
from stormsim.sweep.spec import parse_sweep

xr = pytest.importorskip("xarray")

#: A small sweep with every kind of variable the view can have: the per-cell
#: table, storms, storm risk (risk_levels) and a physical parameter on the grid.
SWEEP = """
[sweep]
name = "names"
[fixed]
N = 4
T = 1.0
jitter = 0.02
cycles = 60
fleets = 4
risk_levels = [2]
risk_fleets = 8
[grid]
load = [0.5, 0.9]
"""


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "names.h5"
    run_sweep(parse_sweep(SWEEP, "names.toml"), path, progress="none")
    return open_results(path)


@pytest.mark.parametrize("grid", [True, False])
def test_no_variable_or_coordinate_shadows_a_dataset_attribute(result, grid):
    ds = result.to_xarray(grid=grid)
    names = set(ds.variables) | set(ds.dims)
    assert "risk_p_ge" in names and "storms_per_s" in names     # the walk saw every kind
    shadowing = sorted(n for n in names if n in dir(xr.Dataset))
    assert shadowing == [], f"{shadowing}: methods of xarray.Dataset, not the data"
    # the renamed ones are there under their own names, and .sel works by them
    assert {"median_cycles", "median_cycles_lo", "median_cycles_hi", "load_L"} <= names
    if grid:
        assert ds["p_ge"].sel(load_L=0.9, k=2).size == 1


#: ``X = ...``: an assignment; an xarray one when its value is opened or viewed as xarray.
ASSIGN = re.compile(r"^\s*(\w+)\s*=(?!=)(.*)$")
WITH = re.compile(r"(?:open_dataset|to_xarray)\(.*\)\s+as\s+(\w+)")
XARRAY = re.compile(r"open_dataset\(|to_xarray\(")


def test_docs_reach_xarray_data_by_item_not_attribute():
    pages = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    methods = set(dir(xr.Dataset))
    bad = []
    for page in pages:
        xarray_names = set()          # bound to a Dataset, line by line (until rebound)
        in_code = False               # the code blocks: prose may name another `cell`
        for line_no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if not in_code:
                continue
            for name in xarray_names:
                for m in re.finditer(rf"\b{name}\.(\w+)", line):
                    if m.group(1) not in methods:
                        bad.append(f"{page.relative_to(ROOT)}:{line_no}: {m.group(0)}")
            a = ASSIGN.match(line)
            if a:
                (xarray_names.add if XARRAY.search(a.group(2)) else xarray_names.discard)(a.group(1))
            xarray_names.update(WITH.findall(line))
    assert bad == [], "use ds[\"name\"] for data:\n" + "\n".join(bad)
