"""The DuckDB engine: learn from Parquet files (or globs) and DuckDB tables without loading them.

DuckDB runs in-process; with ``memory_limit`` it spills to ``temp_directory``, so tables
larger than memory are counted in passes over the files. The first passes profile the
columns (types, distinct values, class counts), which gives the same schema as reading
the table in memory; tree growth writes a binned copy of the features once (a small
integer per cell, in the temporary directory) and counts each level from it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rulecli import io
from rulecli.dataset import Dataset, DataSpec, dataset_with_schema, prepare_dataset
from rulecli.discretize import cut_between
from rulecli.engines import Bins, EngineOptions, Frontier, sql
from rulecli.errors import InputError, ParamError
from rulecli.model.export import sql_text
from rulecli.schema import Feature, Kind, Schema, is_numeric_dtype
from rulecli.stats import hash_threshold, tallies
from rulecli.words import counted

DIALECT = "duckdb"
EXACT_DISTINCT = 100_000  # columns with at most about this many values are profiled value by value
MAX_LEVELS = 10_000  # levels a categorical feature may have on an engine
Q = sql_text(DIALECT)


def _connect(options: EngineOptions) -> Any:
    try:
        import duckdb
    except ImportError:
        raise ParamError(
            "--engine duckdb needs DuckDB, which is not installed: pip install 'rulecli[duckdb]'"
        ) from None
    config: dict[str, Any] = {"preserve_insertion_order": False}
    if options.memory_limit is not None:
        config["memory_limit"] = options.memory_limit
    if options.temp_directory is not None:
        config["temp_directory"] = options.temp_directory
    if options.threads is not None:
        config["threads"] = options.threads
    try:
        connection = duckdb.connect(":memory:", config=config)
    except duckdb.Error as exc:
        raise ParamError(f"--engine duckdb: {_first_line(exc)}") from None
    # Parquet statistics written without NaN (as Polars writes them) let DuckDB fold
    # isnan(x) and NULLIF(x, NaN) to constants: NaN would not read as missing
    connection.sql("SET disabled_optimizers = 'statistics_propagation'")
    return connection


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _is_parquet(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq", ".parq"))


@dataclass
class DuckDBTable:
    """A training table counted by DuckDB (see :class:`rulecli.engines.EngineTable`)."""

    source: str
    schema: Schema
    n_rows: int
    warnings: tuple[str, ...]
    relation: str  # the FROM clause: rows with a target, each with its number ``_rulecli_id``
    counts: np.ndarray
    connection: Any = field(repr=False)
    temp_root: str | None = field(default=None, repr=False)  # --temp-directory, else the system's
    workdir: str | None = field(default=None, repr=False)
    binned: dict[int, tuple[Bins, str]] = field(default_factory=dict, repr=False)
    on_pass: Callable[[str, float], None] | None = field(default=None, repr=False)
    engine: str = "duckdb"
    weights: None = None
    weighting: None = None
    weight_column: None = None

    # what learners read off a Dataset
    @property
    def classes(self) -> tuple[str, ...]:
        return self.schema.target.classes

    @property
    def target(self) -> str:
        return self.schema.target.name

    @property
    def regression(self) -> bool:
        return self.schema.target.regression

    @property
    def total_weight(self) -> int:
        return self.n_rows

    def class_counts(self) -> np.ndarray:
        return self.counts

    # -- counting

    def _run(self, what: str, query: str, params: list[Any] | None = None) -> Any:
        start = time.perf_counter()
        try:
            result = _frame(self.connection, query, params)
        except Exception as exc:  # a DuckDB error names what the engine could not do
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise InputError(f"{self.source}: DuckDB could not {what}: {_first_line(exc)}") from None
        if self.on_pass is not None:
            self.on_pass(what, time.perf_counter() - start)
        return result

    def grouped(self, names: tuple[str, ...]) -> Dataset:
        """The distinct values of ``names`` with the target, each with its row count as weight."""
        features = [self.schema.feature(n) for n in names]
        select = ", ".join(f"{sql.column(DIALECT, f)} AS {Q.ident(f.name)}" for f in features)
        target = Q.ident(self.target)
        query = (
            f"SELECT {select}, CAST({target} AS VARCHAR) AS {target}, count(*) AS n "
            f"FROM {self.relation} GROUP BY ALL ORDER BY ALL"
        )
        frame = self._run(f"count {', '.join(names)}", query)
        schema = Schema(tuple(features), self.schema.target)
        weights = frame.get_column("n").to_numpy().astype(np.float64)
        return dataset_with_schema(frame.drop("n"), schema, self.source, row_weights=weights)

    def bins(self, max_bins: int) -> Bins:
        """Bins as :class:`~rulecli.search.binned.Binned` makes them in memory: one per value
        up to ``max_bins`` values (so the same cuts), else at approximate quantiles."""
        categorical, levels, n_bins, edges, whole = [], [], [], [], []
        numeric = [f for f in self.schema.features if f.kind == Kind.NUMERIC]
        few = self._few_values(numeric, max_bins)
        for feature in self.schema.features:
            if feature.kind == Kind.CATEGORICAL:
                categorical.append(True)
                levels.append(feature.levels)
                n_bins.append(len(feature.levels))
                edges.append(np.empty(0))
                whole.append(None)
                continue
            values = few.get(feature.name)
            if values is None:
                cuts = self._quantiles(feature, max_bins)
                whole.append(None)
            else:
                cuts = cut_between(values[:-1], values[1:])
                whole.append(_whole_range(values))
            categorical.append(False)
            levels.append(())
            n_bins.append(cuts.size + 1)
            edges.append(cuts)
        return Bins(tuple(categorical), tuple(levels), tuple(n_bins), tuple(edges), tuple(whole))

    def _few_values(self, features: list[Feature], max_bins: int) -> dict[str, np.ndarray]:
        """The sorted distinct values of each feature with at most ``max_bins`` of them."""
        if not features:
            return {}
        counts = ", ".join(f"approx_count_distinct({sql.column(DIALECT, f)})" for f in features)
        approx = self._run("count distinct values", f"SELECT {counts} FROM {self.relation}").row(0)
        out = {}
        for f, n in zip(features, approx, strict=True):
            if n <= 2 * max_bins + 64:  # the estimate errs by a few per cent
                x = sql.column(DIALECT, f)
                values = self._run(
                    f"list the values of {f.name}",
                    f"SELECT DISTINCT {x} AS v FROM {self.relation} WHERE {x} IS NOT NULL ORDER BY v",
                )
                array = values.get_column("v").to_numpy().astype(np.float64)
                if array.size <= max_bins:
                    out[f.name] = array
        return out

    def _quantiles(self, feature: Feature, max_bins: int) -> np.ndarray:
        x = sql.column(DIALECT, feature)
        points = sql.float_list(np.arange(1, max_bins) / max_bins)
        frame = self._run(
            f"find the quantiles of {feature.name}",
            f"SELECT approx_quantile({x}, [{points}]) AS q FROM {self.relation}",
        )
        return np.unique(np.asarray(frame.get_column("q")[0].to_list(), dtype=np.float64))

    def _binned_table(self, bins: Bins) -> str:
        """The features' bin codes and the class code, written once to a Parquet file."""
        key = id(bins)
        if key in self.binned and self.binned[key][0] is bins:
            return self.binned[key][1]
        if self.workdir is None:
            self.workdir = io.scratch_directory(self.temp_root, "rulecli-duckdb-")
        path = str(Path(self.workdir) / f"binned{len(self.binned)}.parquet")
        codes = [
            f"CAST({sql.bin_code(DIALECT, f, j, bins)} AS {_code_type(bins.n_bins[j])}) AS b{j}"
            for j, f in enumerate(self.schema.features)
        ]
        y = f"CAST({sql.class_code(DIALECT, self.target, self.classes)} AS {_code_type(len(self.classes))}) AS y"
        query = f"COPY (SELECT {', '.join(codes)}, {y} FROM {self.relation}) TO {Q.literal(path)} (FORMAT parquet)"
        self._run("write the binned table", query)
        relation = f"read_parquet({Q.literal(path)})"
        self.binned[key] = (bins, relation)
        return relation

    def histograms(self, bins: Bins, frontier: Frontier) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        relation = self._binned_table(bins)
        d = len(self.schema.features)
        codes = [f"b{j}" for j in range(d)]
        slot = sql.frontier_slot(frontier, codes, bins.n_bins)
        sets = ", ".join(f"(s, y, b{j})" for j in range(d))
        query = (
            f"SELECT s, y, {', '.join(codes)}, count(*) AS n FROM "
            f"(SELECT {slot} AS s, * FROM {relation}) WHERE s >= 0 GROUP BY GROUPING SETS ({sets})"
        )
        frame = self._run(f"count {counted(frontier.n_slots, 'node')}", query)
        k = len(self.classes)
        out = []
        for j in range(d):
            part = frame.filter(pl.col(f"b{j}").is_not_null())
            slots = part.get_column("s").to_numpy().astype(np.int64)
            code = part.get_column(f"b{j}").to_numpy().astype(np.int64)
            counts = np.zeros((slots.size, k))
            counts[np.arange(slots.size), part.get_column("y").to_numpy().astype(np.int64)] = part.get_column(
                "n"
            ).to_numpy()
            out.append((slots, code, counts))
        return out

    def sample(self, seed: int, rate: float) -> Dataset:
        """The rows whose hashed number falls below ``rate``, in the table's order."""
        names = [*self.schema.feature_names, self.target]
        select = ", ".join(Q.ident(n) for n in names)
        query = (
            f"SELECT _rulecli_id, {select} FROM {self.relation} "
            f"WHERE {sql.row_hash('_rulecli_id', seed)} < {hash_threshold(rate)} ORDER BY _rulecli_id"
        )
        frame = self._run("draw a sample", query)
        ids = frame.get_column("_rulecli_id").to_numpy().astype(np.int64)
        return dataset_with_schema(frame.drop("_rulecli_id"), self.schema, self.source, row_ids=ids)

    def close(self) -> None:
        if self.workdir is not None:
            io.remove_scratch(self.workdir)
            self.workdir = None
        self.connection.close()


WHOLE_RANGE = 4096  # values a bin lookup table may list


def _whole_range(values: np.ndarray) -> tuple[int, int] | None:
    if values.size == 0 or not np.all(values == np.round(values)):
        return None
    low, high = int(values[0]), int(values[-1])
    return (low, high) if high - low < WHOLE_RANGE else None


def _frame(connection: Any, query: str, params: list[Any] | None = None) -> pl.DataFrame:
    relation = connection.sql(query, params=params or None)
    return pl.DataFrame() if relation is None else relation.pl()


def _rows(connection: Any, query: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    relation = connection.sql(query, params=params or None)
    return [] if relation is None else relation.fetchall()


def _code_type(n: int) -> str:
    return "UTINYINT" if n < 255 else "USMALLINT" if n < 65535 else "UINTEGER"


# --------------------------------------------------------------------------- opening


def open_table(source: str, spec: object, options: EngineOptions, *, input_format: str | None = None) -> DuckDBTable:
    assert isinstance(spec, DataSpec)
    if spec.weights is not None or spec.class_weight is not None:
        raise ParamError("--weights and --class-weight do not work with --engine duckdb yet; use --engine memory")
    if spec.target_bins is not None:
        raise ParamError("--target-bins does not work with --engine duckdb yet; use --engine memory")
    connection = _connect(options)
    try:
        raw = _raw_relation(connection, source, options, input_format)
        table = _profile(connection, source, raw, spec)
    except BaseException:
        connection.close()
        raise
    table.temp_root = options.temp_directory
    return table


def _raw_relation(connection: Any, source: str, options: EngineOptions, input_format: str | None) -> str:
    """The FROM clause of the whole table as read, each row with its number ``_rulecli_id``
    (its place in the table: files of a glob in name order, as Polars reads them)."""
    if options.table is not None:
        if not Path(source).exists():
            raise InputError(f"{source}: no such DuckDB database")
        try:
            _rows(connection, f"ATTACH {Q.literal(source)} AS rulecli_source (READ_ONLY)")
        except Exception as exc:
            raise InputError(f"{source}: DuckDB cannot open it as a database: {_first_line(exc)}") from None
        table = f"rulecli_source.{Q.ident(options.table)}"
        try:
            _rows(connection, f"SELECT * FROM {table} LIMIT 0")
        except Exception:
            raise InputError(f"{source}: no table '{options.table}' in the database") from None
        return f"(SELECT *, rowid AS _rulecli_id FROM {table})"
    if input_format not in (None, "parquet") or not _is_parquet(source):
        raise InputError(
            f"{source}: --engine duckdb reads Parquet files (or a glob such as 'data/*.parquet') and DuckDB "
            "tables (--db-table NAME); other formats: --engine memory, or convert them to Parquet first"
        )
    try:
        files = _rows(connection, "SELECT file FROM glob(?) ORDER BY file", [source])
    except Exception as exc:
        raise InputError(f"{source}: {_first_line(exc)}") from None
    if not files:
        raise InputError(f"{source}: no such file")
    names = [f for (f,) in files]
    scan = f"read_parquet([{', '.join(Q.literal(n) for n in names)}], filename = true, file_row_number = true)"
    if len(names) == 1:
        return f"(SELECT * EXCLUDE (filename, file_row_number), file_row_number AS _rulecli_id FROM {scan})"
    try:
        listed = ", ".join(Q.literal(n) for n in names)
        sizes = _rows(connection, f"SELECT file_name, num_rows FROM parquet_file_metadata([{listed}])")
    except Exception as exc:
        raise InputError(f"{source}: DuckDB cannot read it as Parquet: {_first_line(exc)}") from None
    rows = dict(sizes)
    offsets, total = [], 0
    for name in names:
        offsets.append((name, total))
        total += int(rows[name])
    case = " ".join(f"WHEN {Q.literal(n)} THEN {o}" for n, o in offsets)
    return (
        f"(SELECT * EXCLUDE (filename, file_row_number), "
        f"(CASE filename {case} END) + file_row_number AS _rulecli_id FROM {scan})"
    )


def _profile(connection: Any, source: str, raw: str, spec: DataSpec) -> DuckDBTable:
    """The table's schema from its columns' distinct values (what typing and the levels
    depend on), so the schema is the one reading the table in memory gives."""
    try:
        columns = _frame(connection, f"SELECT * EXCLUDE (_rulecli_id) FROM {raw} LIMIT 0")
    except Exception as exc:
        raise InputError(f"{source}: DuckDB cannot read it: {_first_line(exc)}") from None
    if columns.width == 0:
        raise InputError(f"{source}: no data rows")
    names = columns.columns
    target = spec.target if spec.target is not None else names[-1]
    if target not in names:
        raise InputError(f"{source}: no column '{target}' (columns: {', '.join(names)})")

    def view(name: str) -> str:
        # numbers with NaN read as missing, as rulecli reads them
        if is_numeric_dtype(columns.schema[name]):
            return (
                f"NULLIF({Q.ident(name)}, CAST('NaN' AS DOUBLE))" if columns.schema[name].is_float() else Q.ident(name)
            )
        return Q.ident(name)

    stats = ", ".join(f"approx_count_distinct({view(n)}), count({view(n)})" for n in names)
    first = _rows(connection, f"SELECT count(*), {stats} FROM {raw}")[0]
    n_all = int(first[0])
    if n_all == 0:
        raise InputError(f"{source}: no data rows")
    distinct = {n: int(first[1 + 2 * i]) for i, n in enumerate(names)}
    present = {n: int(first[2 + 2 * i]) for i, n in enumerate(names)}
    used = {target, *(spec.features or names)} - set(spec.exclude)
    values: dict[str, pl.Series] = {}
    for n in names:
        dtype = columns.schema[n]
        x = view(n)
        if n not in used:  # a column left out needs only its name and type
            series = _frame(connection, f"SELECT {Q.ident(n)} AS v FROM {raw} LIMIT 1").get_column("v")
        elif distinct[n] <= EXACT_DISTINCT or not is_numeric_dtype(dtype):
            if distinct[n] > MAX_LEVELS and n != target and n not in spec.numeric:
                raise InputError(
                    f"{source}: column '{n}' has about {distinct[n]:,} distinct values; with --engine duckdb a "
                    f"categorical feature may have at most {MAX_LEVELS:,} (--exclude {n}, or --numeric {n})"
                )
            series = _frame(connection, f"SELECT DISTINCT {x} AS v FROM {raw}").get_column("v")
        else:
            frame = _frame(connection, f"SELECT min({x}) AS v FROM {raw} UNION ALL SELECT max({x}) FROM {raw}")
            series = frame.get_column("v")
            if present[n] < n_all:
                series = pl.concat([series, pl.Series("v", [None], dtype=series.dtype)])
        values[n] = series.cast(dtype).alias(n)
    length = max(s.len() for s in values.values()) + 1  # every column repeats a value: none looks like an ID
    representative = pl.DataFrame(
        [_padded(values[n].filter(values[n].is_not_null()) if n == target else values[n], length) for n in names]
    )
    prepared = prepare_dataset(representative, spec, source=source)
    view_target = view(target)
    counts_frame = _frame(
        connection,
        f"SELECT CAST({Q.ident(target)} AS VARCHAR) AS c, count(*) AS n FROM {raw} "
        f"WHERE {view_target} IS NOT NULL GROUP BY ALL",
    )
    by_class = dict(zip(counts_frame.get_column("c").to_list(), counts_frame.get_column("n").to_list(), strict=True))
    schema = prepared.schema
    counts = tallies(np.array([float(by_class.get(c, 0)) for c in schema.target.classes]))
    n_rows = int(sum(by_class.values()))
    warnings = list(prepared.warnings)
    if n_rows < n_all:
        missing = n_all - n_rows
        verb = "is" if missing == 1 else "are"
        warnings.insert(0, f"{source}: {counted(missing, 'row')} with a missing '{target}' {verb} left out")
    relation = f"(SELECT * FROM {raw} WHERE {view_target} IS NOT NULL)"
    if schema.target.regression:
        raise ParamError(
            f"--engine duckdb learns classes; '{target}' is a number (pass --classification, or use --engine memory)"
        )
    return DuckDBTable(source, schema, n_rows, tuple(warnings), relation, counts, connection)


def _padded(series: pl.Series, length: int) -> pl.Series:
    """The column's values, the last repeated up to ``length`` rows."""
    if series.len() == 0:
        return pl.Series(series.name, [None] * length, dtype=series.dtype)
    return series.extend_constant(series[-1], length - series.len())


@contextlib.contextmanager
def opened(table: DuckDBTable) -> Iterator[DuckDBTable]:
    try:
        yield table
    finally:
        table.close()
