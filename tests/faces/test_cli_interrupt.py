"""Ctrl-C anywhere in the ``stormsim`` program: one line and exit 130, no
traceback; plan hears SIGINT even where it started with SIGINT ignored (a
start in the background), as the sweep does. In process, without a plan
run: the signal is sent to this process while a fake plan waits for it."""
from __future__ import annotations

import os
import signal
import sys
import time

import pytest

import stormsim.fleetplan
from stormsim import _interrupt
from stormsim import cli
from stormsim.cli import main

ARGS = ["plan", "--jobs", "12", "--size", "840GB", "--interval", "30min", "--bandwidth",
        "40GB/s", "--jitter", "36s", "-q"]


@pytest.fixture
def signalled(monkeypatch):
    """plan replaced by one that sends itself a signal and waits for it."""
    def fake(fleet, levels, **kw):
        os.kill(os.getpid(), fake.signum)
        time.sleep(5)                       # the handler raises before this ends
        raise AssertionError("the signal was not heard")
    fake.signum = signal.SIGINT
    monkeypatch.setattr(stormsim.fleetplan, "plan", fake)
    return fake


@pytest.mark.parametrize("inherited", [signal.default_int_handler, signal.SIG_IGN],
                         ids=["default", "ignored"])
def test_ctrl_c_during_plan_is_one_line_and_130_even_if_sigint_was_ignored(
        signalled, inherited, capsys):
    previous = signal.signal(signal.SIGINT, inherited)
    try:
        assert main(ARGS) == 130
        assert signal.getsignal(signal.SIGINT) is inherited        # put back after the plan
    finally:
        signal.signal(signal.SIGINT, previous)
    err = capsys.readouterr().err
    assert err == "stormsim plan: interrupted (Ctrl-C): no table printed\n"


def test_sigterm_during_plan_is_one_line_and_143(signalled, capsys):
    signalled.signum = signal.SIGTERM
    assert main(ARGS) == 143
    assert capsys.readouterr().err == "stormsim plan: interrupted (SIGTERM): no table printed\n"


def test_ctrl_c_outside_a_command_s_handler_is_one_line_and_130(monkeypatch, capsys):
    def parser():
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "parser", parser)
    assert main(["plan"]) == 130
    assert capsys.readouterr().err == "stormsim: interrupted (Ctrl-C)\n"


@pytest.mark.parametrize("argv, orig, program", [
    (["/venv/bin/stormsim", "plan"], None, True),
    (["-m"], ["python", "-m", "stormsim", "plan"], True),
    (["/x/__main__.py"], ["python3", "-X", "importtime", "-m", "stormsim"], True),
    (["-c"], ["python", "-c", "import stormsim"], False),
    (["/usr/bin/pytest"], ["python", "-m", "pytest"], False),
])
def test_the_program_is_its_script_or_dash_m_stormsim(monkeypatch, argv, orig, program):
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig or argv, raising=False)
    assert _interrupt.is_program() == program


def test_while_loading_the_program_s_ctrl_c_is_one_line_and_130(monkeypatch, capsys):
    """The handler the program has while it loads: one line, exit 130 at once;
    a session importing stormsim keeps its own (nothing installed)."""
    exits = []
    monkeypatch.setattr(os, "_exit", exits.append)
    _interrupt._quit(signal.SIGINT, None)
    assert exits == [130]
    assert capsys.readouterr().err == "stormsim: interrupted (Ctrl-C) while loading\n"
    monkeypatch.setattr(_interrupt, "is_program", lambda: False)
    assert _interrupt.while_loading() is None
    monkeypatch.setattr(_interrupt, "is_program", lambda: True)
    previous = _interrupt.while_loading()
    try:
        assert signal.getsignal(signal.SIGINT) is _interrupt._quit
    finally:
        _interrupt.loaded(previous)
    assert signal.getsignal(signal.SIGINT) is previous
