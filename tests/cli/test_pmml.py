"""PMML exports checked in two real PMML engines: every document validates against the
PMML 4.4 schema JPMML ships, and JPMML-Evaluator and PMML4S each predict, row for row,
what `rulecli predict` predicts (class probabilities within 1e-9 where they return them),
on the sample tables plus rows with missing values and unseen levels."""

from __future__ import annotations

import dataclasses
import functools
import shutil
import zipfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import rulecli
from tests.conftest import SAMPLE, run_cli, slow_for

if shutil.which("java") is None:  # .ci/run installs a Java runtime; a bare machine may lack one
    pytest.skip("the PMML engines need a Java runtime", allow_module_level=True)

jpmml_evaluator = pytest.importorskip("jpmml_evaluator")
pypmml = pytest.importorskip("pypmml")
xmlschema = pytest.importorskip("xmlschema")
pd = pytest.importorskip("pandas")

DATASETS = {"penguins": "species", "labor": "class", "house": "value"}
CONFIGS = {
    "oner": [],
    "ripper": [],
    "ripper-unordered": ["--unordered"],
    "cn2": [],
    "cn2-unordered": ["--unordered"],
    "cn2-best": ["--unordered", "--vote", "best"],
    "aq": [],
    "aq-support": ["--vote", "support"],
    "brl": ["--iterations", "500"],
    "reduct": [],
    "reduct-support": ["--vote", "support"],
    "tree": [],
    "tree-depth": ["--max-depth", "3"],
    "forest": ["--trees", "5"],
}


@functools.cache
def _schema() -> xmlschema.XMLSchema:
    jar = next((Path(jpmml_evaluator.__file__).parent / "dependencies").glob("pmml-model-1*.jar"))
    return xmlschema.XMLSchema(zipfile.ZipFile(jar).read("pmml.xsd").decode())


@functools.cache
def _table(name: str, tmp: Path) -> Path:
    """The sample table plus rows with missing values and levels training never saw."""
    frame = pl.read_csv(SAMPLE / f"{name}.csv", infer_schema_length=None)
    odd = {c: (["never-seen", None] if t == pl.String else [None, None]) for c, t in frame.schema.items()}
    path = tmp / f"{name}.csv"
    pl.concat([frame, pl.DataFrame(odd, schema=frame.schema)]).write_csv(path)
    return path


def _engines(document: Path, data: Path) -> dict[str, pd.DataFrame]:
    # every column as text or number the way rulecli read it: pandas would make '1' a float
    frame = pd.read_csv(data, keep_default_na=True)
    evaluator = jpmml_evaluator.make_evaluator(str(document)).verify()
    # pypmml hands PMML4S a pandas frame's floats rounded (a row sitting on a threshold that is
    # a 16-digit data value fell on the other side); as their repr text they arrive exact
    exact = frame.map(lambda v: repr(v) if isinstance(v, float) and v == v else v)
    return {"jpmml": evaluator.evaluateAll(frame), "pmml4s": pypmml.Model.fromFile(str(document)).predict(exact)}


def _same(ours: list, theirs: list) -> list[int]:
    def missing(v: object) -> bool:
        return v is None or (isinstance(v, float) and np.isnan(v))

    return [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if not (a == b or (missing(a) and missing(b)))]


def _check(model: Path, data: Path, tmp: Path, engines: tuple[str, ...] = ("jpmml", "pmml4s")) -> None:
    document = tmp / (model.stem + ".pmml")
    exported = run_cli("export", str(model), "--to", "pmml", "-o", str(document))
    assert exported.code == 0, exported.stderr
    _schema().validate(str(document))
    assert " x-" not in document.read_text(), "no JPMML extension attributes: plain PMML 4.4"
    scored = run_cli("predict", str(model), str(data), "--json", "--proba")
    if scored.code != 0:  # rule text without class counts: predictions only
        scored = run_cli("predict", str(model), str(data), "--json")
    assert scored.code == 0, scored.stderr
    ours = pl.read_ndjson(scored.stdout.encode())
    for engine, result in _engines(document, data).items():
        if engine not in engines:
            continue
        predicted = [None if isinstance(v, float) and np.isnan(v) else v for v in result["prediction"].tolist()]
        if "errors" in result.columns:
            # JPMML reports "no rule matched, no default" as an error of the row: no prediction
            errors = result["errors"].fillna("").tolist()
            unknown = [e for e in errors if e and "RuleSet@defaultScore" not in e]
            assert not unknown, (engine, unknown[:3])
            predicted = [None if e else p for p, e in zip(predicted, errors, strict=True)]
        if ours["prediction"].dtype == pl.Float64:
            assert np.allclose(ours["prediction"].to_numpy(), np.array(predicted, dtype=float), rtol=0, atol=1e-9)
        else:
            wrong = _same(ours["prediction"].to_list(), predicted)
            assert not wrong, (engine, wrong[:5], ours["prediction"][wrong[0]], predicted[wrong[0]])
        for column in (c for c in ours.columns if c.startswith("proba_")):
            if column in result.columns:
                theirs = result[column].to_numpy(dtype=float)
                assert np.allclose(ours[column].to_numpy(), theirs, rtol=0, atol=1e-9), (engine, column)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pmml")


@pytest.mark.parametrize("dataset", sorted(DATASETS))
@pytest.mark.parametrize("config", slow_for(sorted(CONFIGS)))
def test_every_learner_scores_alike_in_jpmml_and_pmml4s(tmp: Path, config: str, dataset: str):
    learner = config.split("-")[0]
    model = tmp / f"{config}-{dataset}.json"
    fitted = run_cli(
        learner, str(SAMPLE / f"{dataset}.csv"), "-y", DATASETS[dataset], "-o", str(model), "-q", *CONFIGS[config]
    )
    assert fitted.code == 0, fitted.stderr
    _check(model, _table(dataset, tmp), tmp)


def test_regression_trees_and_forests(tmp: Path):
    rng = np.random.default_rng(3)
    n = 300
    x = rng.normal(size=n)
    frame = pl.DataFrame({"x": x, "c": rng.choice(["a", "b", "c"], n), "y": 3 * x + rng.normal(0, 0.3, n)})
    frame = pl.concat([frame, pl.DataFrame({"x": [None], "c": ["zzz"], "y": [0.0]}, schema=frame.schema)])
    data = tmp / "reg.csv"
    frame.write_csv(data)
    for learner, options in (("tree", ["--max-depth", "5"]), ("forest", ["--trees", "4"])):
        model = tmp / f"reg-{learner}.json"
        assert run_cli(learner, str(data), "-y", "y", "-o", str(model), "-q", *options).code == 0
        _check(model, data, tmp)


def test_rules_with_formulas(tmp: Path):
    # a kink in x, a shift by c, rows with a missing x, a missing and an unseen level, and
    # a row far outside the training range (the formula's bounds hold it)
    rng = np.random.default_rng(5)
    n = 400
    x, c = rng.uniform(0, 10, n), rng.choice(["a", "b", "c"], n)
    y = np.where(x < 5, 2 * x, 20 - 2 * x) + np.select([c == "a", c == "b"], [0.0, 3.0], -2.0) + rng.normal(0, 0.3, n)
    frame = pl.DataFrame({"x": x, "c": c, "y": y})
    odd = pl.DataFrame(
        {"x": [None, 3.0, 2.0, 500.0], "c": ["b", None, "zzz", "a"], "y": [0.0] * 4}, schema=frame.schema
    )
    data = tmp / "formulas.csv"
    pl.concat([frame, odd]).write_csv(data)
    model = tmp / "formulas.json"
    assert run_cli("m5rules", str(data), "-y", "y", "-o", str(model), "-q").code == 0
    _check(model, data, tmp)
    committee = tmp / "committee.json"  # lists averaged: a mining model of mining models
    assert run_cli("m5rules", str(data), "-y", "y", "--committees", "3", "-o", str(committee), "-q").code == 0
    _check(committee, data, tmp)
    # and corrected by the nearest stored rows: the rules and a nearest-neighbour model summed
    nearest = tmp / "nearest.json"
    args = ["--committees", "2", "--neighbours", "4", "-o", str(nearest), "-q"]
    assert run_cli("m5rules", str(data), "-y", "y", *args).code == 0
    _check(nearest, data, tmp, engines=("jpmml",))
    # PMML4S divides a weighted average by k once more than the standard says (its
    # NearestNeighborModel.scala): its correction is rulecli's (and JPMML's) over 4
    loaded = rulecli.load(nearest)
    frame = pl.read_csv(data)
    ours = rulecli.predict(loaded, frame)["prediction"].to_numpy()
    rules = rulecli.predict(dataclasses.replace(loaded, neighbours=None), frame)["prediction"].to_numpy()
    theirs = np.asarray(_engines(tmp / "nearest.pmml", data)["pmml4s"]["prediction"], dtype=float)
    low, high = loaded.neighbours.bounds
    assert np.allclose(theirs, np.clip(rules + (ours - rules) / 4, low, high), rtol=0, atol=1e-9)


def test_hand_written_rule_sets_and_lists(tmp: Path):
    data = _table("house", tmp)
    files = {
        "list.txt": "IF size = 'big' AND location in {'good', 'bad'} THEN value = 'high'\n"
        "IF pets is missing THEN value = 'medium'\nELSE value = 'low'\n",
        "votes.txt": "RULESET VOTE weighted\nIF size = 'big' THEN value = 'high' (covers 3, correct 2, weight 2)\n"
        "IF pets = 'yes' THEN value = 'low' (covers 4, correct 2, weight 2)\n"
        "IF location != 'good' THEN value = 'medium' (covers 4, correct 1)\n",
        # equal votes: the training prior decides (low), not the engines' first-rule order (high)
        "ties.txt": "RULESET VOTE one\nCLASSES 'high', 'low', 'medium'\nPRIOR 1, 5, 2\n"
        "IF size = 'big' THEN value = 'high'\nIF pets = 'yes' THEN value = 'low'\n"
        "IF size = 'small' THEN value = 'high'\nELSE value = 'medium'\n",
        "best.txt": "RULESET VOTE best\nCLASSES 'high', 'low', 'medium'\nPRIOR 1, 5, 2\n"
        "IF size = 'big' THEN value = 'high' (covers 3, correct 2)\n"
        "IF pets = 'yes' THEN value = 'low' (covers 4, correct 2)\n"
        "IF location = 'bad' THEN value = 'medium' (covers 4, correct 3)\n",
    }
    for name, text in files.items():
        (tmp / name).write_text(text)
        _check(tmp / name, data, tmp)


def test_text_pmml_cannot_carry_is_refused():
    rules = "IF x = 'a\x01b' THEN y = 'p'\nELSE y = 'q'\n"
    result = run_cli("export", "-", "--to", "pmml", stdin=rules)
    assert result.code == 2 and "control character" in result.stderr and result.stderr.count("\n") == 1


def test_present_versus_missing_splits(tmp: Path):
    # a number missing for a reason: isNotMissing / isMissing predicates on the split
    rng = np.random.default_rng(3)
    gone = rng.random(300) < 0.3
    reading = [None if g else float(v) for g, v in zip(gone, rng.normal(size=300).round(2), strict=True)]
    frame = pl.DataFrame({"reading": pl.Series(reading, dtype=pl.Float64), "other": rng.normal(size=300).round(2)})
    frame = frame.with_columns(status=pl.when(pl.col("reading").is_null()).then(pl.lit("flag")).otherwise(pl.lit("ok")))
    data = tmp / "readings.csv"
    frame.write_csv(data)
    for learner, options in (("tree", []), ("forest", ["--trees", "4"])):
        model = tmp / f"readings-{learner}.json"
        assert run_cli(learner, str(data), "-y", "status", "-o", str(model), "-q", *options).code == 0
        assert '"+inf"' in model.read_text()
        _check(model, data, tmp)


@pytest.mark.parametrize("learner", ["ripper", "tree", "forest"])
def test_date_columns_are_pmml_day_counts(tmp: Path, learner: str):
    # a date column is a DataField of PMML's days since 1970: the evaluators read the dates
    rng = np.random.default_rng(4)
    n = 300
    days = rng.integers(18_000, 19_500, n)
    frame = pl.DataFrame({"d": days, "x": rng.normal(size=n).round(2)}).select(
        pl.col("d").cast(pl.Date).dt.strftime("%Y-%m-%d").alias("signed"),
        pl.col("x"),
        pl.when(pl.col("d") > 18_800).then(pl.lit("new")).otherwise(pl.lit("old")).alias("age"),
    )
    data = tmp / "dated.csv"
    frame.write_csv(data)
    model = tmp / f"dated-{learner}.json"
    assert run_cli(learner, str(data), "-y", "age", "-o", str(model), "-q", "--seed", "1").code == 0
    # PMML4S (1.5.8) reads a date field of any PMML form as missing: JPMML alone scores them
    _check(model, data, tmp, engines=("jpmml",))
    assert "dateDaysSince[1970]" in (tmp / f"dated-{learner}.pmml").read_text()


@pytest.mark.parametrize(
    "options", [("ripper",), ("cn2",), ("cn2", "--unordered"), ("cn2", "--unordered", "--average", "median")]
)
def test_rules_with_constants(tmp: Path, options: tuple[str, ...]):
    # a list's first match, or the mean of a set's matching rules with the default for rows
    # none matches; rows with a missing and an unseen level
    rng = np.random.default_rng(6)
    n = 400
    # full-precision x: the thresholds are data values, and rows sit exactly on each one
    x, c = rng.uniform(0, 10, n), rng.choice(["a", "b", "c"], n)
    y = np.where(x < 5, 2 * x, 20 - 2 * x) + np.select([c == "a", c == "b"], [0.0, 3.0], -2.0) + rng.normal(0, 0.3, n)
    frame = pl.DataFrame({"x": x, "c": c, "y": y})
    odd = pl.DataFrame({"x": [None, 3.0, 2.0], "c": ["b", None, "zzz"], "y": [0.0] * 3}, schema=frame.schema)
    data = tmp / "constants.csv"
    pl.concat([frame, odd]).write_csv(data)
    model = tmp / f"constants-{'-'.join(options)}.json"
    assert run_cli(*options[:1], str(data), "-y", "y", "-o", str(model), "-q", *options[1:]).code == 0
    _check(model, data, tmp)


@pytest.mark.parametrize("learner", ["cn2", "ripper"])
def test_rows_sitting_on_data_value_thresholds(tmp: Path, learner: str):
    # cn2's and ripper's thresholds are data values: rows sit exactly on them, in 17 digits
    rng = np.random.default_rng(12)
    x = rng.normal(size=3000)
    frame = pl.DataFrame({"x": x, "y": np.where(x + rng.normal(0, 0.3, 3000) > 0, "p", "q")})
    data = tmp / "on-thresholds.csv"
    frame.write_csv(data)
    model = tmp / f"on-thresholds-{learner}.json"
    assert run_cli(learner, str(data), "-y", "y", "-o", str(model), "-q").code == 0
    _check(model, data, tmp)
