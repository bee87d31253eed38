"""Terminal output: data on stdout, everything for people on stderr (Rich, TTY-aware)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table

from rulecli.model.core import DecisionList, Model
from rulecli.model.text import render_conditions, render_value

_NO_COLOR = "NO_COLOR" in os.environ
# Off a terminal Rich would wrap tables at 80 columns; logs and CI output read better unwrapped.
_PIPE_WIDTH = 200
err = Console(stderr=True, highlight=False, no_color=_NO_COLOR, width=None if sys.stderr.isatty() else _PIPE_WIDTH)
out = Console(highlight=False, no_color=_NO_COLOR, width=None if sys.stdout.isatty() else _PIPE_WIDTH)


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()


def warn(message: str) -> None:
    err.print(f"Warning: {message}", markup=False)


def info(message: str, *, quiet: bool = False) -> None:
    """A progress or summary line, shown only to a person at a terminal."""
    if not quiet and stderr_is_tty():
        err.print(message, markup=False)


@contextlib.contextmanager
def rule_progress(name: str, *, quiet: bool) -> Iterator[Callable[[int], None] | None]:
    """A live "N rules" counter on stderr while a learner runs, only for a person at a terminal."""
    if quiet or not stderr_is_tty():
        yield None
        return
    spinner = Spinner("dots", text=f"{name}: reading and preparing the data")
    # Rich's status() would capture stdout, where the model goes: keep stdout untouched.
    with Live(spinner, console=err, transient=True, redirect_stdout=False, redirect_stderr=False):

        def update(n_rules: int) -> None:
            spinner.update(text=f"{name}: {n_rules} rules grown so far")

        yield update


def rules_table(model: Model) -> Table:
    ordered = "decision list, first match wins" if isinstance(model, DecisionList) else "rule set, matches vote"
    table = Table(title=f"{model.target}: {ordered}", title_justify="left")
    for name, justify in (
        ("#", "right"),
        ("IF", "left"),
        ("THEN", "left"),
        ("covers", "right"),
        ("correct", "right"),
        ("acc.", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    rows = [(str(i), r) for i, r in enumerate(model.rules, 1)]
    if model.default is not None:
        rows.append(("else", model.default))
    for label, rule in rows:
        stats = rule.stats
        cells = ["", "", ""]
        if stats is not None:
            accuracy = f"{stats.correct / stats.covered:.2f}" if stats.covered else "-"
            cells = [str(stats.covered), str(stats.correct), accuracy]
        condition = render_conditions(rule.conditions) if label != "else" else "(default)"
        table.add_row(label, condition, render_value(rule.prediction), *cells)
    return table


def metrics_table(title: str, metrics: dict[str, Any]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in ("rows", "accuracy", "balanced_accuracy", "macro_f1", "kappa", "coverage", "unclassified"):
        value = metrics[key]
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    return table
