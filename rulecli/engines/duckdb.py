"""The DuckDB engine: learn from Parquet files (or globs) and DuckDB tables without loading them,
and from any other file rulecli reads through a Parquet copy of it.

DuckDB runs in-process; with ``memory_limit`` it spills to ``temp_directory``, so tables
larger than memory are counted in passes over the files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from rulecli import io
from rulecli.engines import EngineOptions, is_parquet, not_parquet
from rulecli.errors import InputError, ParamError
from rulecli.model.languages import sql_text

Q = sql_text("duckdb")


class DuckDB:
    """DuckDB in this process (see :class:`rulecli.engines.table.Backend`)."""

    name = "duckdb"
    label = "DuckDB"
    dialect = "duckdb"

    def __init__(self, options: EngineOptions, reader: Callable[[str], None] | None = None) -> None:
        self.reader = reader
        self.copies: list[str] = []  # scratch directories of Parquet copies, removed on close
        try:
            import duckdb
        except ImportError:
            raise ParamError(
                "`engine=duckdb` needs DuckDB, which is not installed: pip install 'rulecli[duckdb]'"
            ) from None
        config: dict[str, Any] = {"preserve_insertion_order": False}
        if options.memory_limit is not None:
            config["memory_limit"] = options.memory_limit
        if options.temp_directory is not None:
            config["temp_directory"] = options.temp_directory
        if options.threads is not None:
            config["threads"] = options.threads
        try:
            self.connection = duckdb.connect(":memory:", config=config)
        except duckdb.Error as exc:
            raise ParamError(f"`engine=duckdb`: {io.first_line(exc)}") from None
        # Parquet statistics written without NaN (as Polars writes them) let DuckDB fold
        # isnan(x) and NULLIF(x, NaN) to constants: NaN would not read as missing
        self.connection.sql("SET disabled_optimizers = 'statistics_propagation'")
        # DuckDB draws a progress bar on stdout for long queries: stdout is for data only
        self.connection.sql("SET enable_progress_bar = false")

    def _sql(self, query: str, params: list[Any] | None = None) -> Any:
        return self.connection.sql(query, params=params or None)

    def frame(self, query: str, failure: str) -> pl.DataFrame:
        try:
            relation = self._sql(query)
            return pl.DataFrame() if relation is None else relation.pl()
        except Exception as exc:  # DuckDB's own error says what it could not do
            raise InputError(f"{failure}: {io.first_line(exc)}") from None

    def _rows(self, query: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        relation = self._sql(query, params)
        return [] if relation is None else relation.fetchall()

    def scan(self, source: str, options: EngineOptions, input_format: str | None) -> tuple[str, pl.Schema]:
        raw = self._raw(source, options, input_format)
        columns = self.frame(f"SELECT * FROM {raw} LIMIT 0", f"{source}: DuckDB cannot read it").schema
        return raw, pl.Schema({n: t for n, t in columns.items() if n != "_rulecli_id"})

    def _raw(self, source: str, options: EngineOptions, input_format: str | None) -> str:
        if options.table is not None:
            if not Path(source).exists():
                raise InputError(f"{source}: no such DuckDB database")
            try:
                self._rows(f"ATTACH {Q.literal(source)} AS rulecli_source (READ_ONLY)")
            except Exception as exc:
                raise InputError(f"{source}: DuckDB cannot open it as a database: {io.first_line(exc)}") from None
            table = f"rulecli_source.{Q.ident(options.table)}"
            try:
                self._rows(f"SELECT * FROM {table} LIMIT 0")
            except Exception:
                raise InputError(f"{source}: no table '{options.table}' in the database") from None
            return f"(SELECT *, rowid AS _rulecli_id FROM {table})"
        path = source
        if not is_parquet(source, input_format):
            if self.reader is None:
                raise not_parquet(source, "duckdb", "DuckDB tables (`table` NAME)")
            path = self._parquet_copy(source, options.temp_directory)
        # a file that exists is read as itself ('d[1].parquet' is not d1.parquet); a path
        # naming no file is a glob
        pattern = _literal_glob(path) if Path(path).is_file() else path
        try:
            files = [f for (f,) in self._rows("SELECT file FROM glob(?) ORDER BY file", [pattern])]
        except Exception as exc:
            raise InputError(f"{source}: {io.first_line(exc)}") from None
        if not files:
            raise InputError(f"{source}: no such file")
        listed = ", ".join(Q.literal(_literal_glob(n)) for n in files)
        scan = f"read_parquet([{listed}], filename = true, file_row_number = true)"
        if len(files) == 1:
            return f"(SELECT * EXCLUDE (filename, file_row_number), file_row_number AS _rulecli_id FROM {scan})"
        try:
            sizes = dict(self._rows(f"SELECT file_name, num_rows FROM parquet_file_metadata([{listed}])"))
        except Exception as exc:
            raise InputError(f"{source}: DuckDB cannot read it as Parquet: {io.first_line(exc)}") from None
        offsets, total = [], 0
        for name in files:
            offsets.append(f"WHEN {Q.literal(name)} THEN {total}")
            total += int(sizes[name])
        return (
            f"(SELECT * EXCLUDE (filename, file_row_number), "
            f"(CASE filename {' '.join(offsets)} END) + file_row_number AS _rulecli_id FROM {scan})"
        )

    def _parquet_copy(self, source: str, root: str | None) -> str:
        """What the in-memory engine reads from ``source`` (CSV, TSV, ARFF, NDJSON, IPC,
        standard input), as a Parquet file in a scratch directory (``rulecli.io.parquet_copy``)."""
        assert self.reader is not None
        folder = io.scratch_directory(root, "rulecli-copy-")
        self.copies.append(folder)
        path = str(Path(folder) / "table.parquet")
        try:
            self.reader(path)
        except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
            raise InputError(f"{'<stdin>' if source == io.STDIO else source}: {io.first_line(exc)}") from None
        return path

    def quantiles(self, x: str, points: str) -> str:
        return f"quantile_disc({x}, [{points}])"

    def code_type(self, n: int) -> str:
        return "UTINYINT" if n < 255 else "USMALLINT" if n < 65535 else "UINTEGER"

    def scratch(self, root: str | None) -> str:
        return io.scratch_directory(root, "rulecli-duckdb-")

    def materialise(self, query: str, path: str, failure: str) -> str:
        file = f"{path}.parquet"
        self.frame(f"COPY ({query}) TO {Q.literal(file)} (FORMAT parquet)", failure)
        return f"read_parquet({Q.literal(file)})"

    def upload(self, name: str, frame: pl.DataFrame) -> None:
        self.connection.register(name, frame.to_arrow())

    def remove(self, path: str) -> None:
        io.remove_scratch(path)

    def close(self) -> None:
        self.connection.close()
        for folder in self.copies:
            io.remove_scratch(folder)


def _literal_glob(name: str) -> str:
    """A glob matching exactly the file ``name``: DuckDB reads every path it is given as a
    glob, and a character in brackets stands for itself (``d[[]1].parquet`` is d[1].parquet)."""
    return "".join(f"[{c}]" if c in "[*?" else c for c in name)
