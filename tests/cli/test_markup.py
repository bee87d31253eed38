"""Values are data, not terminal markup: Rich markup in class labels, levels and column
names prints as itself in every table, and never stops a command."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.conftest import run_cli


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "m.csv"
    pl.DataFrame(
        {
            "[bold]col": ["[/oops]", "[/oops]", "[link=x]y", "[link=x]y"] * 5,
            "target": ["[red]x", "[red]x", "b]", "b]"] * 5,
        }
    ).write_csv(path)
    return path


def test_show_table_and_evaluate_print_markup_literally(tmp_path: Path):
    data = _data(tmp_path)
    model = tmp_path / "m.json"
    learned = run_cli("oner", str(data), "--show-table", "-o", str(model))
    assert learned.code == 0, learned.stderr
    assert "[/oops]" in learned.stderr and "[red]x" in learned.stderr and "[bold]col" in learned.stderr
    scored = run_cli("evaluate", str(model), str(data))
    # in a pipe too the tables are written, as plain text
    assert scored.code == 0 and "[red]x" in scored.stdout and "[/oops]" in scored.stdout, scored.stderr
    assert "\x1b[" not in scored.stdout


def test_evaluate_tables_at_a_terminal_print_markup_literally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from rulecli.cli import console

    data = _data(tmp_path)
    model = tmp_path / "m.json"
    assert run_cli("oner", str(data), "-o", str(model), "-q").code == 0
    monkeypatch.setattr(console, "stdout_is_tty", lambda: True)
    scored = run_cli("evaluate", str(model), str(data))
    assert scored.code == 0, scored.stderr
    assert "[red]x" in scored.stdout and "b]" in scored.stdout and "[/oops]" in scored.stdout
