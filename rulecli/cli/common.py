"""Options and plumbing every command shares: reading data, loading and writing models."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import polars as pl
import typer

from rulecli import api, io
from rulecli.dataset import DataSpec
from rulecli.errors import InputError
from rulecli.model.compile import Predictor
from rulecli.model.serde import dumps
from rulecli.params import DATA_PANEL, MIN_BUCKET_HELP, Params, param

from . import console, options

DATA = DATA_PANEL
OUTPUT = "Output"
EVAL = "Evaluation"

MinBucket = Annotated[int | None, typer.Option("--min-bucket", min=1, help=MIN_BUCKET_HELP)]


def cost_table(help: str, panel: str | None = None) -> Any:
    """A ``--costs TABLE`` option: ``evaluate`` measures with it, a learner decides with it."""
    return Annotated[str | None, typer.Option("--costs", metavar="TABLE", help=help, rich_help_panel=panel)]


@dataclass(frozen=True, kw_only=True)
class RunOptions(Params):
    """What a learner command writes and measures, beside its learner's parameters."""

    seed: int = param(0, "Random seed, recorded in the model.", panel=OUTPUT)
    output: str | None = param(None, "Save the model: .json (full) or .txt (rules).", short="o", panel=OUTPUT)
    json_out: bool = param(False, "Print the model as JSON on stdout.", flag="json", panel=OUTPUT)
    quiet: bool = param(False, "Print nothing but errors and requested data.", short="q", panel=OUTPUT)
    test: str | None = param(None, "Also score the model on this table.", panel=EVAL)
    cv: int | None = param(None, "Stratified K-fold cross-validation before the final fit.", ge=2, panel=EVAL)
    metrics_out: str | None = param(None, "Write the --test/--cv metrics here (JSON).", panel=EVAL)
    time_limit: float | None = param(
        None,
        "Stop with an error after this many seconds (nothing written).",
        ge=0,
        panel=OUTPUT,
    )
    time_budget: float | None = param(
        None, "After about this many seconds, keep the model learned so far (exit 0).", ge=0, panel=OUTPUT
    )
    costs: str | None = param(
        None,
        "Each rule predicts its class of least expected cost under this cost table (true class in the first "
        "column, a column per predicted class).",
        metavar="TABLE",
        panel=DATA,
    )


# options other commands share with the learners, each as declared once
Quiet, Seed, OutputPath, JsonOut, TestPath = (
    options.option(RunOptions, name) for name in ("quiet", "seed", "output", "json_out", "test")
)
Target, Weights = (options.option(DataSpec, name) for name in ("target", "weights"))


def tell_of_data(ds: Any, note: str | None, *, quiet: bool) -> None:
    """What the typing of a training table left out, and how its target was typed (stderr);
    an engine's passes over it are shown as they end, at a terminal."""
    engine = getattr(ds, "engine", None)
    if engine is not None and not quiet and console.stderr_is_tty():
        rows = f"{ds.n_rows:,} rows"
        ds.on_pass = lambda what, seconds: console.info(f"{engine}: {what} ({rows}, {seconds:.1f} s)")
    if not quiet:
        for message in ds.warnings:
            console.warn(message)
    if note is not None:
        console.info(note, quiet=quiet)


def emit_model(model: Predictor, *, output: str | None, as_json: bool, quiet: bool, shown: bool = True) -> None:
    """Save the model to -o (atomically) and show it on stdout (JSON, table or text). With no
    -o the model on stdout is what the command was asked for: --quiet keeps it. ``shown``
    false: stdout holds something else the command was asked for (reduct's --print)."""
    if output is not None:
        api.save(model, output)
    if as_json:
        io.write_text(io.STDIO, dumps(model))
    elif not shown or (quiet and output is not None):
        return
    elif console.stdout_is_tty():
        console.show_model(model)
    else:
        io.write_text(io.STDIO, api.rules_text(model))


def write_json(path: str, payload: dict[str, Any]) -> None:
    io.write_text(path, api.metrics_json(payload))


Reference = Annotated[
    str | None,
    typer.Option(
        "--reference",
        metavar="TABLE",
        help="Hold each column the model reads against this table (e.g. the training table): population "
        "stability index and a chi-square test per column.",
    ),
]
Strict = Annotated[
    bool,
    typer.Option("--strict", help="Schema drift (new levels, values no row holds, silent rules) is an error, exit 2."),
]
# (name, annotation, default) of each read option, as declared once in io.ReadOptions
READ_OPTIONS = tuple((p.name, p.annotation, p.default) for p in options.parameters(io.ReadOptions))


def adds_options(
    declared: Sequence[tuple[str, Any, Any]],
    gathered: Callable[[dict[str, Any]], dict[str, Any]],
    into: tuple[str, ...],
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator: the command takes the ``declared`` options too (name, annotation,
    default) and receives, instead of them, the keywords ``into`` that ``gathered`` makes
    of their values (the command's own parameters of those names leave its options)."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)  # Typer reads the stored signature as is
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
            for name, annotation, default in declared
        ]

        @functools.wraps(command)
        def with_options(**values: Any) -> None:
            given = {name: values.pop(name) for name, _, _ in declared}
            command(**values, **gathered(given))

        kept = [p for p in signature.parameters.values() if p.name not in into]
        with_options.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        return with_options

    return decorate


# A scoring command that takes the options saying how its table is read (declared once, in
# io.ReadOptions) and receives them as ``read``: the API's read keywords.
reads_a_table = adds_options(
    READ_OPTIONS, lambda values: {"read": options.gather(io.ReadOptions, values)}, into=("read",)
)


def scoring_input(model: Predictor, data: str, opts: dict[str, Any], *, truth: str | None, strict: bool, quiet: bool):
    """The data a scoring command reads, once, and what drifted in it since training:
    warnings (stderr), or with ``strict`` the first of them as the error."""
    lf, label = api.scan_for(model, data, **opts)
    notes = api.drift(model, lf, truth=truth, label=label)
    if strict and notes:
        raise InputError(f"{notes[0]} (--strict{f'; {len(notes) - 1} more' if len(notes) > 1 else ''})")
    if not quiet:
        for note in notes:
            console.warn(note)
    return lf, label


def open_model(model_path: str, data: str) -> Predictor:
    """Load the model a scoring command names (the model and the data cannot both be stdin)."""
    check_not_both_stdin(model_path, data)
    return api.load(model_path)


def check_not_both_stdin(model_path: str, data_path: str) -> None:
    if model_path == io.STDIO and data_path == io.STDIO:
        raise InputError("the model and the data cannot both come from stdin ('-')")


def check_table_or_json(path: str) -> None:
    """A path that gets a table by its extension, or one JSON object for .json."""
    if Path(path).suffix.lower() == ".json":
        io.check_writable(path)
    else:
        io.table_output(path)


def write_partial_dependence(
    path: str, feature: str, grid: list[float | str], column: str, values: list[float]
) -> None:
    """The partial dependence curve as a table (by extension) or, for .json, one object."""
    if Path(path).suffix.lower() == ".json":
        write_json(path, {"feature": feature, "grid": grid, column: values})
        return
    io.write_table(pl.DataFrame({feature: grid, column: values}), path)
