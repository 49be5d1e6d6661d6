"""A permission the system refuses (a real one needs a user other than root,
which these tests run as: the refusal is raised where the OS would): one
sentence naming the path, why and what to do, exit 3; never '[Errno 13]'."""
from __future__ import annotations

import errno
from pathlib import Path

import pytest

from stormsim.cli import main
from stormsim.errors import EXIT_ENVIRONMENT


@pytest.mark.parametrize("argv", [["demo", "-o", "{d}/demo"], ["report", "x.h5", "-o", "{d}/rep"]],
                         ids=["demo", "report"])
def test_a_permission_refused_is_one_sentence_and_exit_3(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    if argv[0] == "report":              # the report opens its result before its folder
        pytest.importorskip("matplotlib")
        import stormsim.report as report
        monkeypatch.setattr(report, "open_results", lambda path: None)
    monkeypatch.setattr(Path, "mkdir", _denied)
    assert main([a.format(d=tmp_path) for a in argv]) == EXIT_ENVIRONMENT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Errno" not in err, err
    assert f"{tmp_path}/" in err and "permission denied" in err and "(-o)" in err, err


def _denied(self, *a, **k):
    raise PermissionError(errno.EACCES, "Permission denied", str(self))
