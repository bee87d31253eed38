"""Hostile values never become SQL: every literal and identifier of an exported model reads
back, through a real parser of each dialect, as exactly the value or name the model holds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import polars as pl
import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from rulecli import api
from rulecli.model.core import Condition, DecisionList, Op, Rule, RuleSet, Vote
from rulecli.model.export import DIALECTS
from tests.conftest import run_cli

# quotes of each kind, backslashes, line breaks, control characters, comment markers,
# semicolons and non-ASCII text, mixed with plain letters
PIECES = [*"'\"`\\\n\r\t\x01\x1f;-/*#%$ {}()[]", "--", "/*", "*/", "é", "字", "\u2028", "a", "B"]
HOSTILE = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)


def _model(values: list[str], labels: list[str], column: str, rule_set: bool) -> DecisionList | RuleSet:
    classes = tuple(dict.fromkeys(labels))
    rules = tuple(Rule((Condition(column, Op.EQ, v),), labels[i % len(labels)]) for i, v in enumerate(values))
    if rule_set:
        return RuleSet("target", classes, rules, Rule((), classes[0]), Vote.ONE)
    return DecisionList("target", classes, rules, Rule((), classes[0]))


def _literals(sql: str, dialect: str) -> tuple[Counter[str], set[str]]:
    tree = sqlglot.parse_one(sql, read=dialect)
    strings = Counter(node.this for node in tree.find_all(exp.Literal) if node.is_string)
    names = {node.this for node in tree.find_all(exp.Identifier)}
    return strings, names


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("rule_set", [False, True])
@given(
    values=st.lists(HOSTILE, min_size=1, max_size=4), labels=st.lists(HOSTILE, min_size=1, max_size=3), column=HOSTILE
)
def test_every_literal_and_name_reads_back_exactly(dialect: str, rule_set: bool, values, labels, column):
    model = _model(values, labels, column, rule_set)
    sql = api.export(model, "sql", dialect=dialect, table="t")
    strings, names = _literals(sql, dialect)
    used = [*values, *(r.prediction for r in model.rules), model.default.prediction]  # type: ignore[union-attr]
    for value in used:
        assert strings[value] >= 1, (value, sql)
    assert column in names and "prediction" in names
    # nothing else reads as a string: no value broke out of its literal into another
    assert set(strings) <= {*values, *model.classes}, set(strings) - {*values, *model.classes}


@given(values=st.lists(HOSTILE, min_size=1, max_size=4, unique=True), labels=st.lists(HOSTILE, min_size=2, max_size=3))
def test_duckdb_runs_the_hostile_export_and_predicts_as_rulecli(values, labels):
    model = _model(values, labels, "col; DROP TABLE t --", rule_set=False)
    frame = pl.DataFrame({"col; DROP TABLE t --": [*values, "none of them"]})
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    exported = api.export(model, "sql", dialect="duckdb", table="t")
    got = con.sql(exported).pl()["prediction"].to_list()
    assert got == api.predict(model, frame)["prediction"].to_list()
    assert con.sql("SELECT count(*) FROM t").fetchall() == [(len(values) + 1,)]


def test_a_python_keyword_is_refused_as_the_function_name(tmp_path: Path):
    rules = tmp_path / "r.txt"
    rules.write_text("IF x = 'a' THEN y = 'b'\nELSE y = 'c'\n")
    for name in ("class", "lambda", "1x", "a-b"):
        result = run_cli("export", str(rules), "--to", "python", "--name", name)
        assert result.code == 2 and "--name must be a Python identifier" in result.stderr
    assert run_cli("export", str(rules), "--to", "python", "--name", "score").code == 0
