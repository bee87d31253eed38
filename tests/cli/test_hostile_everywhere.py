"""Hostile names, values and labels, learned by every learner and carried through every
form: the text model, SQL in each dialect (parsed back by sqlglot; run by DuckDB), Python
and Polars. Nothing a value holds becomes code or a rule: each form predicts as `predict`."""

from __future__ import annotations

import re
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
import sqlglot
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from rulecli import api, learners
from rulecli.errors import ParamError
from rulecli.model.export import DIALECTS
from tests.cli.test_export_hostile import HOSTILE
from tests.conftest import QUICK, run_cli, slow_for

CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
NUMERIC = {"lessThan", "lessOrEqual", "greaterThan", "greaterOrEqual"}
TEXT_FORMS = [n for n in learners.names("classes") if n != "forest"]


def _table(column: str, levels: list[str], labels: list[str], n: int = 90) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    x = rng.integers(0, len(levels), n)
    flip = rng.random(n) < 0.1
    y = np.where(flip, (x + 1) % len(labels), x % len(labels))
    return pl.DataFrame(
        {
            column: [levels[i] for i in x],
            "*": rng.choice(["a", "b"], n),
            "flag": rng.random(n) < 0.5,
            "target": [labels[i] for i in y],
        }
    )


def _predicted(model_path: Path, data: Path) -> list[str | None]:
    result = run_cli("predict", str(model_path), str(data), "--json")
    assert result.code == 0, result.stderr
    return pl.read_ndjson(result.stdout.encode())["prediction"].to_list()


def _check_exports(model_path: Path, frame: pl.DataFrame, expected: list[str | None], values: set[str]) -> None:
    model = api.load(model_path)
    for dialect in DIALECTS:
        sql = api.export(model, "sql", dialect=dialect, table="t")
        strings = Counter(n.this for n in sqlglot.parse_one(sql, read=dialect).find_all(exp.Literal) if n.is_string)
        # every string literal is a value or label of the data: none broke out of its quotes
        assert set(strings) <= values, (dialect, set(strings) - values)
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    assert con.sql(api.export(model, "sql", dialect="duckdb", table="t")).pl()["prediction"].to_list() == expected
    scope: dict = {}
    exec(api.export(model, "python"), scope)
    assert [scope["predict"](row) for row in frame.to_dicts()] == expected
    polars_expr = eval(api.export(model, "polars"), {"pl": pl})
    assert frame.select(polars_expr.alias("p"))["p"].to_list() == expected
    _check_pmml(model, values, set(frame.columns))


def _check_pmml(model, values: set[str], columns: set[str]) -> None:
    """PMML carries every value as an attribute, or refuses what XML 1.0 cannot hold."""
    try:
        document = ET.fromstring(api.export(model, "pmml"))
    except ParamError as exc:
        assert "control character" in str(exc)
        assert any(CONTROL.search(v) for v in (*values, *columns))
        return
    tag = "{http://www.dmg.org/PMML-4_4}"
    simple = list(document.iter(f"{tag}SimplePredicate"))
    fields = {e.get("field") for e in simple} | {e.get("field") for e in document.iter(f"{tag}SimpleSetPredicate")}
    assert fields <= columns, fields - columns
    compared = {e.get("value") for e in simple if e.get("operator") not in NUMERIC} - {None}
    scores = {e.get("score") for e in document.iter(f"{tag}SimpleRule")}
    assert compared | scores <= values, (compared | scores) - values


@pytest.mark.parametrize("learner", slow_for(learners.names("classes")))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    column=HOSTILE,
    levels=st.lists(HOSTILE, min_size=3, max_size=3, unique=True),
    labels=st.lists(HOSTILE, min_size=2, max_size=2, unique=True),
)
def test_hostile_strings_in_every_learner_and_form(learner: str, column: str, levels: list[str], labels: list[str]):
    assume(column not in ("*", "flag", "target", "prediction"))
    frame = _table(column, levels, labels)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "d.parquet"
        frame.write_parquet(data)
        as_json = Path(tmp) / "m.json"
        fitted = run_cli(learner, str(data), "-y", "target", "-o", str(as_json), "-q", *QUICK.get(learner, []))
        assert fitted.code == 0, fitted.stderr
        expected = _predicted(as_json, data)
        assert len(expected) == frame.height
        if learner in TEXT_FORMS:  # a forest has no text or export form
            as_text = Path(tmp) / "m.txt"
            options = ["-y", "target", "-o", str(as_text), "-q", *QUICK.get(learner, [])]
            assert run_cli(learner, str(data), *options).code == 0
            assert _predicted(as_text, data) == expected, "the text model predicts as its JSON twin"
            _check_exports(as_json, frame, expected, {*levels, *labels, "a", "b", "true", "false"})
