"""HDF5 files compared bit for bit, for the sweep tests."""
import h5py


def datasets(path):
    """Every dataset as (dtype, shape, bytes or strings), and every attribute."""
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            data = (tuple(obj.asstr()[()].tolist()) if h5py.check_string_dtype(obj.dtype)
                    else obj[()].tobytes())
            out[name] = (obj.dtype.str, obj.shape, data)
        out[name + "/@"] = sorted((k, str(v)) for k, v in obj.attrs.items())

    with h5py.File(path, "r") as f:
        f.visititems(visit)
        out["/@"] = sorted((k, str(v)) for k, v in f.attrs.items())
    return out
