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
from rulecli.dataset import Dataset
from rulecli.engines import EngineOptions
from rulecli.errors import InputError
from rulecli.model.compile import Predictor
from rulecli.model.serde import dumps
from rulecli.params import MIN_BUCKET_HELP

from . import console

DATA = "Data"
OUTPUT = "Output"
EVAL = "Evaluation"

InputFormat = Annotated[
    str | None,
    typer.Option(
        "--input-format",
        help="csv, tsv, parquet, ndjson, ipc or arff; default: by extension (stdin: by its first bytes).",
        rich_help_panel=DATA,
    ),
]
NullValues = Annotated[
    list[str] | None,
    typer.Option(
        "--null-values",
        help="Extra strings read as missing, e.g. '?' (repeat or comma-separate).",
        rich_help_panel=DATA,
    ),
]
Delimiter = Annotated[
    str | None,
    typer.Option(
        "--delimiter",
        help="CSV/TSV field separator: one character, or 'tab' (default: , or tab).",
        rich_help_panel=DATA,
    ),
]
Encoding = Annotated[
    str, typer.Option("--encoding", help="Text encoding of a CSV/TSV file, e.g. latin-1, cp1252.", rich_help_panel=DATA)
]
NoHeader = Annotated[
    bool,
    typer.Option(
        "--no-header", help="The CSV/TSV file has no header: columns are column_1, column_2, …", rich_help_panel=DATA
    ),
]
SkipLines = Annotated[
    int, typer.Option("--skip-lines", help="Leave out this many lines before the CSV/TSV header.", rich_help_panel=DATA)
]


def csv_layout(delimiter: str | None, encoding: str, no_header: bool, skip_lines: int) -> io.CsvOptions:
    if delimiter is not None and delimiter.lower() in ("tab", "\\t"):
        delimiter = "\t"
    return io.CsvOptions(delimiter=delimiter, encoding=encoding, header=not no_header, skip_lines=skip_lines)


MinBucket = Annotated[int | None, typer.Option("--min-bucket", min=1, help=MIN_BUCKET_HELP)]
Target = Annotated[
    str | None, typer.Option("--target", "-y", help="Target column (default: the last column).", rich_help_panel=DATA)
]
Features = Annotated[
    list[str] | None,
    typer.Option("--features", help="Use only these feature columns (repeat or comma-separate).", rich_help_panel=DATA),
]
Exclude = Annotated[list[str] | None, typer.Option("--exclude", help="Leave these columns out.", rich_help_panel=DATA)]
Use = Annotated[
    list[str] | None,
    typer.Option(
        "--use",
        metavar="COLUMN",
        help="Use these columns even where they look like IDs or free text (left out by default).",
        rich_help_panel=DATA,
    ),
]
Categorical = Annotated[
    list[str] | None, typer.Option("--categorical", help="Treat these columns as categorical.", rich_help_panel=DATA)
]
Numeric = Annotated[
    list[str] | None, typer.Option("--numeric", help="Treat these columns as numeric.", rich_help_panel=DATA)
]
TargetBins = Annotated[
    int | None,
    typer.Option(
        "--target-bins", min=2, help="Bin a numeric target into K quantile classes first.", rich_help_panel=DATA
    ),
]
Weights = Annotated[
    str | None,
    typer.Option(
        "--weights",
        metavar="COLUMN",
        help="Weigh each row by this column (a weight k counts the row k times; 0 leaves it out).",
        rich_help_panel=DATA,
    ),
]
ClassWeight = Annotated[
    str | None,
    typer.Option(
        "--class-weight",
        metavar="balanced|CLASS=W,...",
        help="Weigh the rows of each class: 'balanced' (every class weighs the same in total) or e.g. 'yes=5,no=1'.",
        rich_help_panel=DATA,
    ),
]
ENGINE = "Engine"
Engine = Annotated[
    str,
    typer.Option(
        "--engine",
        help="Where rows are counted: memory (the table is read in), duckdb (Parquet files, globs or "
        "DuckDB tables, larger than memory) or spark (a Spark cluster).",
        rich_help_panel=ENGINE,
    ),
]
MemoryLimit = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
        metavar="SIZE",
        help="--engine duckdb: memory DuckDB may use before it spills to disk, e.g. 2GB.",
        rich_help_panel=ENGINE,
    ),
]
TempDirectory = Annotated[
    str | None,
    typer.Option(
        "--temp-directory",
        metavar="DIR",
        help="--engine duckdb: where DuckDB spills and keeps its binned copy of the features.",
        rich_help_panel=ENGINE,
    ),
]
SparkMaster = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        metavar="URL",
        help="--engine spark: local[N] (default local[*]), spark://host:7077 or a Spark Connect sc://host:15002.",
        rich_help_panel=ENGINE,
    ),
]
SampleRows = Annotated[
    int | None,
    typer.Option(
        "--sample-rows",
        min=2,
        help="--engine duckdb/spark: learn from a hashed sample of this many rows, then recount the rules' "
        "statistics on every row (default: every row where the learner counts in the engine, else 100,000).",
        rich_help_panel=ENGINE,
    ),
]
EngineTableName = Annotated[
    str | None,
    typer.Option(
        "--db-table",
        metavar="NAME",
        help="Learn from this table: of the DuckDB database DATA (--engine duckdb) or of the catalog "
        "(--engine spark, DATA is ignored).",
        rich_help_panel=ENGINE,
    ),
]
TargetType = Annotated[
    bool | None,
    typer.Option(
        "--regression/--classification",
        help="Predict the target as a number (trees, forests) or as classes; default: floats and integers "
        "with more than 50 values are numbers, anything else holds classes.",
        rich_help_panel=DATA,
        show_default=False,
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Random seed, recorded in the model.", rich_help_panel=OUTPUT)]
OutputPath = Annotated[
    str | None,
    typer.Option("--output", "-o", help="Save the model: .json (full) or .txt (rules).", rich_help_panel=OUTPUT),
]
JsonOut = Annotated[bool, typer.Option("--json", help="Print the model as JSON on stdout.", rich_help_panel=OUTPUT)]
Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print nothing but errors and requested data.", rich_help_panel=OUTPUT)
]


def _seconds(flag: str, help: str) -> Any:
    return Annotated[float | None, typer.Option(flag, min=0, help=help, rich_help_panel=OUTPUT)]


TimeLimit = _seconds(
    "--time-limit", "Stop with an error after this many seconds of reading and learning (nothing is written)."
)
TimeBudget = _seconds("--time-budget", "After about this many seconds, keep the model learned so far (exit 0).")


def cost_table(help: str, panel: str | None = None) -> Any:
    """A ``--costs TABLE`` option: ``evaluate`` measures with it, a learner decides with it."""
    return Annotated[str | None, typer.Option("--costs", metavar="TABLE", help=help, rich_help_panel=panel)]


LearnCosts = cost_table(
    "Each rule predicts its class of least expected cost under this cost table (true class in the first column, "
    "a column per predicted class).",
    "Data",
)
MaxRules = Annotated[int | None, typer.Option("--max-rules", min=0, help="At most this many rules.")]
MaxRuleLength = Annotated[
    int | None, typer.Option("--max-rule-length", min=1, help="At most this many conditions per rule.")
]
TestPath = Annotated[
    str | None, typer.Option("--test", help="Score the model on this table after fitting.", rich_help_panel=EVAL)
]
CvFolds = Annotated[
    int | None,
    typer.Option("--cv", min=2, help="Stratified K-fold cross-validation before the final fit.", rich_help_panel=EVAL),
]
MetricsOut = Annotated[
    str | None,
    typer.Option("--metrics-out", help="Write --test/--cv metrics as JSON to this file.", rich_help_panel=EVAL),
]


def split_list(values: list[str] | None) -> tuple[str, ...]:
    """Flatten repeated and comma-separated option values."""
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(out)


@dataclass(frozen=True)
class DataOptions:
    """The data options every learner takes."""

    target: str | None = None
    features: list[str] | None = None
    exclude: list[str] | None = None
    categorical: list[str] | None = None
    numeric: list[str] | None = None
    target_bins: int | None = None
    regression: bool | None = None
    null_values: list[str] | None = None
    input_format: str | None = None
    delimiter: str | None = None
    encoding: str = "utf-8"
    no_header: bool = False
    skip_lines: int = 0
    weights: str | None = None
    class_weight: str | None = None
    use: list[str] | None = None

    @property
    def layout(self) -> io.CsvOptions:
        return csv_layout(self.delimiter, self.encoding, self.no_header, self.skip_lines)


@dataclass(frozen=True)
class RunOptions:
    """The output and evaluation options every learner takes."""

    seed: int = 0
    output: str | None = None
    json_out: bool = False
    quiet: bool = False
    test: str | None = None
    cv: int | None = None
    metrics_out: str | None = None
    time_limit: float | None = None
    time_budget: float | None = None
    costs: str | None = None


def load_dataset(
    path: str,
    opts: DataOptions,
    *,
    quiet: bool = False,
    numeric_target: bool = False,
    engine: EngineOptions | None = None,
) -> Dataset:
    ds = api.prepare(
        path,
        target=opts.target,
        features=split_list(opts.features),
        exclude=split_list(opts.exclude),
        categorical=split_list(opts.categorical),
        numeric=split_list(opts.numeric),
        target_bins=opts.target_bins,
        target_type=None if opts.regression is None else ("regression" if opts.regression else "classification"),
        weights=opts.weights,
        class_weight=opts.class_weight,
        use=split_list(opts.use),
        input_format=opts.input_format,
        null_values=split_list(opts.null_values),
        layout=opts.layout,
        numeric_target=numeric_target,
        engine=engine,
    )
    if engine is not None and engine.name != "memory" and not quiet and console.stderr_is_tty():
        rows = f"{ds.n_rows:,} rows"
        ds.on_pass = lambda what, seconds: console.info(f"{engine.name}: {what} ({rows}, {seconds:.1f} s)")
    if not quiet:
        for message in ds.warnings:
            console.warn(message)
    return ds


def emit_model(model: Predictor, *, output: str | None, as_json: bool, quiet: bool) -> None:
    """Save the model to -o (atomically) and show it on stdout (JSON, table or text)."""
    if output is not None:
        api.save(model, output)
    if as_json:
        io.write_text(io.STDIO, dumps(model))
    elif quiet:
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
QuietScoring = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print nothing but errors and requested data.", rich_help_panel=OUTPUT)
]


READ_OPTIONS = (
    ("input_format", InputFormat, None),
    ("null_values", NullValues, None),
    ("delimiter", Delimiter, None),
    ("encoding", Encoding, "utf-8"),
    ("no_header", NoHeader, False),
    ("skip_lines", SkipLines, 0),
)


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
# READ_OPTIONS) and receives them as ``read``: the API's read keywords (:func:`read_options`).
reads_a_table = adds_options(READ_OPTIONS, lambda values: {"read": read_options(**values)}, into=("read",))


def read_options(
    input_format: str | None,
    null_values: list[str] | None,
    delimiter: str | None,
    encoding: str,
    no_header: bool,
    skip_lines: int,
) -> dict[str, Any]:
    """How a scoring command reads its table, as the API's read keywords."""
    return {
        "input_format": input_format,
        "null_values": split_list(null_values),
        "layout": csv_layout(delimiter, encoding, no_header, skip_lines),
    }


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
