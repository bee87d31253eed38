"""Model rules (M5Rules): rules with a linear formula each, through the search and the commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import rulecli
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners.m5rules import M5RulesParams, fit_m5rules
from rulecli.model.tree import TreeNodes
from rulecli.search.model_tree import Standardised, fit, fit_and_prune, gram, node_grams, squared_error
from tests.conftest import in_sqlite, run_cli


def _kinked(n: int, seed: int) -> pl.DataFrame:
    """y = 2a + 1 below a = 5 and 21 − 2a above it, c shifting it by 0, 3 or −2, noise 0.3;
    z is noise alone."""
    rng = np.random.default_rng(seed)
    a, c, z = rng.uniform(0, 10, n), rng.choice(["p", "q", "r"], n), rng.normal(size=n)
    shift = np.select([c == "p", c == "q"], [0.0, 3.0], -2.0)
    y = np.where(a < 5, 2 * a + 1, 21 - 2 * a) + shift + rng.normal(0, 0.3, n)
    return pl.DataFrame({"a": a, "c": c, "z": z, "y": y})


def _r2(model: object, frame: pl.DataFrame) -> float:
    predicted = rulecli.predict(model, frame)["prediction"].to_numpy()
    truth = frame["y"].to_numpy()
    return 1 - float(((truth - predicted) ** 2).mean() / truth.var())


def _fit(frame: pl.DataFrame, **params: object):
    ds = prepare_dataset(frame, DataSpec(target="y", numeric_target=True))
    return fit_m5rules(ds, M5RulesParams(**params))


def test_a_kink_and_a_shift_are_a_few_rules_whose_formulas_hold_the_slopes():
    model = _fit(_kinked(1500, 1))
    assert 1 <= len(model.rules) <= 20, model.rules  # 2 would do: the tree splits on c before a
    assert _r2(model, _kinked(3000, 2)) > 0.97
    # the kink is in the conditions, the slopes in the formulas: +2 on one side, -2 on the other
    slopes = sorted(t.coefficient for r in (*model.rules, model.default) for t in r.formula.terms if t.column == "a")
    assert slopes[0] == pytest.approx(-2, abs=0.2) and slopes[-1] == pytest.approx(2, abs=0.2)
    # the shift by c is (also) an indicator term; z, noise, weighs next to nothing where it is left
    terms = [t for r in (*model.rules, model.default) for t in r.formula.terms]
    assert any(t.column == "c" and t.levels for t in terms)
    assert all(abs(t.coefficient) < 0.1 for t in terms if t.column == "z")


def test_a_linear_target_is_one_formula_and_a_constant_one_no_term():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, 500)
    linear = _fit(pl.DataFrame({"x": x, "y": 3 * x + 1 + rng.normal(0, 0.05, 500)}))
    assert not linear.rules
    (term,) = linear.default.formula.terms
    assert term.coefficient == pytest.approx(3, abs=0.05) and linear.default.formula.intercept == pytest.approx(
        1, abs=0.05
    )
    flat = _fit(pl.DataFrame({"x": x, "y": rng.normal(5, 1, 500)}))
    assert not flat.rules and not flat.default.formula.terms


def test_a_formula_stays_within_the_target_its_rows_held():
    model = _fit(pl.DataFrame({"x": np.arange(100.0), "y": np.arange(100.0) * 2}))
    far = rulecli.predict(model, pl.DataFrame({"x": [-1e6, 1e6, None]}))["prediction"].to_list()
    assert far[0] == 0.0 and far[1] == 198.0 and 0 < far[2] < 198  # a missing x counts as its mean


def test_smoothing_off_and_a_rule_limit_are_honoured_and_recorded():
    frame = _kinked(1500, 1)
    limited = _fit(frame, max_rules=1, smoothing=False)
    assert len(limited.rules) <= 1
    assert limited.info.params["max_rules"] == 1 and limited.info.params["smoothing"] is False


def test_the_sums_give_every_formula_s_error_without_the_rows():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(50, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=50)
    z = Standardised.of([x[:, j] for j in range(3)], y, None)
    g = gram(z, np.arange(50), None)
    beta = fit(g, [0, 2])
    direct = np.linalg.lstsq(np.column_stack([np.ones(50), z.x[:, [0, 2]]]), z.y, rcond=None)[0]
    assert np.allclose(beta[[0, 1, 3]], direct, atol=1e-6) and beta[2] == 0
    residual = z.y - (beta[0] + z.x @ beta[1:])
    assert squared_error(g, beta) == pytest.approx(float(residual @ residual))


def test_a_split_a_straight_line_does_not_need_is_pruned_away():
    # one split on x of a target linear in x: the root's line beats two constants
    x = np.linspace(0, 1, 200)
    z = Standardised.of([x], 4 * x, None)
    nodes = TreeNodes(
        feature=np.array([0, -1, -1], dtype=np.int32),
        threshold=np.array([0.5, np.nan, np.nan]),
        left_levels=((), (), ()),
        right_levels=((), (), ()),
        missing_left=np.zeros(3, dtype=bool),
        left=np.array([1, -1, -1], dtype=np.int32),
        right=np.array([2, -1, -1], dtype=np.int32),
        value=np.zeros((3, 1)),
        n_samples=np.array([200.0, 100.0, 100.0]),
        impurity=np.zeros(3),
        improvement=np.zeros(3),
    )
    models = fit_and_prune(nodes, node_grams(nodes, np.where(x < 0.5, 1, 2), np.arange(200), z, None), [[0]])
    assert models.leaf.tolist() == [True, False, False] and models.removed.tolist() == [False, True, True]


@pytest.mark.parametrize(
    "options", [[], ["--committees", "3"], ["--committees", "2", "--neighbours", "3"]], ids=" ".join
)
def test_the_command_exports_agree_with_predict_on_missing_and_unseen_values(tmp_path: Path, options: list[str]):
    duckdb = pytest.importorskip("duckdb")
    # a ripple in z no formula bends to, which the nearest rows' errors hold: the check on
    # rows left out keeps the neighbours (on the kink alone it left them out)
    frame = _kinked(600, 4).with_columns(y=pl.col("y") + 2 * (3 * pl.col("z")).sin())
    odd = pl.DataFrame({"a": [None, 3.0, 400.0], "c": ["q", None, "never"], "z": [0.0, None, 1.0], "y": [0.0] * 3})
    pl.concat([frame, odd]).write_csv(tmp_path / "k.csv")
    learned = run_cli("m5rules", "k.csv", "-y", "y", *options, "-o", "m.json", "-q", cwd=tmp_path)
    assert learned.code == 0, learned.stderr
    written = json.loads((tmp_path / "m.json").read_text())
    assert ("neighbours" in written) == ("--neighbours" in options), written["training"].get("neighbours_check")
    # a row number: SQL engines may return a neighbour correction's rows in another order
    data = pl.read_csv(tmp_path / "k.csv").with_row_index("row")
    expected = rulecli.predict(rulecli.load(tmp_path / "m.json"), data)["prediction"].to_numpy()
    namespace: dict[str, object] = {}
    exec(run_cli("export", "m.json", "--to", "python", cwd=tmp_path).stdout, namespace)
    python = np.array([namespace["predict"](row) for row in data.to_dicts()])  # type: ignore[operator]
    polars = data.select(eval(run_cli("export", "m.json", "--to", "polars", cwd=tmp_path).stdout, {"pl": pl}))
    con = duckdb.connect()
    con.register("t", data.to_arrow())
    sql = con.sql(run_cli("export", "m.json", "--to", "sql", "--table", "t", cwd=tmp_path).stdout).pl().sort("row")
    lite = run_cli("export", "m.json", "--to", "sql", "--dialect", "sqlite", "--table", "data", cwd=tmp_path).stdout
    sqlite = np.array([row[-1] for row in sorted(in_sqlite(data).execute(lite).fetchall())])
    for got in (python, polars.to_series().to_numpy(), sql["prediction"].to_numpy(), sqlite):
        assert np.allclose(got, expected, rtol=0, atol=1e-9)


def test_neighbours_correct_what_the_formulas_miss_and_are_kept_in_the_model(tmp_path: Path):
    # a ripple in a column no formula bends to: the nearest rows' errors hold it
    rng = np.random.default_rng(21)

    def rippled(n: int) -> pl.DataFrame:
        a, b = rng.uniform(0, 10, n), rng.uniform(0, 10, n)
        return pl.DataFrame({"a": a, "b": b, "y": 2 * a + np.sin(3 * b) * 2 + rng.normal(0, 0.1, n)})

    train, test = rippled(2000), rippled(2000)
    plain, corrected = _fit(train), _fit(train, neighbours=5)
    assert corrected.kind == "committee" and corrected.neighbours is not None
    assert corrected.neighbours.k == 5 and len(corrected.neighbours.residuals) == 2000
    assert _r2(corrected, test) > _r2(plain, test) + 0.05, (_r2(corrected, test), _r2(plain, test))
    # bounded by the training target
    far = pl.DataFrame({"a": [1e6], "b": [5.0], "y": [0.0]})
    assert rulecli.predict(corrected, far)["prediction"][0] <= float(train["y"].max())
    train.write_csv(tmp_path / "r.csv")
    args = ["m5rules", "r.csv", "-y", "y", "--neighbours", "5", "-q", "-o"]
    assert run_cli(*args, "n.json", cwd=tmp_path).code == 0 and run_cli(*args, "o.json", cwd=tmp_path).code == 0
    assert (tmp_path / "n.json").read_bytes() == (tmp_path / "o.json").read_bytes()
    shown = run_cli("show", "n.json", cwd=tmp_path).stdout
    assert "the weighted mean error of the 5 nearest of 2,000 stored training rows" in shown
    assert json.loads((tmp_path / "n.json").read_text())["training"]["stored_rows"] == 2000
    assert run_cli("m5rules", "r.csv", "-y", "y", "--neighbours", "2", "-q", "-o", "two.json", cwd=tmp_path).code == 0
    diffed = run_cli("diff", "n.json", "two.json", cwd=tmp_path)
    assert diffed.code == 1 and "5 nearest rows -> " in diffed.stdout, diffed.stdout
    # on noise the neighbours' errors are noise: the check on rows left out leaves them out, and says so
    rng = np.random.default_rng(22)
    x = rng.uniform(0, 10, 1500)
    pl.DataFrame({"x": x, "y": x + rng.normal(0, 3, 1500)}).write_csv(tmp_path / "noisy.csv")
    noisy = run_cli("m5rules", "noisy.csv", "-y", "y", "--neighbours", "5", "-o", "noisy.json", cwd=tmp_path)
    assert noisy.code == 0 and "# no neighbour correction: on 1,000 training rows" in noisy.stdout
    check = json.loads((tmp_path / "noisy.json").read_text())["training"]["neighbours_check"]
    assert check["kept"] is False and check["corrected_mse"] > check["rules_mse"]
    assert json.loads((tmp_path / "noisy.json").read_text())["kind"] == "regression_rules"
    # a damaged file is refused in one line naming the field
    body = json.loads((tmp_path / "n.json").read_text())
    body["neighbours"]["residuals"][3] = "x"
    (tmp_path / "bad.json").write_text(json.dumps(body))
    refused = run_cli("predict", "bad.json", "r.csv", cwd=tmp_path)
    assert refused.code == 2 and "neighbours.residuals" in refused.stderr and refused.stderr.count("\n") == 1


def test_the_command_explains_shows_and_evaluates(tmp_path: Path):
    _kinked(600, 5).write_csv(tmp_path / "k.csv")
    learned = run_cli("m5rules", "k.csv", "-y", "y", "-o", "m.json", cwd=tmp_path)
    assert learned.code == 0, learned.stderr
    assert learned.stdout.startswith("# y is a number: the first matching rule's formula predicts it\n")
    assert "THEN y = " in learned.stdout and "ELSE y = " in learned.stdout
    explained = pl.read_csv(run_cli("predict", "m.json", "k.csv", "--explain", cwd=tmp_path).stdout.encode())
    assert explained.columns == ["prediction", "rule", "rule_text"] and explained["rule"].n_unique() > 1
    scored = json.loads(run_cli("evaluate", "m.json", "k.csv", "--json", cwd=tmp_path).stdout)
    assert scored["r2"] > 0.95
    for metric in ("mae", "rmse", "r2"):  # each with its 95 % interval around it
        low, high = scored[f"{metric}_interval"]
        assert low < scored[metric] < high
    page = run_cli("report", "m.json", "k.csv", "-o", "r.html", cwd=tmp_path)
    assert page.code == 0, page.stderr
    html = (tmp_path / "r.html").read_text()
    assert "A list of rules with formulas (m5rules)" in html and "predicted against actual" in html
    assert "<h2>The rules</h2>" in html and html.count("<circle") == 2 * 600
    gate = run_cli("evaluate", "m.json", "k.csv", "--max-rmse", "0.01", cwd=tmp_path)
    assert gate.code == 1
    assert run_cli("show", "m.json", cwd=tmp_path).code == 0
    refused = run_cli("m5rules", "k.csv", "-y", "y", "-o", "m.txt", cwd=tmp_path)
    assert refused.code == 2 and "saved as .json" in refused.stderr


def test_classes_are_refused_in_one_line_naming_the_way_out(tmp_path: Path):
    pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0] * 5, "y": ["a", "b"] * 10}).write_csv(tmp_path / "c.csv")
    refused = run_cli("m5rules", "c.csv", "-y", "y", cwd=tmp_path)
    assert refused.code == 2 and refused.stderr.count("\n") == 1
    assert "c.csv" in refused.stderr and "'y' holds classes" in refused.stderr


def test_whole_weights_are_copies_of_the_rows(tmp_path: Path):
    frame = _kinked(300, 6)
    weights = np.random.default_rng(1).integers(1, 4, frame.height)
    frame.with_columns(w=pl.Series(weights)).write_csv(tmp_path / "w.csv")
    pl.DataFrame(frame.to_dict()).select(pl.all().repeat_by(pl.Series(weights)).explode()).write_csv(tmp_path / "c.csv")
    weighted = run_cli("m5rules", "w.csv", "-y", "y", "--weights", "w", "--json", "-q", cwd=tmp_path)
    copied = run_cli("m5rules", "c.csv", "-y", "y", "--json", "-q", cwd=tmp_path)
    rules = [json.loads(r.stdout)["rules"] for r in (weighted, copied)]
    assert [r["conditions"] for r in rules[0]] == [r["conditions"] for r in rules[1]]
    for a, b in zip(rules[0], rules[1], strict=True):
        assert a["formula"]["intercept"] == pytest.approx(b["formula"]["intercept"], rel=1e-6, abs=1e-9)


def test_pattern_like_column_names_are_read_literally(tmp_path: Path):
    frame = _kinked(300, 7).rename({"a": "^a.*$", "c": "*", "y": "col(y)"})
    frame.write_parquet(tmp_path / "p.parquet")
    assert run_cli("m5rules", "p.parquet", "-y", "col(y)", "-o", "m.json", "-q", cwd=tmp_path).code == 0
    scored = run_cli("evaluate", "m.json", "p.parquet", "--json", cwd=tmp_path)
    assert scored.code == 0 and json.loads(scored.stdout)["r2"] > 0.9


def test_the_baseline_tests_each_rule_s_mean_and_error_and_gates_on_them(tmp_path: Path):
    _kinked(2000, 8).write_csv(tmp_path / "train.csv")
    fresh = _kinked(2000, 9)
    fresh.write_csv(tmp_path / "same.csv")
    # the target moved by 3 where a > 5: the rules there err more and their rows' mean moved
    fresh.with_columns(y=pl.col("y") + pl.when(pl.col("a") > 5).then(3.0).otherwise(0.0)).write_csv(
        tmp_path / "moved.csv"
    )
    assert run_cli("m5rules", "train.csv", "-y", "y", "-o", "m.json", "-q", cwd=tmp_path).code == 0
    same = run_cli("evaluate", "m.json", "same.csv", "--max-rule-drift", "0.5", "--json", cwd=tmp_path)
    assert same.code == 0, same.stdout
    rules = json.loads(same.stdout)["baseline"]["rules"]
    assert rules[-1]["rule"] == "default" and {"mean_p", "rmse_p", "coverage_p"} <= set(rules[0])
    moved = run_cli("evaluate", "m.json", "moved.csv", "--max-rule-drift", "0.5", "--json", cwd=tmp_path)
    assert moved.code == 1
    drifted = [r for r in json.loads(moved.stdout)["baseline"]["rules"] if r["drifted"]]
    assert drifted and all(r["rmse"] > r["train_rmse"] for r in drifted)
    failures = json.loads(moved.stdout)["gates"]["failures"]
    assert any("above its training rmse" in f for f in failures) and any("training rmses away" in f for f in failures)
    shown = run_cli("evaluate", "m.json", "moved.csv", "--baseline", cwd=tmp_path)
    assert "mean: train -> here" in shown.stdout and "rmse: train -> here" in shown.stdout
    page = run_cli("report", "m.json", "moved.csv", "--baseline", "-o", "r.html", cwd=tmp_path)
    assert page.code == 0 and "rmse: training" in (tmp_path / "r.html").read_text()


def test_the_python_export_is_the_same_text_in_every_process(tmp_path: Path):
    # a level set written as a Python set's repr followed string hashes, which differ per process
    _kinked(300, 10).write_csv(tmp_path / "k.csv")
    assert run_cli("m5rules", "k.csv", "-y", "y", "-o", "m.json", "-q", cwd=tmp_path).code == 0
    texts = {
        subprocess.run(
            [sys.executable, "-m", "rulecli", "export", "m.json", "--to", "python"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(texts) == 1 and "in {" in texts.pop()


def test_a_committee_averages_lists_each_learned_against_the_last_one_s_errors(tmp_path: Path):
    train, test = _kinked(1500, 11), _kinked(3000, 12)
    single, committee = _fit(train), _fit(train, committees=4)
    assert committee.kind == "committee" and len(committee.members) == 4
    assert committee.info.training["committee"] == 4
    # the prediction is the mean of the lists'
    lists = [rulecli.predict(m, test)["prediction"].to_numpy() for m in committee.members]
    assert np.allclose(rulecli.predict(committee, test)["prediction"].to_numpy(), np.mean(lists, axis=0))
    # the second list learned 2y − the first list's prediction: its rows' mean is y's, its
    # formulas lean the other way where the first over-predicts
    first = rulecli.predict(committee.members[0], train)["prediction"].to_numpy()
    second = _fit(train.with_columns(y=2 * pl.col("y") - pl.Series(first)))
    assert [r.conditions for r in second.rules] == [r.conditions for r in committee.members[1].rules]
    # each list's statistics are counted against the target itself
    # (the rows each rule decides partition the table: their means average to y's)
    decided = [r.stats for r in (*committee.members[1].rules, committee.members[1].default)]
    assert sum(s.covered for s in decided) == train.height  # type: ignore[union-attr]
    mean = sum(s.covered * s.mean for s in decided) / train.height  # type: ignore[union-attr]
    assert mean == pytest.approx(float(train["y"].mean()), rel=1e-9)
    assert _r2(committee, test) > 0.97 and _r2(committee, test) > _r2(single, test) - 0.005
    # saved and read back, through every command
    train.write_csv(tmp_path / "k.csv")
    learned = run_cli("m5rules", "k.csv", "-y", "y", "--committees", "3", "-o", "c.json", cwd=tmp_path)
    assert learned.code == 0, learned.stderr
    assert learned.stdout.startswith("# y is a number: the mean of 3 lists' predictions\n")
    again = run_cli("m5rules", "k.csv", "-y", "y", "--committees", "3", "-o", "d.json", "-q", cwd=tmp_path)
    assert again.code == 0 and (tmp_path / "c.json").read_bytes() == (tmp_path / "d.json").read_bytes()
    model = rulecli.load(tmp_path / "c.json")
    assert (
        rulecli.predict(model, train)["prediction"].to_list()
        == rulecli.predict(rulecli.load(tmp_path / "d.json"), train)["prediction"].to_list()
    )
    explained = pl.read_csv(run_cli("predict", "c.json", "k.csv", "--explain", cwd=tmp_path).stdout.encode())
    assert all(r.count(",") == 2 and r.startswith("1/") and ",2/" in r and ",3/" in r for r in explained["rule"])
    baseline = json.loads(run_cli("evaluate", "c.json", "k.csv", "--baseline", "--json", cwd=tmp_path).stdout)
    ids = [r["rule"] for r in baseline["baseline"]["rules"]]
    assert {i.split("/")[0] for i in ids} == {"1", "2", "3"} and "3/default" in ids
    assert not any(r["drifted"] for r in baseline["baseline"]["rules"])  # the training rows themselves
    shown = run_cli("show", "c.json", cwd=tmp_path)
    assert shown.code == 0 and "# list 3 of 3" in shown.stdout
    assert run_cli("report", "c.json", "k.csv", "-o", "r.html", cwd=tmp_path).code == 0
    assert "The rules: list 3 of 3" in (tmp_path / "r.html").read_text()
    assert run_cli("m5rules", "k.csv", "-y", "y", "-o", "one.json", "-q", cwd=tmp_path).code == 0
    diffed = run_cli("diff", "one.json", "c.json", cwd=tmp_path)
    assert diffed.code == 1 and "committee of 3 lists" in diffed.stdout, diffed.stdout
