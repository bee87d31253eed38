"""Terminal output: data on stdout, everything for people on stderr (Rich, TTY-aware)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from rulecli.display import counted, visible
from rulecli.model.core import Committee, DecisionList, Model, RuleRegression
from rulecli.model.text import (
    BAR_WIDTH,
    forest_summary,
    render_conditions,
    render_count,
    render_formula,
    render_tree,
    render_value,
)
from rulecli.model.tree import Forest, Tree, TreeModel

from .naming import as_flags

_NO_COLOR = "NO_COLOR" in os.environ
# Off a terminal Rich would wrap tables at 80 columns; logs and CI output read better unwrapped.
_PIPE_WIDTH = 200
err = Console(stderr=True, highlight=False, no_color=_NO_COLOR, width=None if sys.stderr.isatty() else _PIPE_WIDTH)
out = Console(highlight=False, no_color=_NO_COLOR, width=None if sys.stdout.isatty() else _PIPE_WIDTH)


class DataTable(Table):
    """A table whose title, headers and cells are data: shown as they are, never read as
    Rich markup (a class named ``[red]x`` or ``[/oops]`` prints as itself), nor acted on by
    the terminal (controls shown as ``\\x1b``, :func:`rulecli.display.visible`)."""

    def __init__(self, title: str, **options: Any) -> None:
        super().__init__(title=Text(visible(title)), title_justify="left", **options)

    def add_column(self, header: str = "", **options: Any) -> None:  # type: ignore[override]
        super().add_column(Text(visible(header)), **options)

    def add_row(self, *cells: str | None, **options: Any) -> None:  # type: ignore[override]
        super().add_row(*(Text(visible(c)) if isinstance(c, str) else c for c in cells), **options)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """At a terminal, the Rich table; into a pipe, a log or a file, plain aligned text:
        no box characters, no padding past the last column, no colour (clig.dev)."""
        if console.is_terminal:
            yield from super().__rich_console__(console, options)
            return
        yield Text("\n".join(self.plain_lines()), no_wrap=True, end="\n")

    def plain_lines(self) -> list[str]:
        """The title, the headers and the rows as lines of columns two spaces apart, each
        column as wide as its widest cell (numbers right-aligned, as at a terminal)."""
        columns = [[_plain_text(c.header), *(_plain_text(cell) for cell in c._cells)] for c in self.columns]
        widths = [max(map(len, cells), default=0) for cells in columns]
        lines = [_plain_text(self.title)] if self.title else []
        for i in range(max((len(c) for c in columns), default=0)):
            cells = [
                (col[i].rjust(w) if c.justify == "right" else col[i].ljust(w))
                for col, c, w in zip(columns, self.columns, widths, strict=True)
            ]
            lines.append("  ".join(cells).rstrip())
        return lines


def _plain_text(cell: object) -> str:
    """A cell's text: a Text's characters (data, already made visible), or its str."""
    return cell.plain if isinstance(cell, Text) else "" if cell is None else str(cell)


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()


def warn(message: str) -> None:
    err.print(f"Warning: {visible(as_flags(message))}", markup=False, soft_wrap=True)


def info(message: str, *, quiet: bool = False) -> None:
    """A progress or summary line, shown only to a person at a terminal."""
    if not quiet and stderr_is_tty():
        err.print(visible(as_flags(message)), markup=False)


PLAIN_EVERY = 30.0  # seconds between progress lines off a terminal (a CI log, nohup)


def _plain(describe: Callable[[int], str]) -> Callable[[int], None]:
    """Progress off a terminal: a plain line on stderr at most every ``PLAIN_EVERY``
    seconds, with the time so far (nothing for a run shorter than that)."""
    started = last = time.monotonic()

    def update(done: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PLAIN_EVERY:
            last = now
            err.print(f"{visible(describe(done))} ({now - started:.0f} s)", markup=False, soft_wrap=True)

    return update


class Ticker:
    """What a progress display hands the learner: called with the work done so far;
    ``phase`` names the step running before any of that work is done (the CLI's reading,
    then learning)."""

    def __init__(self, step: Callable[[int], None], phase: Callable[[str], None] = lambda text: None) -> None:
        self._step, self._phase = step, phase

    def __call__(self, done: int) -> None:
        self._step(done)

    def phase(self, text: str) -> None:
        self._phase(text)


@contextlib.contextmanager
def rule_progress(name: str, *, quiet: bool) -> Iterator[Ticker | None]:
    """A live "N rules" counter on stderr while a learner runs: at a terminal a spinner
    (naming the phase until the first rule), off one a plain line now and then."""
    if quiet:
        yield None
        return

    def describe(n_rules: int) -> str:
        # candidates: pruning and optimisation may keep fewer (the summary line says how many)
        return f"{name}: {counted(n_rules, 'rule')} grown so far"

    if not stderr_is_tty():
        yield Ticker(_plain(describe))
        return
    spinner = Spinner("dots", text=f"{name}: reading and preparing the data")
    # Rich's status() would capture stdout, where the model goes: keep stdout untouched.
    with Live(spinner, console=err, transient=True, redirect_stdout=False, redirect_stderr=False):
        yield Ticker(lambda n: spinner.update(text=describe(n)), lambda text: spinner.update(text=f"{name}: {text}"))


@contextlib.contextmanager
def progress_bar(name: str, total: int, unit: str, *, quiet: bool) -> Iterator[Ticker | None]:
    """A progress bar over ``total`` steps on stderr at a terminal (naming the phase until
    the first step); off one a plain line now and then."""
    if quiet:
        yield None
        return
    if not stderr_is_tty():
        yield Ticker(_plain(lambda done: f"{name}: {done} of {total} {unit}"))
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=True, redirect_stdout=False, redirect_stderr=False) as bar:
        task = bar.add_task(f"{name}: reading and preparing the data", total=total)
        yield Ticker(
            lambda done: bar.update(task, completed=done, description=name),
            lambda text: bar.update(task, description=f"{name}: {text}"),
        )


def show_model(model: Model | TreeModel) -> None:
    """A model for a person at a terminal: a table of rules, a drawn tree, a forest summary."""
    if isinstance(model, Tree):
        out.print(render_tree(model), markup=False, end="")
    elif isinstance(model, Forest):
        for line in forest_summary(model):
            out.print(line, markup=False)
    elif isinstance(model, RuleRegression):
        out.print(number_rules_table(model))
    elif isinstance(model, Committee):
        lists = len(model.members)
        out.print(f"{visible(model.target)} (a number): the mean of {lists} lists' predictions", markup=False)
        for m, member in enumerate(model.members, 1):
            out.print(number_rules_table(member, f"list {m} of {lists}: "))
    else:
        out.print(rules_table(model))


def number_rules_table(model: RuleRegression, title: str = "") -> Table:
    """Rules that predict a number: each rule's conditions, formula and training figures."""
    decides = "first match decides" if model.ordered else "matches averaged"
    table = DataTable(f"{title}{model.target} (a number): {decides}")
    for name, justify in (("#", "right"), ("IF", "left"), ("THEN", "left"), ("covers", "right"), ("rmse", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    rows = [*((str(i), r) for i, r in enumerate(model.rules, 1)), ("else", model.default)]
    for label, rule in rows:
        stats = rule.stats
        figures = ["", ""] if stats is None else [render_count(stats.covered), f"{stats.rmse:.4g}"]
        conditions = render_conditions(rule.conditions) if rule.conditions else ""
        table.add_row(label, conditions, render_formula(rule.formula), *figures)
    return table


def rules_table(model: Model) -> Table:
    ordered = "decision list, first match wins" if isinstance(model, DecisionList) else "rule set, matches vote"
    table = DataTable(f"{model.target}: {ordered}")
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
    table = DataTable(title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95 % interval", justify="right")
    keys = (
        ("rows", "mae", "rmse", "r2")
        if "rmse" in metrics
        else ("rows", "accuracy", "balanced_accuracy", "macro_f1", "kappa", "coverage", "unclassified")
    ) + (("expected_cost",) if "expected_cost" in metrics else ())
    for key in keys:
        value, interval = metrics[key], metrics.get(f"{key}_interval")
        shown = f"{interval[0]:.4f} – {interval[1]:.4f}" if interval else ""
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value), shown)
    return table


def draw_partial_dependence(feature: str, grid: list[float | str], column: str, values: list[float]) -> None:
    """The curve as one bar per grid point, on stderr, scaled between its minimum and maximum."""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    labels = [f"{t:.6g}" if isinstance(t, float) else visible(str(t)) for t in grid]
    width = max(len(label) for label in labels)
    err.print(
        f"partial dependence on {visible(feature)}: {visible(column)} (bar from {low:.4g} to {high:.4g})", markup=False
    )
    for label, value in zip(labels, values, strict=True):
        bar = "█" * (1 + round((BAR_WIDTH - 1) * (value - low) / span))
        err.print(f"  {label:>{width}}  {value:12.4f}  {bar}", markup=False)
