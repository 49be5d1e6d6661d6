"""Old names kept one release: attribute aliases that warn.

A class whose attributes were renamed sets ``__getattr__ = renamed(...)``:
reading an old name returns the new attribute's value with a
DeprecationWarning naming the new spelling; any other missing name is the
usual AttributeError. A new name may be a dotted path
("stagger_hours.lo"). ``__getattr__`` runs only when normal lookup fails, so
the current names cost nothing.
"""
from __future__ import annotations

import warnings

__all__ = ["UNSET", "moved", "old_keyword", "renamed"]

#: The default of a deprecated keyword: "not given".
UNSET = object()


def renamed(cls_name: str, old_to_new: dict[str, str]):
    """A ``__getattr__`` for class ``cls_name`` mapping each old name to its new one."""

    def __getattr__(self, name):
        new = old_to_new.get(name)
        if new is None:
            raise AttributeError(f"{cls_name!r} object has no attribute {name!r}")
        warnings.warn(f"{cls_name}.{name} is now {cls_name}.{new}; the old name goes in the "
                      "next release", DeprecationWarning, stacklevel=2)
        value = self
        for part in new.split("."):
            value = getattr(value, part)
        return value

    __getattr__.renamed = dict(old_to_new)     # read by the glossary's test
    return __getattr__


def old_keyword(where: str, old: str, new: str, given, current):
    """A renamed keyword argument: the old one's value (with a DeprecationWarning
    naming the new spelling) where it was given, else the new one's."""
    if given is UNSET:
        return current
    warnings.warn(f"{where}({old}=...) is now {where}({new}=...); the old keyword goes in the "
                  "next release", DeprecationWarning, stacklevel=3)
    return given


def moved(module: str, old: str, new_name: str, new):
    """A module ``__getattr__``: ``module.old`` reads ``new`` (spelled ``new_name``)
    with a DeprecationWarning; any other missing name is the usual AttributeError."""

    def __getattr__(name):
        if name != old:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{old} is now {new_name}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return new

    return __getattr__
