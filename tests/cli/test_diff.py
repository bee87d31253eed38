"""diff: hand-made model pairs with known differences, through the command."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import SAMPLE, run_cli

OLD_LIST = """\
IF age >= 42 AND income = 'high' THEN buys = 'yes'  (covers 30, correct 28)
IF region = 'north' THEN buys = 'no'  (covers 20, correct 18)
IF age < 20 THEN buys = 'no'  (covers 5, correct 5)
ELSE buys = 'no'  (covers 45, correct 40)
"""
NEW_LIST = """\
IF income = 'high' AND age >= 45 THEN buys = 'yes'  (covers 27, correct 26)
IF region = 'north' THEN buys = 'no'  (covers 21, correct 19)
ELSE buys = 'yes'  (covers 52, correct 30)
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _data(tmp_path: Path) -> str:
    frame = pl.DataFrame(
        {
            "age": [50.0, 43.0, 30.0, 18.0, 60.0, None],
            "income": ["high", "high", "low", "low", "high", "high"],
            "region": ["south", "north", "north", "south", "south", "south"],
            "buys": ["yes", "yes", "no", "no", "no", "yes"],
        }
    )
    path = tmp_path / "d.csv"
    frame.write_csv(path)
    return str(path)


def test_a_decision_list_diff_names_what_moved(tmp_path: Path):
    old, new = _write(tmp_path, "old.txt", OLD_LIST), _write(tmp_path, "new.txt", NEW_LIST)
    result = run_cli("diff", old, new)
    assert result.code == 1, result.stderr
    out = result.stdout
    assert "~ rule 1:" in out and "age >= 42  ->  age >= 45" in out
    assert "region" not in out.split("~ rule 1:")[1].split("- rule 3")[0]  # rule 2 is unchanged
    assert "- rule 3: IF age < 20 THEN buys = 'no'" in out
    assert "~ default: ELSE buys = 'no'  ->  ELSE buys = 'yes'" in out
    assert "1 rules the same, 1 changed, 0 added, 1 removed, the default changed" in out
    reverse = run_cli("diff", new, old)
    assert reverse.code == 1 and "+ rule 3: IF age < 20 THEN buys = 'no'" in reverse.stdout


def test_equal_rules_with_other_statistics_exit_0(tmp_path: Path):
    old = _write(tmp_path, "old.txt", OLD_LIST)
    restated = OLD_LIST.replace("covers 30, correct 28", "covers 31, correct 25").replace(
        "age >= 42 AND income = 'high'", "income = 'high' AND age >= 42"
    )
    new = _write(tmp_path, "new.txt", restated)
    result = run_cli("diff", old, new)
    assert result.code == 0, result.stdout + result.stderr
    assert "the models are equal in rules: 3 rules the same" in result.stdout
    assert run_cli("diff", old, old, "-q").stdout == ""
    listed = run_cli("diff", old, new, "--unchanged").stdout
    assert "  rule 1: IF income = 'high' AND age >= 42 THEN buys = 'yes'  (covers 31, correct 25)" in listed


def test_rule_sets_are_matched_by_conditions_and_class(tmp_path: Path):
    old = "RULESET VOTE one\n" + "".join(
        [
            "IF a = 'x' THEN y = 'p'\n",
            "IF b >= 3 THEN y = 'q'\n",
            "IF c = 'z' THEN y = 'q'\n",
        ]
    )
    new = "RULESET VOTE one\n" + "".join(
        [
            "IF c = 'z' THEN y = 'q'\n",  # moved to the front: the same rule
            "IF b >= 4 THEN y = 'q'\n",  # changed threshold
            "IF a = 'x' THEN y = 'q'\n",  # another class: not the same rule
        ]
    )
    result = run_cli("diff", _write(tmp_path, "o.txt", old), _write(tmp_path, "n.txt", new), "--json")
    assert result.code == 1, result.stderr
    payload = json.loads(result.stdout)
    assert payload["matched_by"] == "conditions"
    assert payload["counts"] == {"same": 1, "changed": 1, "added": 1, "removed": 1}
    changed = next(r for r in payload["rules"] if r["status"] == "changed")
    assert changed["moved"] == [{"column": "b", "old": ["b >= 3"], "new": ["b >= 4"]}]
    assert (changed["old_rule"], changed["new_rule"]) == (2, 2)
    same = next(r for r in payload["rules"] if r["status"] == "same")
    assert (same["old_rule"], same["new_rule"]) == (3, 1)


def test_with_data_each_rule_is_scored_and_changed_rows_are_written(tmp_path: Path):
    old, new = _write(tmp_path, "old.txt", OLD_LIST), _write(tmp_path, "new.txt", NEW_LIST)
    data = _data(tmp_path)
    changed = tmp_path / "changed.csv"
    result = run_cli("diff", old, new, data, "--json", "--changed-rows", str(changed))
    assert result.code == 1, result.stderr
    payload = json.loads(result.stdout)
    first = payload["rules"][0]["data"]
    # old rule 1 (age >= 42 and high): rows 1, 2, 5 -> yes, yes, no; new (age >= 45): rows 1, 5
    assert first["old"] == {"covered": 3, "correct": 2, "accuracy": 2 / 3}
    assert first["new"] == {"covered": 2, "correct": 1, "accuracy": 0.5}
    # predictions: old yes, yes, no, no, yes, no; new yes, no (north), no, yes, yes, yes
    assert payload["data"]["rows"] == 6 and payload["data"]["changed"] == 3
    assert payload["data"]["sample"][0] == {"row": 2, "old": "yes", "new": "no"}
    written = pl.read_csv(changed)
    assert written["age"].to_list() == [43.0, 18.0, None] and written.columns[-2:] == [
        "old_prediction",
        "new_prediction",
    ]
    piped = run_cli("diff", old, new, "-", "--json", stdin=Path(data).read_text())  # stdin is read once
    assert json.loads(piped.stdout)["data"] == payload["data"]
    text = run_cli("diff", old, new, data)
    assert "on the data: 3 of 6 rows change their prediction (50.0%); first: row 2 'yes' -> 'no'" in text.stdout
    assert "on the data: covers 3, accuracy 0.667 -> covers 2, accuracy 0.500" in text.stdout


def test_learned_models_trees_and_forests(tmp_path: Path):
    penguins = str(SAMPLE / "penguins.csv")
    models = {}
    for name, args in {
        "tree3": ["tree", "--max-depth", "3", "--ccp-alpha", "0"],
        "tree4": ["tree", "--max-depth", "4", "--ccp-alpha", "0"],
        "forest": ["forest", "-B", "5"],
        "forest-again": ["forest", "-B", "5"],
        "forest-seed": ["forest", "-B", "5", "--seed", "9"],
    }.items():
        models[name] = str(tmp_path / f"{name}.json")
        assert run_cli(args[0], penguins, "-y", "species", *args[1:], "-q", "-o", models[name]).code == 0
    trees = run_cli("diff", models["tree3"], models["tree4"], penguins)
    assert trees.code == 1 and "on the data:" in trees.stdout and "+ rule" in trees.stdout
    assert run_cli("diff", models["forest"], models["forest-again"]).code == 0
    forests = run_cli("diff", models["forest"], models["forest-seed"], penguins)
    assert forests.code == 1 and "! forest: 5 trees -> 5 trees, 5 of them not the same" in forests.stdout
    # the forest's own figures: out-of-bag error and the importance that moved most
    assert re.search(r"^! out-of-bag error: 0\.\d{4} -> 0\.\d{4}$", forests.stdout, flags=re.M), forests.stdout
    assert re.search(r"^! importance: \w+ 0\.\d{3} -> 0\.\d{3}", forests.stdout, flags=re.M)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["house-oner", "penguins-oner"], "the models predict different targets ('value', 'species')"),
        (["house-oner", "house-oner", "--changed-rows", "c.csv"], "--changed-rows needs DATA"),
        (["house-oner", "missing.json"], "missing.json"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str):
    for name, data, target in (("house-oner", "house", "value"), ("penguins-oner", "penguins", "species")):
        out = tmp_path / f"{name}.json"
        assert run_cli("oner", str(SAMPLE / f"{data}.csv"), "-y", target, "-q", "-o", str(out)).code == 0
    paths = [str(tmp_path / f"{a}.json") if not a.startswith("-") and not a.endswith(".csv") else a for a in args]
    paths = [str(tmp_path / p) if p == "c.csv" else p for p in paths]
    result = run_cli("diff", *paths)
    assert result.code == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_shows_rule_changes_through_the_textconv_driver(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
        return done.stdout

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (repo / ".gitattributes").write_text("*.rules.json diff=rulecli\n")
    git("config", "diff.rulecli.textconv", f"{sys.executable} -m rulecli show")
    penguins = str(SAMPLE / "penguins.csv")
    model = repo / "species.rules.json"
    assert run_cli("ripper", penguins, "-y", "species", "-q", "-o", str(model)).code == 0
    git("add", ".")
    git("commit", "-q", "-m", "first")
    assert run_cli("ripper", penguins, "-y", "species", "--seed", "7", "-q", "-o", str(model)).code == 0
    shown = git("diff")
    assert "-IF island = 'Dream' AND bill_length_mm >= 45.2 THEN species = 'Chinstrap'" in shown
    assert '"format"' not in shown  # rules, not JSON


def test_a_tree_whose_one_threshold_moved_is_one_split_moved(tmp_path: Path):
    old = tmp_path / "old.json"
    assert run_cli("tree", str(SAMPLE / "penguins.csv"), "-y", "species", "-q", "-o", str(old)).code == 0
    model = json.loads(old.read_text())
    model["tree"]["threshold"][0] -= 0.3  # the root's split, within the gap of its neighbouring values
    new = tmp_path / "new.json"
    new.write_text(json.dumps(model))
    shown = run_cli("diff", str(old), str(new))
    assert shown.code == 1
    lines = shown.stdout.splitlines()
    assert (
        lines[2] == "~ split on flipper_length_mm: (flipper_length_mm < 206.5 or missing)  ->  "
        "(flipper_length_mm < 206.2 or missing)"
    )
    assert lines[-1] == "the models differ: 1 split moved; 5 rules the same, 0 changed, 0 added, 0 removed"
    payload = json.loads(run_cli("diff", str(old), str(new), "--json").stdout)
    assert payload["matched_by"] == "tree structure" and len(payload["splits"]) == 1
    assert payload["counts"] == {"same": 5, "changed": 0, "added": 0, "removed": 0}


def test_show_logic_leaves_statistics_out_for_a_textconv_diff(tmp_path: Path):
    # every row counted twice: the same rules, other statistics
    data = tmp_path / "twice.csv"
    pl.read_csv(SAMPLE / "penguins.csv").with_columns(pl.lit(2).alias("w")).write_csv(data)
    once, twice = tmp_path / "once.json", tmp_path / "twice.json"
    fixed = ["--max-depth", "2", "--ccp-alpha", "0", "-q"]
    assert run_cli("tree", str(data), "-y", "species", "--exclude", "w", *fixed, "-o", str(once)).code == 0
    assert run_cli("tree", str(data), "-y", "species", "--weights", "w", *fixed, "-o", str(twice)).code == 0
    logic = [run_cli("show", str(m), "--logic").stdout for m in (once, twice)]
    assert logic[0] == logic[1] and "covers" not in logic[0] and "IF " in logic[0]
    assert run_cli("show", str(once)).stdout != run_cli("show", str(twice)).stdout
    assert run_cli("show", str(once), "--logic", "--json").code == 2
