"""Shared by every test: the project's root, and the end-to-end folder marked slow."""
import os
import sys
from pathlib import Path

import pytest

#: The project's root (the folder with pyproject.toml): the one definition.
ROOT = Path(__file__).resolve().parents[1]

# tests/reference.py and the helpers beside it are imported as plain modules.
sys.path.insert(0, os.path.dirname(__file__))

#: Tests under this folder run real processes, clusters, ptys or scripts: all
#: slow by where they live (``make test-fast`` skips them).
SLOW_FOLDER = Path(__file__).resolve().parent / "e2e"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FOLDER in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slow)
