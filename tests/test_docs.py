"""The documentation cannot drift: generated pages equal a fresh generation, the
README's layout lists every module, the guides' code runs and prints what they
show, and the site builds without a warning."""
from __future__ import annotations

import importlib.util
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
import tomllib

import pytest

from stormsim.cli import main
from conftest import ROOT
from docblocks import blocks, python_blocks, run_python_blocks, shell_commands

DOCS = ROOT / "docs"
GUIDES = sorted(DOCS.glob("guide-*.md"))
#: Pages whose Python blocks a test runs: the guides and the site's home page.
RUN = [DOCS / "index.md", *GUIDES]
#: Modules of stormsim/ the README's layout need not list (plumbing, not places to look).
UNLISTED = {"__init__", "__main__", "_version", "_format", "_args", "errors", "_deprecated",
            "_interrupt"}


def _generator():
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- fast ----------------------------------------------------------------------------

def test_reference_pages_are_what_the_code_generates():
    gen = _generator()
    pages = gen.render()
    assert set(pages) == {"keys.md", "outputs.md", "api.md", "glossary.md", "plan.md"}
    for name, text in pages.items():
        committed = (DOCS / "reference" / name).read_text()
        assert committed == text, (f"docs/reference/{name} differs from what the code generates: "
                                   "run python docs/gen_reference.py (make docs) and commit it")


def test_reference_pages_cover_their_tables():
    from stormsim.fleetplan import PLAN_OUTPUTS, ROW_OUTPUTS, csv_columns
    from stormsim.sweep.cellrisk import RISK_ARRAYS, RISK_SCALARS
    from stormsim.sweep.keys import KEYS, SWEEP_KEYS
    from stormsim.sweep.work import RESULT_ARRAYS

    import stormsim

    keys = (DOCS / "reference" / "keys.md").read_text()
    for k in KEYS:
        assert re.search(rf"^\| `{re.escape(k.name)}`[ |]", keys, re.M), k.name
    for k in SWEEP_KEYS:
        assert f"| `{k}` |" in keys, k
    outputs = (DOCS / "reference" / "outputs.md").read_text()
    for a in RESULT_ARRAYS + RISK_ARRAYS + RISK_SCALARS:
        assert f"| `{a.name}` |" in outputs, a.name
    plan = (DOCS / "reference" / "plan.md").read_text()
    for o in PLAN_OUTPUTS + ROW_OUTPUTS:
        assert re.search(rf"^\| `{o.name}` \| [^|]+ \| [^|]+ \|", plan, re.M), o.name
    for column in csv_columns():
        assert f"`{column}`" in plan, column
    api = (DOCS / "reference" / "api.md").read_text()
    for name in stormsim.__all__:
        if not name.startswith("__"):
            assert f"::: stormsim.{name}\n" in api, name


def _layout_items() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "the README has no ## Layout section"
    items = re.findall(r"^- `([^`]+)`", section.group(1), re.M)
    assert items, "the README's ## Layout has no list items starting with a path in backticks"
    return items


def test_readme_layout_lists_every_wing_and_face():
    listed = _layout_items()
    package = ROOT / "stormsim"
    wanted = sorted(
        [f"stormsim/{p.name}/" for p in package.iterdir()
         if p.is_dir() and (p / "__init__.py").exists()]
        + [f"stormsim/{p.name}" for p in package.glob("*.py") if p.stem not in UNLISTED])
    missing = [w for w in wanted if w not in listed]
    assert not missing, f"the README's ## Layout does not list {missing}"
    for path in listed:
        assert (ROOT / path).exists(), f"the README's ## Layout lists {path}, which does not exist"
        if path.endswith("/"):
            assert (ROOT / path).is_dir(), path


def test_readme_is_short_and_keeps_its_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert "make demo" in text and "make test" in text


#: The programs a venv's bin/ holds besides the project's own commands.
VENV_PROGRAMS = {"python", "python3", "pip"}


def not_runnable_after_make_demo(markdown: str, targets: set[str], commands: set[str]) -> list[str]:
    """The shell lines of a page a new user could not run as written in a fresh
    clone after ``make demo``: each must be ``make`` with the Makefile's
    targets, a program of ``.venv/bin/`` (the project's ``commands`` or python,
    pip), such a program bare after ``source .venv/bin/activate``, or marked
    ``# illustrative``."""
    venv, activated, bad = commands | VENV_PROGRAMS, False, []
    for line in shell_commands(markdown):
        if re.search(r"#.*\billustrative\b", line):
            continue
        words = shlex.split(line, comments=True)
        if words[0] == "make":
            ok = all(w in targets for w in words[1:] if "=" not in w)
        elif words[0] in ("source", ".") and words[1:] == [".venv/bin/activate"]:
            ok = activated = True
        elif words[0].startswith(".venv/bin/"):
            ok = words[0].removeprefix(".venv/bin/") in venv
        else:
            ok = activated and words[0] in venv
        if not ok:
            bad.append(line)
    return bad


def test_readme_shell_commands_run_as_written_after_make_demo():
    """`stormsim: command not found` never again: every command of the README's
    shell blocks runs as written in a fresh clone after `make demo` (the
    commands run for real in tests/e2e/test_readme.py)."""
    makefile = (ROOT / "Makefile").read_text()
    targets = {t for line in re.findall(r"^([\w. -]+):(?!=)", makefile, re.M)
               for t in line.split() if not t.startswith(".")}
    commands = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
    assert {"demo", "test"} <= targets and "stormsim" in commands
    assert not_runnable_after_make_demo((ROOT / "README.md").read_text(), targets, commands) == []


def test_the_runnable_checker_sees_a_bare_command():
    page = ("```sh\nmake demo  # a comment\n.venv/bin/stormsim plan x\nstormsim sweep a.toml\n"
            "python x.py\nmake nothing\n.venv/bin/other\nstormsim y  # illustrative\n```\n\n"
            "```sh\nsource .venv/bin/activate\nstormsim inspect a.h5\npython -m stormsim\n```\n"
            "```python\nstormsim = 1\n```\n")
    assert not_runnable_after_make_demo(page, {"demo", "test"}, {"stormsim"}) == [
        "stormsim sweep a.toml", "python x.py", "make nothing", ".venv/bin/other"]


def test_docs_name_no_machine_paths_commits_or_issues():
    pages = [ROOT / "README.md", *DOCS.glob("*.md"), *(DOCS / "reference").glob("*.md")]
    for page in pages:
        text = page.read_text()
        for pattern in (r"/work/", r"/home/", r"\bissue \d+", r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)"
                                                               r"[0-9a-f]{7,40}\b"):
            found = re.search(pattern, text, re.I if "issue" in pattern else 0)
            assert not found, f"{page.name}: {found.group(0)!r}"


def test_model_is_the_shared_model():
    shared = ROOT.parent / "shared" / "MODEL.md"
    if not shared.exists():
        pytest.skip("no shared/MODEL.md beside this tree")
    assert (DOCS / "MODEL.md").read_bytes() == shared.read_bytes()


def test_site_nav_lists_every_page_and_nothing_else():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                yield from pages(value)
            else:
                yield value

    nav = sorted(pages(config["nav"]))
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert nav == on_disk
    assert config["strict"] is True


def test_guides_have_python_blocks_with_outputs():
    assert [g.name for g in GUIDES] == ["guide-operators.md", "guide-researchers.md"]
    for guide in GUIDES:
        python = python_blocks(guide.read_text())
        assert len(python) >= 4, guide.name
        assert sum(b.output is not None for b in python) >= 3, guide.name


# -- slow ------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("page", RUN, ids=lambda p: p.stem)
def test_page_python_blocks_run_and_print_what_they_show(page, tmp_path, monkeypatch):
    assert run_python_blocks(page, tmp_path, monkeypatch) == len(python_blocks(page.read_text()))


@pytest.mark.slow
def test_operators_guide_commands_print_what_it_shows(tmp_path, monkeypatch, capsys):
    guide = DOCS / "guide-operators.md"
    text = guide.read_text()
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    # "Three fleets from public figures": each shell block and the output shown below it.
    found = blocks(text)
    shown = [(re.fullmatch(r"python (examples/physical_fleets.py) ([\w-]+)\n", b.text), found[i + 1])
             for i, b in enumerate(found) if b.lang == "sh" and "physical_fleets.py" in b.text]
    assert [m.group(2) for m, _ in shown] == ["hpc", "pod", "object-store"]
    for m, output in shown:
        assert output.lang == ""
        monkeypatch.setattr("sys.argv", [m.group(1), m.group(2)])
        runpy.run_path(m.group(1), run_name="__main__")
        assert capsys.readouterr().out == output.text, m.group(2)   # every line, digit for digit
    # "A sweep in physical units": the sweep file, and the rows shown
    assert main(["sweep", "examples/gpu_pod_bandwidth.toml", "-o", "pod.h5", "-q"]) == 0
    capsys.readouterr()
    assert main(["inspect", "pod.h5", "--levels", "2,3,4"]) == 0
    table = capsys.readouterr().out
    rows = re.search(r"stormsim inspect pod.h5 --levels 2,3,4\n```\n\n```\n(.*?)```", text,
                     re.S).group(1)
    rows = [line for line in rows.splitlines() if line.strip()]
    assert len(rows) == 4
    for line in rows:
        assert line in table, line


@pytest.mark.slow
def test_site_builds_strict_without_warnings(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    assert "WARNING" not in log, log
    for page in ("index.html", "guide-operators/index.html", "reference/keys/index.html",
                 "reference/api/index.html"):
        assert (tmp_path / "site" / page).exists(), page
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "storm_risk" in api and "Parameters" in api
    # plan's numpy sections: one row per parameter, its type in the Type column
    plan = api[api.index('id="stormsim.plan"'):]
    plan = plan[:plan.index("Raises:")]
    rows = re.findall(r"<td>\s*<code>(\w+)</code>\s*</td>\s*<td>\s*<code>(.*?)</code>", plan, re.S)
    assert [name for name, _ in rows] == ["fleet", "levels", "what_if", "watchdog", "max_seconds",
                                          "seed", "max_writers", "snapshot", "slowdown", "mtbf",
                                          "restart", "outage_mtbf", "drops", "progress"]
    assert all(len(re.sub(r"<[^>]+>", "", kind)) <= 30 for _, kind in rows) and "``" not in plan
    assert "<code>Fleet.from_jobs</code>" in plan
    assert (tmp_path / "site" / "reference" / "plan" / "index.html").exists()
