"""Both examples' datasets stay bit-identical to the golden outputs.

tests/golden/examples.json holds, for every dataset of the results of
``stormsim sweep examples/stagger_survival.toml`` and ``examples/tail_sweep.toml``
at algorithm version 2 (stormsim 0.2.0; version 3, a splitting interval
rule, versions 4 and 5, splitting for async, weighted and capped fleets,
changed none of them), its dtype, shape and the sha256 of its values.
The test
runs both examples and compares every one of those datasets by path: a
refactor, a new layout or a new writer may add datasets and attributes, but
must not change one value of these. Regenerate (only for a deliberate change
of numbers, which bumps the algorithm version and is explained in the
commit) with::

    python tests/e2e/test_golden.py stagger=PATH.h5 tail=PATH.h5 > tests/golden/examples.json
"""
import hashlib
import json
import sys

import pytest

from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden" / "examples.json"
EXAMPLES = ROOT / "examples"
SWEEPS = {"stagger": "stagger_survival.toml", "tail": "tail_sweep.toml"}


def digests(path) -> dict:
    """Every dataset of an HDF5 file -> {dtype, shape, sha256 of its values}.

    Numbers are hashed as their raw little-endian bytes; strings as the JSON
    list of their values (so the string storage type does not matter)."""
    import h5py
    import numpy as np

    out = {}

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        if h5py.check_string_dtype(obj.dtype):
            vals = obj.asstr()[()]
            data = json.dumps(np.asarray(vals, dtype=object).ravel().tolist()).encode()
            dtype = "str"
        else:
            arr = obj[()]
            data = np.ascontiguousarray(arr).tobytes()
            dtype = arr.dtype.str
        out[name] = {"dtype": dtype, "shape": list(obj.shape),
                     "sha256": hashlib.sha256(data).hexdigest()}

    def walk(group, prefix):
        # every link, not every object: a layout may hard-link one dataset
        # under two names (visititems would report only one of them)
        for key in group:
            obj = group[key]
            name = f"{prefix}{key}"
            if isinstance(obj, h5py.Group):
                walk(obj, name + "/")
            else:
                visit(name, obj)

    with h5py.File(path, "r") as f:
        walk(f, "")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SWEEPS))
def test_example_datasets_are_bit_identical_to_golden(name, tmp_path):
    from stormsim import load_sweep, run_sweep

    golden = json.loads(GOLDEN.read_text())[name]
    out = tmp_path / f"{name}.h5"
    outcome = run_sweep(load_sweep(EXAMPLES / SWEEPS[name]), out, progress="none")
    assert outcome.status == "complete"
    now = digests(out)
    missing = sorted(set(golden) - set(now))
    assert not missing, f"{name}: datasets gone: {missing[:5]}"
    changed = sorted(k for k in golden if now[k] != golden[k])
    assert not changed, (f"{name}: {len(changed)} datasets changed, e.g. {changed[0]}: "
                         f"{now[changed[0]]} != golden {golden[changed[0]]}")


if __name__ == "__main__":
    doc = {}
    for arg in sys.argv[1:]:
        key, _, path = arg.partition("=")
        doc[key] = digests(path)
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
