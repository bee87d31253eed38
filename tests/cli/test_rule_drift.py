"""evaluate --baseline and the rule drift gates, on data made to drift in one rule only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import SAMPLE, run_cli

MODEL = """\
IF x < 0.3 THEN y = 'lo'  (covers 300, correct 294)
IF x >= 0.7 THEN y = 'hi'  (covers 300, correct 291)
ELSE y = 'mid'  (covers 400, correct 400)
"""


def _today(tmp_path: Path, *, drift_hi: bool = False, low_x: bool = True, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    n = 1000
    x = rng.random(n) if low_x else 0.3 + 0.7 * rng.random(n)
    y = np.where(x < 0.3, "lo", np.where(x >= 0.7, "hi", "mid"))
    noise = rng.random(n) < 0.02
    y = np.where(noise, "mid", y)
    if drift_hi:  # the world changed for the rows rule 2 covers: half of them are 'mid' now
        y = np.where((x >= 0.7) & (rng.random(n) < 0.5), "mid", y)
    path = tmp_path / f"today-{drift_hi}-{low_x}.csv"
    pl.DataFrame({"x": x.round(4), "y": y}).write_csv(path)
    return str(path)


def _model(tmp_path: Path) -> str:
    path = tmp_path / "m.txt"
    path.write_text(MODEL)
    return str(path)


def test_only_the_rule_that_drifted_is_flagged_and_gated(tmp_path: Path):
    model = _model(tmp_path)
    steady = run_cli("evaluate", model, _today(tmp_path), "--baseline", "--json")
    assert steady.code == 0, steady.stderr
    drift = json.loads(steady.stdout)["baseline"]
    # the default rule is tested too: the rows no rule covers
    assert drift["correction"] == "holm" and drift["tests"] == 6 and drift["training_rows"] == 1000
    assert [r["rule"] for r in drift["rules"]] == ["1", "2", "default"]
    assert [r["drifted"] for r in drift["rules"]] == [False, False, False]
    assert run_cli("evaluate", model, _today(tmp_path), "--max-rule-drift", "0.1").code == 0

    drifted = run_cli("evaluate", model, _today(tmp_path, drift_hi=True), "--baseline", "--json")
    rules = json.loads(drifted.stdout)["baseline"]["rules"]
    assert [r["drifted"] for r in rules] == [False, True, False]
    assert rules[1]["accuracy"] < 0.6 and rules[1]["accuracy_p"] < 1e-6
    gated = run_cli("evaluate", model, _today(tmp_path, drift_hi=True), "--max-rule-drift", "0.1")
    assert gated.code == 1
    lines = gated.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rule drift gate failed: rule 2 (IF x >= 0.7 THEN hi)")
    assert "(--max-rule-drift; adjusted p = " in lines[0]
    # a generous bound lets the same drift pass
    assert run_cli("evaluate", model, _today(tmp_path, drift_hi=True), "--max-rule-drift", "0.6").code == 0


def test_the_default_rule_drifting_fails_the_gate(tmp_path: Path):
    # 30 % of the rows the ELSE rule decides are relabelled: only it drifted
    rng = np.random.default_rng(4)
    x = rng.random(1000)
    y = np.where(x < 0.3, "lo", np.where(x >= 0.7, "hi", "mid"))
    y = np.where((y == "mid") & (rng.random(1000) < 0.3), "hi", y)
    path = tmp_path / "else.csv"
    pl.DataFrame({"x": x.round(4), "y": y}).write_csv(path)
    gated = run_cli("evaluate", _model(tmp_path), str(path), "--max-rule-drift", "0.1")
    assert gated.code == 1, gated.stderr
    lines = gated.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "rule drift gate failed: the default rule (the rows no rule covers, THEN mid): accuracy 1.0000 -> "
    )
    # a rule set's default (the rows no rule matches) is tested too
    rule_set = tmp_path / "set.txt"
    rule_set.write_text("RULESET VOTE one\nPRIOR 300, 300, 400\n" + MODEL)
    assert "the default rule" in run_cli("evaluate", str(rule_set), str(path), "--max-rule-drift", "0.1").stderr


def test_a_rule_that_no_longer_fires_fails_min_rule_coverage(tmp_path: Path):
    model = _model(tmp_path)
    shifted = _today(tmp_path, low_x=False)  # no row has x < 0.3 any more
    gated = run_cli("evaluate", model, shifted, "--min-rule-coverage", "0.5")
    assert gated.code == 1
    assert "rule drift gate failed: rule 1 (IF x < 0.3 THEN lo): no longer fires, below 0.5 x" in gated.stderr
    assert "rule 2" not in gated.stderr
    assert run_cli("evaluate", model, _today(tmp_path), "--min-rule-coverage", "0.5").code == 0


def test_learned_models_and_what_has_no_baseline(tmp_path: Path):
    penguins = str(SAMPLE / "penguins.csv")
    for learner in ("ripper", "aq", "tree"):
        out = tmp_path / f"{learner}.json"
        assert run_cli(learner, penguins, "-y", "species", "-q", "-o", str(out)).code == 0
        same = run_cli("evaluate", str(out), penguins, "--baseline", "--json", "--max-rule-drift", "0")
        assert same.code == 0, (learner, same.stderr)  # its own training data: nothing drifted
        assert not any(r["drifted"] for r in json.loads(same.stdout)["baseline"]["rules"])
    forest = tmp_path / "forest.json"
    assert run_cli("forest", penguins, "-y", "species", "-B", "3", "-q", "-o", str(forest)).code == 0
    refused = run_cli("evaluate", str(forest), penguins, "--baseline")
    assert refused.code == 2 and "a forest has no such rules" in refused.stderr
    unknown = tmp_path / "set.txt"
    unknown.write_text("RULESET VOTE one\nIF x < 1 THEN y = 'a'  (covers 3, correct 3)\nELSE y = 'b'\n")
    data = tmp_path / "d.csv"
    pl.DataFrame({"x": [0.0, 2.0], "y": ["a", "b"]}).write_csv(data)
    missing = run_cli("evaluate", str(unknown), str(data), "--baseline")
    assert missing.code == 2 and "--baseline needs the training statistics" in missing.stderr


@pytest.mark.parametrize("bound", ["-1", "nan"])
def test_bad_bounds(tmp_path: Path, bound: str):
    result = run_cli("evaluate", _model(tmp_path), _today(tmp_path), "--max-rule-drift", bound)
    assert result.code == 2 and "--max-rule-drift" in result.stderr


def test_a_rare_rule_tripling_its_coverage_fails_a_relative_bound(tmp_path: Path):
    # 2.4 % of the training rows: tripled, it moves 0.048 in share, under an absolute 0.1
    model = tmp_path / "rare.txt"
    model.write_text("IF x >= 0.976 THEN y = 'hi'  (covers 24, correct 24)\nELSE y = 'lo'  (covers 976, correct 976)\n")
    rng = np.random.default_rng(8)
    x = np.where(rng.random(2000) < 0.072, 0.976 + 0.024 * rng.random(2000), 0.976 * rng.random(2000))
    path = tmp_path / "today.csv"
    pl.DataFrame({"x": x.round(5), "y": np.where(x >= 0.976, "hi", "lo")}).write_csv(path)
    assert run_cli("evaluate", str(model), str(path), "--max-rule-drift", "0.1").code == 0
    gated = run_cli("evaluate", str(model), str(path), "--max-coverage-ratio", "2")
    assert gated.code == 1, gated.stderr
    assert gated.stderr.startswith(
        "rule drift gate failed: rule 1 (IF x >= 0.976 THEN hi): coverage 0.0240 -> 0.0680, 2.83 times"
    )
    assert "times its training share, beyond 2x either way (--max-coverage-ratio" in gated.stderr
    assert run_cli("evaluate", str(model), str(path), "--max-coverage-ratio", "4").code == 0
    assert run_cli("evaluate", str(model), str(path), "--max-coverage-ratio", "1").code == 2


def test_figures_carry_95_percent_intervals_and_a_gate_can_test_the_lower_bound(tmp_path: Path):
    model, today = _model(tmp_path), _today(tmp_path)
    metrics = json.loads(run_cli("evaluate", model, today, "--json").stdout)
    low, high = metrics["accuracy_interval"]
    assert low < metrics["accuracy"] < high and high - low < 0.05  # 1,000 rows
    assert all(low <= r["accuracy"] <= high for r in metrics["rules"] for low, high in [r["accuracy_interval"]])
    assert "95 % interval" in run_cli("evaluate", model, today).stdout
    # a threshold between the lower bound and the figure: the point passes, the bound does not
    threshold = f"{(low + metrics['accuracy']) / 2:.4f}"
    assert run_cli("evaluate", model, today, "--min-accuracy", threshold, "-q").code == 0
    bounded = run_cli("evaluate", model, today, "--min-accuracy", threshold, "--gate-on", "lower", "-q")
    assert bounded.code == 1 and "accuracy (lower bound)" in bounded.stderr
    assert run_cli("evaluate", model, today, "--gate-on", "upper").code == 2
    learned = run_cli(
        "ripper",
        str(SAMPLE / "penguins.csv"),
        "-y",
        "species",
        "--cv",
        "5",
        "-q",
        "--metrics-out",
        str(tmp_path / "cv.json"),
        "-o",
        str(tmp_path / "p.json"),
    )
    assert learned.code == 0
    summary = json.loads((tmp_path / "cv.json").read_text())["cv"]["summary"]["accuracy"]
    assert summary["interval"][0] < summary["mean"] < summary["interval"][1]


def test_a_shifted_feature_fails_the_feature_drift_gate_naming_it(tmp_path: Path):
    rng = np.random.default_rng(6)
    n = 3000
    frame = pl.DataFrame(
        {"x": rng.random(n).round(4), "c": rng.choice(["a", "b", "c"], n), "z": rng.normal(size=n).round(3)}
    ).with_columns(
        pl.when((pl.col("x") > 0.5) & (pl.col("c") != "a")).then(pl.lit("yes")).otherwise(pl.lit("no")).alias("y")
    )
    train, today = tmp_path / "train.csv", tmp_path / "today.csv"
    frame.write_csv(train)
    # the same rules still hold, but x now leans high
    frame.with_columns((pl.col("x") ** 0.5).round(4)).with_columns(
        pl.when((pl.col("x") > 0.5) & (pl.col("c") != "a")).then(pl.lit("yes")).otherwise(pl.lit("no")).alias("y")
    ).write_csv(today)
    for learner in ("ripper", "forest"):
        model = tmp_path / f"{learner}.json"
        args = ["--trees", "5"] if learner == "forest" else []
        assert run_cli(learner, str(train), "-y", "y", "-q", "-o", str(model), *args).code == 0
        same = run_cli("evaluate", str(model), str(train), "--reference", str(train), "--max-psi", "0.25", "--json")
        assert same.code == 0, same.stderr
        assert {r["column"] for r in json.loads(same.stdout)["feature_drift"]["features"]} >= {"x"}
        shifted = run_cli("evaluate", str(model), str(today), "--reference", str(train), "--max-psi", "0.25", "-q")
        assert shifted.code == 1, (learner, shifted.stderr)
        lines = shifted.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("feature drift gate failed: column 'x': population stability")
    refused = run_cli("evaluate", str(tmp_path / "ripper.json"), str(today), "--max-psi", "0.25")
    assert refused.code == 2 and "--reference" in refused.stderr
