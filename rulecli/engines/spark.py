"""The Spark engine: learn from Parquet files, globs or catalog tables on a Spark cluster.

``spark_master`` is ``local[N]`` (this machine, the default ``local[*]``), a cluster URL
(``spark://host:7077``) or a Spark Connect URL (``sc://host:15002``). The queries are the
DuckDB engine's, in Spark SQL; the binned copy of the features is cached on the
executors (memory, then disk) instead of written to a file.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import subprocess
import warnings
from pathlib import Path
from typing import Any

import polars as pl

from rulecli import io
from rulecli.engines import EngineOptions
from rulecli.engines.table import SqlTable, open_sql_table
from rulecli.errors import InputError, ParamError
from rulecli.model.languages import sql_text

Q = sql_text("spark")
_views = itertools.count()


class Spark:
    """A Spark session (see :class:`rulecli.engines.table.Backend`)."""

    name = "spark"
    label = "Spark"
    dialect = "spark"

    def __init__(self, options: EngineOptions) -> None:
        if importlib.util.find_spec("pyspark") is None:
            raise ParamError("`engine=spark` needs PySpark, which is not installed: pip install 'rulecli[spark]'")
        master = options.spark_master or "local[*]"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # PySpark warns about the pandas it does not use here
                self.spark = _session(master)
        except Exception as exc:
            raise ParamError(f"`engine=spark`: cannot start Spark at {master}: {io.first_line(exc)}") from None
        # a local session's JVM keeps the directory it started in: a relative path is made
        # this process's own, as a Python caller may have changed directory since (a cluster
        # reads a relative path against its own file system's home, left to it)
        self.local = master.startswith("local")
        self.cached: list[Any] = []

    def frame(self, query: str, failure: str) -> pl.DataFrame:
        try:
            return pl.from_arrow(self.spark.sql(query).toArrow())  # type: ignore[return-value]
        except Exception as exc:  # Spark's own error says what it could not do
            raise InputError(f"{failure}: {io.first_line(exc)}") from None

    def scan(self, source: str, options: EngineOptions, input_format: str | None) -> tuple[str, pl.Schema]:
        try:
            # other formats were refused before the session started (rulecli.engines.open_table)
            where = source
            if self.local and ":" not in source:
                where = str(Path(source).absolute())
                if Path(where).exists():  # read as itself: 'd[1].parquet' is not d1.parquet
                    where = _literal_glob(where)
            df = self.spark.table(options.table) if options.table is not None else self.spark.read.parquet(where)
            columns = df.columns
            numbered = df.select("*", "_metadata.file_path", "_metadata.row_index")
        except InputError:
            raise
        except Exception as exc:
            message = io.first_line(exc)
            if "PATH_NOT_FOUND" in message or "does not exist" in message:
                raise InputError(f"{source}: no such file") from None
            if "TABLE_OR_VIEW_NOT_FOUND" in message:
                raise InputError(f"{source}: no table '{options.table}' in the catalog") from None
            raise InputError(f"{source}: Spark cannot read it: {message}") from None
        view = f"rulecli_raw_{next(_views)}"
        numbered.createOrReplaceTempView(view)
        sizes = self.frame(
            f"SELECT file_path AS f, count(*) AS n FROM {view} GROUP BY file_path ORDER BY file_path",
            f"{source}: Spark cannot count its files",
        )
        offsets, total = [], 0
        for name, n in zip(sizes.get_column("f").to_list(), sizes.get_column("n").to_list(), strict=True):
            offsets.append(f"WHEN {Q.literal(name)} THEN {total}")
            total += int(n)
        listed = ", ".join(Q.ident(c) for c in columns)
        ids = f"(CASE file_path {' '.join(offsets)} END) + row_index" if offsets else "row_index"
        raw = f"(SELECT {listed}, {ids} AS _rulecli_id FROM {view})"
        schema = self.frame(f"SELECT {listed} FROM {view} LIMIT 0", f"{source}: Spark cannot read it").schema
        return raw, schema

    def quantiles(self, x: str, points: str) -> str:
        return f"percentile({x}, array({points}))"

    def code_type(self, n: int) -> str:
        return "TINYINT" if n < 127 else "SMALLINT" if n < 32767 else "INT"

    def scratch(self, root: str | None) -> str:
        return f"rulecli_binned_{next(_views)}"

    def materialise(self, query: str, path: str, failure: str) -> str:
        from pyspark import StorageLevel

        name = path.replace("/", "_")
        try:
            df = self.spark.sql(query).persist(StorageLevel.MEMORY_AND_DISK)
            df.count()  # fill the cache now: the pass is timed as the binning
        except Exception as exc:
            raise InputError(f"{failure}: {io.first_line(exc)}") from None
        df.createOrReplaceTempView(name)
        self.cached.append(df)
        return name

    def upload(self, name: str, frame: pl.DataFrame) -> None:
        self.spark.createDataFrame(frame.to_arrow()).createOrReplaceTempView(name)

    def remove(self, path: str) -> None:
        for df in self.cached:
            df.unpersist()
        self.cached = []

    def close(self) -> None:
        self.remove("")


_sessions: dict[str, Any] = {}  # one session per master for the life of the process (the JVM starts once)


def _session(master: str) -> Any:
    """A Spark session at ``master``; a JVM of our own (local, or a cluster's driver) keeps its
    log lines and progress bars off the user's terminal: a failed query reaches the user as
    one line, from its exception."""
    if master not in _sessions:
        _sessions[master] = _start(master)
    return _sessions[master]


def _start(master: str) -> Any:
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    if master.startswith("sc://"):
        return SparkSession.builder.remote(master).getOrCreate()
    conf = (
        SparkConf()
        .setAppName("rulecli")
        .setMaster(master)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.sql.shuffle.partitions", "8")
    )
    if master.startswith("local"):
        # a local session listens on loopback only
        conf = conf.set("spark.driver.bindAddress", "127.0.0.1").set("spark.driver.host", "127.0.0.1")
    gateway = launch_gateway(conf, popen_kwargs={"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL})
    context = SparkContext(conf=conf, gateway=gateway)
    context.setLogLevel("OFF")
    return SparkSession(context)


def open_table(source: str, spec: object, options: EngineOptions, *, input_format: str | None = None) -> SqlTable:
    return open_sql_table(Spark(options), source, spec, options, input_format)


def _literal_glob(path: str) -> str:
    """``path`` as a Hadoop glob that matches only itself (its glob characters escaped)."""
    return re.sub(r"([\\\[\]*?{}])", r"\\\1", path)
