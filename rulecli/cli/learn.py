"""Learner commands, one per registry entry: read data, fit (with --cv / --test), emit the model.

A command's options are its learner's parameter declarations (``rulecli.cli.options``)
plus the data and run options every learner shares; a few learners also have options
for what to show or write after fitting (``EXTRAS``).
"""

from __future__ import annotations

import contextlib
import inspect
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from rulecli import api, io, learners
from rulecli.dataset import Dataset, DataSpec
from rulecli.engines import EngineOptions
from rulecli.errors import ParamError, TimeLimitError
from rulecli.learners.reduct import analysis_text
from rulecli.model.core import Model
from rulecli.model.text import render_conditions
from rulecli.params import Params

from . import common, console, options

DATA = inspect.Parameter(
    "data",
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    annotation=Annotated[
        str,
        typer.Argument(
            metavar="DATA", help="Training table (CSV, TSV, Parquet, NDJSON, IPC, ARFF, Excel; '-' = stdin)."
        ),
    ],
)
# What every learner command takes beside its learner's parameters, each declared once:
# which columns and how typed, how the file is read, where rows are counted (a learner that
# counts in memory only says so when asked for more), what is written and measured.
SHARED = (DataSpec, io.ReadOptions, EngineOptions, common.RunOptions)


@dataclass(frozen=True)
class Extra:
    """Options of a learner's command beyond its parameters: what to show or write once it
    has fitted. ``check(values, engine)`` refuses what cannot go together before any work,
    ``after(model, data, params, values, quiet)`` does it; ``shows_model(params)``
    False: stdout gets what ``after`` writes instead of the model."""

    options: tuple[inspect.Parameter, ...] = ()
    check: Callable[[dict[str, Any], EngineOptions], None] = lambda values, engine: None
    after: Callable[[Any, Dataset, Any, dict[str, Any], bool], None] = lambda *args: None
    shows_model: Callable[[Any], bool] = lambda params: True


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def learner_command(name: str) -> Callable[..., None]:
    """The Typer command of the registered learner ``name``."""
    learner = learners.get(name)
    extra = EXTRAS.get(name, Extra())
    shared = [p for declared in SHARED for p in options.parameters(declared, skip=frozenset())]
    takes_seed = "seed" in learner.params.__dataclass_fields__

    def command(**values: Any) -> None:
        data = values.pop("data")
        spec, read = (options.gather(declared, values, skip=frozenset()) for declared in (DataSpec, io.ReadOptions))
        engine = EngineOptions(**options.gather(EngineOptions, values, skip=frozenset()))
        run = common.RunOptions(**options.gather(common.RunOptions, values, skip=frozenset()))
        extra_values = {p.name: values.pop(p.name) for p in extra.options}
        params = learner.params(**options.gather(learner.params, values), **({"seed": run.seed} if takes_seed else {}))
        extra.check(extra_values, engine)
        _learn(learner, extra, params, data, Inputs(spec, read, engine), run, extra_values)

    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [DATA, *options.parameters(learner.params), *extra.options, *shared]
    )
    examples = "".join(f"\n\n    {e}" for e in learner.examples)
    heading = "Examples:" if len(learner.examples) > 1 else "Example:"
    command.__doc__ = f"{learner.help}\n\n{heading}{examples}" if examples else learner.help
    command.__name__ = name
    return command


@dataclass(frozen=True)
class Inputs:
    """How a learner command reads its table: the data and read keywords, and the engine."""

    spec: dict[str, Any]
    read: dict[str, Any]
    engine: EngineOptions


def _learn(
    learner: learners.Learner,
    extra: Extra,
    params: Params,
    data: str,
    inputs: Inputs,
    run: common.RunOptions,
    extra_values: dict[str, Any],
) -> None:
    """The shared life of a learner command, timed by --time-limit as a whole."""
    if run.json_out and not extra.shows_model(params):
        # one invocation, one thing on stdout (e.g. reduct --print reducts is not the model)
        raise ParamError(
            "--json prints the model, but this --print sends something else to stdout; save the model with -o FILE.json"
        )
    _check_outputs(run)
    with _time_limit(learner.name, run.time_limit, _quicker(learner)):
        learned = _learned(learner, params, data, inputs, run)
        # the live progress line is gone (cleared) before anything else prints
        _show_metrics(learned.metrics, run)
        if not run.quiet:
            for message in learned.warnings:
                console.warn(message)
        model = learned.model
        common.emit_model(
            model, output=run.output, as_json=run.json_out, quiet=run.quiet, shown=extra.shows_model(params)
        )
        if run.metrics_out is not None:  # only once the model is saved: no metrics of a lost model
            common.write_json(run.metrics_out, learned.metrics)
        for note in learned.notes:
            console.info(note, quiet=run.quiet)
        extra.after(model, learned.data, params, extra_values, run.quiet)


def _check_outputs(run: common.RunOptions) -> None:
    """The files the command writes are checked before a long --cv, not after it (the API
    checks what it reads)."""
    if run.output is not None:
        api.check_model_path(run.output)
    if run.metrics_out is not None:
        io.check_writable(run.metrics_out)


def _learned(
    learner: learners.Learner, params: Params, data: str, inputs: Inputs, run: common.RunOptions
) -> api.Learned:
    """The API's learning, its progress shown meanwhile."""
    progress = (
        console.progress_bar(learner.name, learner.steps(params), learner.unit, quiet=run.quiet)
        if learner.steps is not None
        else console.rule_progress(learner.name, quiet=run.quiet)
    )
    with progress as on_step:

        def heard(ds: Any, note: str | None) -> None:
            common.tell_of_data(ds, note, quiet=run.quiet)
            if on_step is not None:
                on_step.phase(f"cross-validating ({run.cv} folds), then learning" if run.cv else "learning")

        return api.learn(
            learner,
            data,
            params,
            cv=run.cv,
            seed=run.seed,
            test=run.test,
            time_budget=run.time_budget,
            costs=run.costs,
            engine=inputs.engine,
            progress=on_step,
            on_data=heard,
            **inputs.spec,
            **inputs.read,
        )


def _show_metrics(metrics: dict[str, Any], run: common.RunOptions) -> None:
    """The --cv and --test tables for a person (stderr)."""
    if not run.quiet and "cv" in metrics:
        console.err.print(_cv_table(metrics["cv"], run.cv or 0))
    if not run.quiet and "test" in metrics:
        console.err.print(console.metrics_table(f"test: {run.test}", metrics["test"]))


# ---------------------------------------------------------------------------- extras


def _show_cross_table(model: Model, ds: Dataset, params: Params, values: dict[str, Any], quiet: bool) -> None:
    if values["show_table"] and not quiet:
        console.err.print(_cross_table(model))


def _cross_table(model: Model) -> console.DataTable:
    """The chosen feature's value x class counts with class shares, from the rules' statistics."""
    table = console.DataTable(f"cross table: {model.info.training['feature']} x {model.target}")
    table.add_column("level")
    for cls in model.classes:
        table.add_column(f"# {cls}", justify="right")
    for cls in model.classes:
        table.add_column(f"P({cls})", justify="right")
    for rule in model.rules:
        counts = rule.stats.class_counts if rule.stats and rule.stats.class_counts else ()
        total = sum(counts)
        shares = [f"{c / total:.2f}" if total else "-" for c in counts]
        table.add_row(render_conditions(rule.conditions), *(str(c) for c in counts), *shares)
    return table


def _check_partial_dependence(values: dict[str, Any], engine: EngineOptions) -> None:
    if (values["cls"] is not None or values["pd_out"] is not None) and values["feature"] is None:
        raise ParamError("--class and --pd-out go with --partial-dependence FEATURE")
    if values["feature"] is not None and engine.engine != "memory":
        raise ParamError(
            f"--partial-dependence walks the forest over every row in memory: it goes with --engine memory, "
            f"not {engine.engine}"
        )
    if values["pd_out"] is not None:
        common.check_table_or_json(values["pd_out"])


def _partial_dependence(model: Any, ds: Dataset, params: Params, values: dict[str, Any], quiet: bool) -> None:
    feature = values["feature"]
    if feature is None:
        return
    grid, column, curve = api.partial_dependence(model, ds, feature, values["cls"], values["grid_points"])
    if values["pd_out"] is not None:
        common.write_partial_dependence(values["pd_out"], feature, grid, column, curve)
    if not quiet:
        console.draw_partial_dependence(feature, grid, column, curve)


def _print_analysis(model: Model, ds: Dataset, params: Any, values: dict[str, Any], quiet: bool) -> None:
    if params.show != "rules":
        io.write_text(io.STDIO, analysis_text(model, params.show))  # type: ignore[arg-type]


EXTRAS = {
    "oner": Extra(
        options=(
            _option(
                "show_table",
                Annotated[bool, typer.Option("--show-table", help="Show the chosen feature's cross table (stderr).")],
                False,
            ),
        ),
        after=_show_cross_table,
    ),
    "forest": Extra(
        options=(
            _option(
                "feature",
                Annotated[
                    str | None,
                    typer.Option(
                        "--partial-dependence", help="Compute and draw the partial dependence on this feature."
                    ),
                ],
                None,
            ),
            _option(
                "cls",
                Annotated[
                    str | None,
                    typer.Option("--class", help="Class y0 of --partial-dependence (default: the first class)."),
                ],
                None,
            ),
            _option(
                "pd_out",
                Annotated[
                    str | None,
                    typer.Option("--pd-out", help="Write the partial dependence here (.csv, .json, .parquet)."),
                ],
                None,
            ),
            _option(
                "grid_points",
                Annotated[
                    int,
                    typer.Option("--grid-points", min=2, help="Grid size for a numeric --partial-dependence feature."),
                ],
                20,
            ),
        ),
        check=_check_partial_dependence,
        after=_partial_dependence,
    ),
    "reduct": Extra(after=_print_analysis, shows_model=lambda params: params.show == "rules"),
}


MAX_TIME_LIMIT = 1e9  # seconds (about 31 years): beyond it the system timer overflows


# options that make a learner quicker, the likeliest first: a time-out names those the command has
QUICKER = (
    "max_rules",
    "max_rule_length",
    "max_depth",
    "max_leaf_nodes",
    "trees",
    "iterations",
    "beam_width",
    "n_reducts",
)


def _quicker(learner: learners.Learner) -> str:
    flags = options.flags_of(learner.params)
    named = [flags[p] for p in QUICKER if p in flags][:2]
    return "fewer rows or features" + (", or " + " / ".join(named) if named else "") + ", make it quicker"


@contextlib.contextmanager
def _time_limit(name: str, limit: float | None, hint: str) -> Iterator[None]:
    """Raise a clear error in the main thread once ``limit`` seconds have passed (SIGALRM):
    Python code between NumPy calls notices within moments, however long a learner runs."""
    if limit is not None and not (0 < limit <= MAX_TIME_LIMIT):
        raise ParamError(
            f"--time-limit must be a number of seconds above 0 and at most {MAX_TIME_LIMIT:g}, got {limit:g}"
        )
    if limit is None or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeLimitError(f"{name}: stopped by --time-limit {limit:g} s; nothing was written ({hint})")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _cv_table(cv: dict[str, Any], k: int) -> console.DataTable:
    keys = list(cv["summary"])
    stratified = "stratified" if "accuracy" in keys else "stratified by the sorted target"
    table = console.DataTable(f"{k}-fold cross-validation ({stratified})")
    table.add_column("fold", justify="right")
    for key in (*keys, "rules"):
        table.add_column(key, justify="right")
    for fold in cv["folds"]:
        table.add_row(str(fold["fold"]), *(f"{fold[k]:.4f}" for k in keys), str(fold["rules"]))
    summary = cv["summary"]
    table.add_row("mean ± sd", *(f"{summary[k]['mean']:.4f} ± {summary[k]['sd']:.4f}" for k in keys), "")
    intervals = [summary[k].get("interval") for k in keys]
    if all(intervals):
        table.add_row("95 % of mean", *(f"{low:.4f} – {high:.4f}" for low, high in intervals), "")  # type: ignore[misc]
    return table
