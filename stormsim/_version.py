"""The versions, in one place (pyproject.toml reads ``__version__`` from here)."""
__version__ = "0.3.0"

#: The algorithm version: what a given input, seed and setting produce. It is
#: recorded with every result and unit, and a resume refuses another one by
#: name. Bump it with any change of a default or a rule that changes numbers
#: (never add a legacy option to keep old numbers); a release that changes
#: no number keeps it.
ALGORITHM_VERSION = 5
