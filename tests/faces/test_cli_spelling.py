"""One spelling per idea across the subcommands: a user who learnt
``--levels`` in one command, or ``-o`` for where output goes, can use it in
every other, each subcommand says what it does in its help, and a help that
points at a page names one that exists."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT
from stormsim.cli import main
from stormsim.cli_parser import parser


def _sub(name: str):
    (group,) = [a for a in parser()._actions if a.dest == "command"]
    return group.choices[name]


def _options(name: str) -> set[str]:
    return {o for a in _sub(name)._actions for o in a.option_strings}


@pytest.mark.parametrize("command", ["inspect", "risk", "report"])
def test_levels_are_spelled_levels_everywhere(command):
    assert "--levels" in _options(command)
    assert "--tail" not in _options(command)          # no alias: one spelling


@pytest.mark.parametrize("command", ["sweep", "report", "demo"])
def test_where_output_goes_is_spelled_o_output_everywhere(command):
    opts = _options(command)
    assert {"-o", "--output"} <= opts and not {"--dir", "--outdir"} & opts
    (out,) = [a for a in _sub(command)._actions if "-o" in a.option_strings]
    # the help says which it is: a file for sweep, a folder for the others
    assert ("file" if command == "sweep" else "folder") in out.help


@pytest.mark.parametrize("command", ["sweep", "inspect", "risk", "report", "demo"])
def test_every_command_describes_itself(command):
    assert _sub(command).description and len(_sub(command).description) > 40


def _help_texts() -> list[str]:
    """Every description and help of the command line: the top level's and each subcommand's."""
    (group,) = [a for a in parser()._actions if a.dest == "command"]
    parsers = [parser(), *group.choices.values()]
    return [t for p in parsers for t in (p.description, *(a.help for a in p._actions)) if t]


def test_the_pages_a_help_points_at_exist():
    """A docs/ page named in a help is a file of docs/, and a README section
    named as README '...' is one of the README's headings."""
    texts = _help_texts()
    pages = [m for t in texts for m in re.findall(r"docs/[\w/.-]*\.md", t)]
    assert "docs/sweeps.md" in pages           # the sweep file's help: the sweeps page
    for page in pages:
        assert (ROOT / page).is_file(), f"a help names {page}, which does not exist"
    headings = set(re.findall(r"^#+ (.+)$", (ROOT / "README.md").read_text(), re.M))
    for section in (m for t in texts for m in re.findall(r"README '([^']+)'", t)):
        assert section in headings, f"a help names README '{section}': the README has no such section"


def test_the_old_spellings_are_refused(capsys):
    with pytest.raises(SystemExit) as e:
        main(["inspect", "x.h5", "--tail", "2"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        main(["demo", "--dir", "somewhere"])
    capsys.readouterr()


def test_report_counts_its_figures_in_words(tmp_path, capsys):
    """One figure is 'wrote 1 figure', not '1 figures'."""
    pytest.importorskip("matplotlib")
    from stormsim import run_sweep
    from stormsim.sweep.spec import parse_sweep

    # no grid, fleets stopped at their passage (no occupancy): the survival figure alone
    sweep = parse_sweep('[sweep]\nname = "one"\n[fixed]\nN = 4\nload = 0.5\njitter = 0.02\n'
                        'passage_level = 2\ncycles = 40\nfleets = 4\n', "one.toml")
    run_sweep(sweep, tmp_path / "one.h5", progress="none")
    assert main(["report", str(tmp_path / "one.h5"), "-o", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr().out
    assert "wrote 1 figure and report.md" in out, out
