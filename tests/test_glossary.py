"""stormsim.glossary: every quantity's one name is where the table says, and
its old names still read (with a warning) and nowhere else."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

import stormsim
from stormsim import fleetplan
from stormsim.store import cellresult
from stormsim.glossary import QUANTITIES, Quantity
from stormsim.stats.summary import BY_LEVEL, RAMP_ARRAYS, SCALARS
from stormsim.store.cellresult import FAILURE_FLEET_ARRAYS, POWER_FLEET_ARRAYS
from stormsim.store.layout import CELL_DIMS, FLEET_ARRAYS
from stormsim.sweep.work import FAILURE_ARRAYS, POWER_ARRAYS
from stormsim.sweep.cellrisk import PER_DAY, RISK_ARRAYS, RISK_SCALARS
from stormsim.sweep.keys import KEYS


def _class(name: str):
    return getattr(stormsim, name, None) or getattr(fleetplan, name, None) or getattr(cellresult, name)


def _has(cls, attr: str) -> bool:
    """A dataclass field or a class attribute (a property, a derived array)."""
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    return attr in fields or attr in vars(cls) or any(attr in vars(b) for b in cls.__mro__)


def api_missing(q: Quantity) -> list[str]:
    """The API places of q that do not have the name."""
    out = []
    for place in q.api:
        if place.endswith(")"):
            func, param = place[:-1].split("(")
            owner, _, attr = func.rpartition(".")
            fn = getattr(_class(owner), attr) if owner else getattr(stormsim, func)
            if param not in inspect.signature(fn).parameters:
                out.append(place)
        else:
            cls, attr = place.split(".")
            if not _has(_class(cls), attr):
                out.append(place)
    return out


FILE_NAMES = {
    "summary": set(SCALARS) | set(BY_LEVEL) | set(RAMP_ARRAYS),
    "risk": {a.name for a in RISK_ARRAYS + RISK_SCALARS} | set(PER_DAY),
    "key": {k.name for k in KEYS},
    "file": (set(FLEET_ARRAYS) | set(FAILURE_FLEET_ARRAYS) | set(FAILURE_ARRAYS)
             | set(POWER_FLEET_ARRAYS) | set(POWER_ARRAYS) | set(CELL_DIMS)),
}


def files_missing(q: Quantity) -> list[str]:
    return [place for place in q.files
            if place.partition(":")[2] not in FILE_NAMES[place.partition(":")[0]]]


def old_not_kept(q: Quantity) -> list[str]:
    """Old names that are still a current name, or that no longer read the new one."""
    out = []
    for place in q.old:
        cls_name, old = place.split(".")
        cls = _class(cls_name)
        mapping = getattr(getattr(cls, "__getattr__", None), "renamed", {})
        current = {f.name for f in dataclasses.fields(cls)} | set(vars(cls))
        if old in current or mapping.get(old, "").split(".")[0] not in current:
            out.append(place)
    return out


@pytest.mark.parametrize("q", QUANTITIES, ids=lambda q: q.name)
def test_each_quantity_has_its_name_where_the_glossary_says(q):
    assert api_missing(q) == []
    assert files_missing(q) == []
    assert old_not_kept(q) == []


def test_no_name_is_two_quantities():
    names = [q.name for q in QUANTITIES]
    assert len(names) == len(set(names))


def test_the_checkers_see_a_wrong_entry():
    """Negative controls: a place without the name, a file name that is not
    written and an old name that is still a field are each reported."""
    bad = Quantity("x", "", "1", "", api=("StationaryLaw.tail", "storm_risk(level)"),
                   files=("summary:tail", "risk:risk_tail"), old=("StationaryLaw.p_ge",))
    assert api_missing(bad) == ["StationaryLaw.tail", "storm_risk(level)"]
    assert files_missing(bad) == ["summary:tail", "risk:risk_tail"]
    assert old_not_kept(bad) == ["StationaryLaw.p_ge"]


def test_an_old_name_reads_the_new_one_with_a_warning():
    law = stormsim.stationary(stormsim.Fleet.identical(3, load=0.5, jitter=0.01))
    with pytest.warns(DeprecationWarning, match="StationaryLaw.tail is now StationaryLaw.p_ge"):
        assert law.tail is not None
