"""HDF5 files compared bit for bit, for the sweep tests."""
import h5py
import numpy as np


def datasets(path):
    """Every dataset as (dtype, shape, bytes or strings), and every attribute."""
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            if h5py.check_string_dtype(obj.dtype):      # (a 0-d one reads as a str)
                data = tuple(np.asarray(obj.asstr()[()], dtype=object).ravel().tolist())
            else:
                data = obj[()].tobytes()
            out[name] = (obj.dtype.str, obj.shape, data)
        out[name + "/@"] = sorted((k, str(v)) for k, v in obj.attrs.items())

    with h5py.File(path, "r") as f:
        f.visititems(visit)
        out["/@"] = sorted((k, str(v)) for k, v in f.attrs.items())
    return out
