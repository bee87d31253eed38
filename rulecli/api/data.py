"""The API's data: tables read, typed and labelled as every command reads them; cut points."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rulecli import io
from rulecli.dataset import Dataset, DataSpec, prepare_dataset
from rulecli.discretize import METHODS, SUPERVISED, label_expr, learn_cuts, min_bucket_for
from rulecli.engines import EngineOptions, EngineTable, is_engine_table, open_table
from rulecli.errors import InputError, ParamError
from rulecli.params import fields_of
from rulecli.schema import Cuts, is_numeric_dtype

Data = str | Path | pl.DataFrame | Dataset
# the keywords of prepare and fit beyond a learner's parameters, each declared once: which
# columns and how typed (DataSpec), how the file is read (ReadOptions), where rows are
# counted (EngineOptions)
DATA_KEYS = frozenset(f.name for f in fields_of(DataSpec))
READ_KEYS = frozenset(f.name for f in fields_of(io.ReadOptions))
ENGINE_KEYS = frozenset(f.name for f in fields_of(EngineOptions))


def source_label(path: str | Path) -> str:
    return "<stdin>" if str(path) == io.STDIO else str(path)


def _as_text(columns: Sequence[str]) -> dict[str, pl.DataType]:
    """Columns read as the text the file holds (a categorical feature written as digits)."""
    return {c: pl.String() for c in columns}


def read_table(path: str | Path, *, text_columns: Sequence[str] = (), **read: Any) -> pl.DataFrame:
    """A whole table, read as ``rulecli`` reads training data: ``text_columns`` kept as text,
    ``read`` the keywords of :class:`~rulecli.io.ReadOptions` (format, missing values, a CSV
    file's delimiter, encoding, header and leading lines)."""
    options = io.ReadOptions(**read)
    io.check_room(str(path), options)
    lf = io.scan_table(str(path), options, schema_overrides=_as_text(text_columns))
    return io.collect(lf, source_label(path))


def prepare(
    data: Data, *, numeric_target: bool = False, engine: str | EngineOptions | None = None, **options: Any
) -> Dataset | EngineTable:
    """A training table typed and labelled; its ``warnings`` say what was skipped and why.

    ``options`` are the keywords of :class:`~rulecli.dataset.DataSpec` (which columns and
    how typed: ``target``, ``features``, ``exclude``, ``use``, ``categorical``, ``numeric``,
    ``target_bins``, ``target_type``, ``weights``, ``class_weight``), of
    :class:`~rulecli.io.ReadOptions` (how a file is read: ``input_format``,
    ``null_values``, ``delimiter``, ``encoding``, ``no_header``, ``skip_lines``) and of
    :class:`~rulecli.engines.EngineOptions` beside ``engine`` (``memory_limit`` …).

    ``target_type`` forces ``"classification"`` or ``"regression"``; by default a float
    target, or integers read as a number (many values, spread wide, or counts; see
    :func:`rulecli.dataset.target_reading`), is a number (for the learners that predict
    numbers: ripper, cn2, tree, forest, m5rules) and any other target holds classes. ``weights``
    names a column of row weights (a weight k counts the row k times, 0 leaves it out);
    ``class_weight`` multiplies them per class: ``"balanced"`` or ``"a=2,b=1"``. Columns
    that identify rows (text differing on nearly every row, whole numbers counting the rows)
    and text of more than 50 values are left out (``schema.left_out`` says which), unless
    named in ``use`` or ``features``. Date and date-and-time columns (ISO text, or Date
    and Datetime columns) are ordered features: rules compare them as dates.

    ``engine="duckdb"`` (or :class:`~rulecli.engines.EngineOptions`) leaves the rows of a
    Parquet file, glob or DuckDB table in DuckDB: the result holds the schema and counts
    what the learners ask (close it with :func:`release`)."""
    spec_keys, read_keys, engine_keys, unknown = sorted_options(options)
    if unknown:
        known = sorted(DATA_KEYS | READ_KEYS | ENGINE_KEYS)
        raise ParamError(f"no data option '{next(iter(unknown))}' (there are: {', '.join(known)})")
    if isinstance(data, Dataset) or is_engine_table(data):
        return data
    data = as_data(data)
    spec = DataSpec(numeric_target=numeric_target, **spec_keys)
    read = io.ReadOptions(**read_keys)
    where = engine_options(engine, engine_keys)
    if where is not None and where.engine != "memory":
        return _engine_table(data, spec, where, read)
    if isinstance(data, pl.DataFrame):
        return prepare_dataset(data, spec)
    df = read_table(data, text_columns=spec.categorical, **read_keys)
    return prepare_dataset(df, spec, source=source_label(data))


def sorted_options(options: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Keywords sorted by their declaration: data, read, engine, and any other."""
    groups = (DATA_KEYS, READ_KEYS, ENGINE_KEYS)
    return (
        *({k: v for k, v in options.items() if k in keys} for keys in groups),
        {k: v for k, v in options.items() if not any(k in keys for keys in groups)},
    )


def engine_options(engine: str | EngineOptions | None, given: dict[str, Any]) -> EngineOptions | None:
    """Where rows are counted: ``engine`` by name or as options, with the other engine
    keywords ``given`` (None: nothing was said, in memory)."""
    if isinstance(engine, EngineOptions):
        return dataclasses.replace(engine, **given) if given else engine
    if engine is None and not given:
        return None
    return EngineOptions(**({} if engine is None else {"engine": engine}), **given)


def _engine_table(data: Any, spec: DataSpec, options: EngineOptions, read: io.ReadOptions) -> EngineTable:
    """``data`` left where it is, in the engine ``options`` name (a file the engine cannot
    read is copied to Parquet first)."""
    if isinstance(data, pl.DataFrame):
        raise ParamError(f"`engine={options.engine}` reads files and tables; a DataFrame is in memory already")

    def reader(out: str) -> None:
        io.parquet_copy(str(data), out, read, schema_overrides=_as_text(spec.categorical))

    return open_table(str(data), spec, options, input_format=read.input_format, reader=reader)


def as_data(data: Any) -> Any:
    """A pandas DataFrame or a PyArrow Table as a Polars frame; a path, a Polars frame or a
    prepared table as it is; anything else refused in one line (a pandas frame was taken for
    a file name). Known by module and name: neither library is imported for it."""
    if isinstance(data, str | Path | pl.DataFrame | pl.LazyFrame | Dataset) or is_engine_table(data):
        return data
    library, kind = type(data).__module__.split(".")[0], type(data).__name__
    if library == "pandas" and kind == "DataFrame":
        return pl.from_pandas(data)
    if library == "pyarrow" and kind in ("Table", "RecordBatch"):
        return pl.from_arrow(data)
    raise ParamError(
        f"data must be a file path, a Polars or pandas DataFrame, a PyArrow Table or a prepared table, not {kind}"
    )


@dataclass(frozen=True)
class Discretized:
    frame: pl.LazyFrame
    cuts: list[Cuts]
    target: str | None  # the class column the cuts were learned with
    bins: int  # the intervals asked for, or min-bucket's minimum bucket


def discretize(
    df: pl.DataFrame,
    *,
    method: str = "equal-frequency",
    bins: int = 5,
    min_bucket: int | None = None,
    target: str | None = None,
    columns: Sequence[str] = (),
    cuts: list[Cuts] | None = None,
    source: str = "<data>",
    cuts_source: str = "the cuts",
) -> Discretized:
    """``df`` with numeric columns replaced by interval labels, the cuts used and the target.

    Given ``cuts`` (saved earlier), they are applied; otherwise they are learned on
    ``columns`` (default: every numeric column but the target). ``mdlp`` and
    ``min-bucket`` use the target (default: the last column); ``min-bucket`` with at least
    ``min_bucket`` rows of an interval's class (default: as OneR chooses it for the rows).
    """
    if method == "min-bucket":
        bins = min_bucket if min_bucket is not None else min_bucket_for(df.height)
    if method not in METHODS:
        raise ParamError(f"must be one of {', '.join(METHODS)}, got '{method}'", param="method")
    if cuts is not None:
        for c in cuts:
            if c.column not in df.columns:
                raise InputError(f"{source}: column '{c.column}' named in {cuts_source} is not in the data")
    else:
        if target is None and method in SUPERVISED:
            target = df.columns[-1]
        if target is not None and target not in df.columns:
            raise InputError(f"{source}: target column '{target}' is not in the data")
        chosen = list(columns) or [c for c in df.columns if c != target and is_numeric_dtype(df.schema[c])]
        for name in chosen:
            if name not in df.columns:
                raise InputError(f"{source}: column '{name}' is not in the data")
            if not is_numeric_dtype(df.schema[name]):
                raise InputError(f"{source}: column '{name}' is not numeric ({df.schema[name]})")
        cuts = learn_cuts(df, chosen, method, bins=bins, target=target)
    return Discretized(df.lazy().with_columns([label_expr(c) for c in cuts]), cuts, target, bins)
