"""What a person sees at a terminal: the rules table and the OneR cross table."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
from rich.console import Console

from rulecli.cli.console import rules_table
from rulecli.cli.learn import _cross_table
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners.oner import OneRParams, fit_oner
from tests.conftest import SAMPLE, run_cli


def _render(renderable) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def _house_model():
    return fit_oner(prepare_dataset(pl.read_csv(SAMPLE / "house.csv"), DataSpec()), OneRParams())


def test_rules_table_lists_rules_and_default():
    text = _render(rules_table(_house_model()))
    assert "decision list, first match wins" in text
    assert "size = 'medium'" in text and "'medium'" in text
    assert "0.75" in text  # accuracy of the medium rule, 3/4
    assert "(default)" in text


def test_cross_table_shows_counts_and_shares_like_the_seeds():
    text = _render(_cross_table(_house_model()))
    row = next(line for line in text.splitlines() if "size = 'small'" in line)
    cells = re.split(r"\s{2,}", row.strip())  # off a terminal: plain columns two spaces apart
    assert cells == ["size = 'small'", "1", "2", "1", "0.25", "0.50", "0.25"]


def test_tables_into_a_pipe_are_plain_aligned_text(tmp_path: Path):
    # a pipe, a log or a file gets no box characters, no padding, no colour (clig.dev)
    model = tmp_path / "m.json"
    learned = run_cli("oner", str(SAMPLE / "house.csv"), "--cv", "2", "-o", str(model))
    evaluated = run_cli("evaluate", str(model), str(SAMPLE / "house.csv"))
    assert evaluated.code == 0 and evaluated.stdout.splitlines()[1].split() == [
        "metric",
        "value",
        "95",
        "%",
        "interval",
    ]
    for text in (learned.stderr, evaluated.stdout):
        assert not set(text) & set("┏━┃┡╇│└┴┘┌┐"), text
        assert all(line == line.rstrip() for line in text.splitlines())


def test_show_table_goes_to_stderr_and_keeps_stdout_a_model():
    result = run_cli("oner", str(SAMPLE / "house.csv"), "--show-table")
    assert "cross table: size x value" in result.stderr
    assert result.stdout.startswith("IF size = 'big'")
