"""docs/reference.md documents every command and option the CLI has; README opens with the two set-up
commands and stays a page; every command shown in README and docs/ runs as written."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rulecli.cli.app import ORDER, _build
from tests.conftest import ROOT, run_cli, slow_for

README = (ROOT / "README.md").read_text()
REFERENCE = (ROOT / "docs" / "reference.md").read_text()
# docs/commands.md is generated; its examples are the commands' own, run by the help test below
DOCS = [README, *(path.read_text() for path in sorted((ROOT / "docs").glob("*.md")) if path.name != "commands.md")]


def test_readme_opens_with_demo_and_test_and_fits_a_page():
    head = "\n".join(README.splitlines()[:40])
    assert "make demo" in head and "make test" in head
    assert len(README) <= 15_000  # the user's page; the reference is docs/


def _reference_script():
    spec = importlib.util.spec_from_file_location("reference", ROOT / "scripts" / "reference.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_generated_command_reference_is_current():
    expected = _reference_script().reference()
    assert (ROOT / "docs" / "commands.md").read_text() == expected, "docs/commands.md: run make reference"


def test_the_example_report_page_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """README links docs/report-example.html; make reference writes it with these commands."""
    monkeypatch.chdir(ROOT)  # the page names the files as they were given
    model = os.path.relpath(tmp_path / "penguins.tree.json", ROOT)
    assert run_cli("tree", "sample_data/penguins.csv", "-y", "species", "-q", "-o", model).code == 0
    page = run_cli("report", model, "sample_data/penguins.csv", "-q").stdout
    expected = page.replace(model, "build/penguins.tree.json")
    assert (ROOT / "docs" / "report-example.html").read_text() == expected, "docs/report-example.html: make reference"
    assert (ROOT / "docs" / "report-example.png").exists()


@pytest.mark.parametrize("name", ORDER)
def test_every_command_and_option_is_documented(name: str):
    assert f"### `rulecli {name}`" in REFERENCE, f"docs/reference.md has no section for {name}"
    section = REFERENCE.split(f"### `rulecli {name}`", 1)[1].split("\n### ", 1)[0]
    for param in _build(name).params:
        if type(param).__name__.endswith("Option") and param.opts != ["--help-all"]:  # as --help
            longest = max(param.opts, key=len)
            assert longest in section, f"{name}: {longest} is not documented"


def _examples(name: str) -> list[str]:
    return [line.strip() for line in (_build(name).help or "").splitlines() if line.strip().startswith("rulecli ")]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory that looks like the repo root to a command: sample_data/ is there."""
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", slow_for(list(ORDER)))
def test_every_command_help_has_examples_that_run_from_the_repo_root(name: str, scratch: Path):
    examples = _examples(name)
    assert 2 <= len(examples) <= 4, (name, examples)
    for line in examples:
        result = run_cli(*shlex.split(line)[1:])
        # diff exits 1 when the models differ, as diff does
        assert result.code in ((0, 1) if line.startswith("rulecli diff ") else (0,)), (line, result.stderr)


def _readme_scripts() -> list[str]:
    """Each shell block of README and docs/ as a script: its '$ ' lines, or all of it when it has none."""
    scripts = []
    for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", "\n".join(DOCS), flags=re.S):
        lines = block.splitlines()
        prompted = [line[2:] for line in lines if line.startswith("$ ")]
        script = "\n".join(prompted) if prompted else block
        if not re.search(r"^\s*(\$ )?rulecli ", block, flags=re.M):
            continue
        if re.search(r"\b(make|duckdb|pip|git|spark-submit|java)\b", script):
            continue  # needs a tool the test machine may lack, or is the set-up itself
        scripts.append(script)
    return scripts


def test_readme_commands_run_as_written(scratch: Path):
    scripts = _readme_scripts()
    assert len(scripts) >= 5
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    for script in scripts:
        proc = subprocess.run(["bash", "-c", script], cwd=scratch, env=env, capture_output=True, text=True, timeout=300)
        assert "Error:" not in proc.stderr and "Traceback" not in proc.stderr, (script, proc.stderr)


# names whose help reads differently per command for the same meaning: where this command
# writes, its JSON output, the target column, and how its rules vote, list or are capped
WORDED_PER_COMMAND = {
    "--output",
    "-o",
    "--json",
    "--target",
    "-y",
    "--vote",
    "--unordered",
    "--max-rules",
    "--costs",
    "--monotone",
}


def test_every_option_name_has_one_meaning_and_one_type_across_commands():
    seen: dict[str, set[tuple[str, str]]] = {}
    shorts: dict[str, set[str]] = {}
    for name in ORDER:
        for param in _build(name).params:
            if param.param_type_name != "option" or (param.hidden and not getattr(param, "folded", False)):
                continue
            kind = "flag" if param.is_flag else param.bare_type()
            longest = max(param.opts, key=len)
            for opt in (*param.opts, *param.secondary_opts):
                seen.setdefault(opt, set()).add((kind, "" if opt in WORDED_PER_COMMAND else param.help or ""))
                if not opt.startswith("--"):
                    shorts.setdefault(opt, set()).add(longest)
    differing = {opt: sorted(v) for opt, v in seen.items() if len(v) > 1}
    assert not differing, differing
    shared = {opt for opt in WORDED_PER_COMMAND if opt.startswith("--")}
    assert shared == set(_reference_script().ONE_MEANING), "the generated vocabulary states each one meaning"
    assert all(len(longs) == 1 for longs in shorts.values()), shorts


@pytest.mark.parametrize("name", ORDER)
def test_every_command_takes_quiet(name: str):
    flags = {opt for param in _build(name).params for opt in getattr(param, "opts", [])}
    assert {"--quiet", "-q"} <= flags, name


@pytest.mark.parametrize("name", ["oner", "forest", "predict"])
def test_help_keeps_to_what_most_runs_set_and_help_all_shows_the_rest(name: str):
    short, every = run_cli(name, "--help"), run_cli(name, "--help-all")
    assert short.code == every.code == 0
    assert "--help-all" in short.stdout and "--null-values" in every.stdout
    assert "--encoding" not in short.stdout and "--encoding" in every.stdout
    assert short.stdout.count("\n") < every.stdout.count("\n")
    if name != "predict":  # a learner's help: about a screenful or two at 80 columns
        assert short.stdout.count("\n") <= 110, short.stdout.count("\n")


def test_readme_python_runs_as_written(scratch: Path):
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})  # the README's own example, run as a user would


def test_a_flags_negative_form_is_named_in_its_text_not_in_a_column_of_its_own(tmp_path: Path):
    # a column of --no-… forms took a fifth of 80 columns and squeezed every option's text
    # into 17 (ripper's help ran to 117 lines); the negative form still parses
    shown = subprocess.run(
        [sys.executable, "-m", "rulecli", "ripper", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80", "NO_COLOR": "1"},
        check=True,
    ).stdout
    assert "Off: --no-pruning." in shown
    assert not re.search(r"│ --pruning +--no-pruning", shown)
    assert shown.count("\n") < 100
    data = str(ROOT / "sample_data" / "penguins.csv")
    assert run_cli("ripper", data, "-y", "species", "--no-default-check", "--no-pruning", "-q").code == 0


@pytest.mark.parametrize("command", ORDER)
def test_every_commands_help_fits_in_100_lines_at_80_columns(command: str, monkeypatch: pytest.MonkeyPatch):
    # reduct's help ran to 129 lines, forest's and evaluate's past 100: the settings
    # cross-validation chooses wait for --help-all, numbers' kinds are short (INT, NUM)
    monkeypatch.setenv("COLUMNS", "80")
    shown = run_cli(command, "--help")
    assert shown.code == 0 and 10 < shown.stdout.count("\n") < 100, (command, shown.stdout.count("\n"))
