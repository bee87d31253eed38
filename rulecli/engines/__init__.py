"""Where the rows are counted: in memory (the default) or by a SQL engine where the data lives.

Every learner that runs on an engine asks it the same few questions, all counts of rows
by class, so the learners' logic (split choice, discretisation, errors) is one code path
whichever engine answers (:mod:`rulecli.counting` asks them, or the in-memory
equivalents). The questions come in families, each a small protocol a consumer names:

- :class:`GroupedCounts`: ``grouped``, the distinct values of a few columns with their
  class counts as a small weighted :class:`~rulecli.dataset.Dataset` (OneR's cross tables,
  the discretisers' class counts per value); ``cell_table``, the distinct rows of
  discretised features with their counts (reduct's decision table);
- :class:`TreeHistograms`: ``histograms``, per node of a partial tree, the (bin, class)
  counts of every feature, or for a numeric target each (bin)'s rows, sum and sum of
  squares (tree growth, one pass per level), or a bootstrap's draws of them (a forest's
  trees, ``root_sums`` at the root and ``out_of_bag`` for the forest's OOB error);
- :class:`CoveringCounts`: for the covering learners, which keep their row sets in memory
  as bits, ``code_counts`` (the (bin, label) counts of every feature over such row sets),
  ``row_bits`` (the rows a test of bin codes keeps), ``row_classes`` and ``value_summary``;
- :class:`TableBase`, what all of them share: the schema and class counts, ``bins``,
  ``rule_counts`` (each rule's rows by class: a model's statistics; ``number_rule_stats``
  for rules that predict a number) and ``sample`` (the
  rows of a hashed sample, in memory: settings chosen by cross-validation, learners
  without an engine form).

:class:`EngineTable` is all four, as DuckDB and Spark implement them. The in-memory engine
is the prepared :class:`~rulecli.dataset.Dataset` itself; an engine table keeps its rows
in the engine and holds only the schema and the class counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from rulecli.errors import ParamError
from rulecli.params import ENGINE_PANEL, Params, param

if TYPE_CHECKING:
    from collections.abc import Callable

    from rulecli.dataset import Dataset
    from rulecli.errors import InputError
    from rulecli.schema import Feature, Schema

ENGINES = ("memory", "duckdb", "spark")
SAMPLE_ROWS = 100_000  # what a learner without an engine form learns from, unless told


@dataclass(frozen=True, kw_only=True)
class EngineOptions(Params):
    """Where rows are counted and how the engine runs (declared once: the API's engine
    keywords and every learner command's engine options)."""

    engine: str = param(
        "memory",
        "Where rows are counted: memory (the table is read in), duckdb (Parquet files, globs or "
        "DuckDB tables, larger than memory) or spark (a Spark cluster).",
        choices=ENGINES,
        panel=ENGINE_PANEL,
    )
    memory_limit: str | None = param(
        None,
        "DuckDB only: the memory DuckDB may use before it spills to disk, e.g. 2GB.",
        metavar="SIZE",
        panel=ENGINE_PANEL,
    )
    temp_directory: str | None = param(
        None,
        "DuckDB only: where DuckDB spills and keeps its binned copy of the features.",
        metavar="DIR",
        panel=ENGINE_PANEL,
    )
    table: str | None = param(
        None,
        "Learn from this table: a table of the DuckDB database DATA, or of the Spark catalog (DATA is then ignored).",
        flag="db-table",
        metavar="NAME",
        panel=ENGINE_PANEL,
    )
    spark_master: str | None = param(
        None,
        "Spark only: local[N] (default local[*]), spark://host:7077 or a Spark Connect sc://host:15002.",
        metavar="URL",
        panel=ENGINE_PANEL,
    )
    sample_rows: int | None = param(
        None,
        "DuckDB or Spark: learn from a hashed sample of this many rows, then recount the rules' "
        "statistics on every row (default: every row where the learner counts in the engine, else "
        f"{SAMPLE_ROWS:,}).",
        ge=2,
        panel=ENGINE_PANEL,
    )
    # not an option: DuckDB's threads (default: every core)
    threads: int | None = None

    def check(self) -> None:
        """Refuse options that do not go together, before any pass over the data."""
        if self.engine != "duckdb" and (self.memory_limit or self.temp_directory):
            raise ParamError("`memory_limit` and `temp_directory` go with `engine=duckdb`")
        if self.engine != "spark" and self.spark_master:
            raise ParamError("`spark_master` goes with `engine=spark`")
        if self.engine == "memory" and self.table:
            raise ParamError("`table` goes with `engine=duckdb` or spark")
        if self.engine == "memory" and self.sample_rows is not None:
            raise ParamError("`sample_rows` goes with `engine=duckdb` or spark")


@dataclass(frozen=True)
class Split:
    """An inner node of a partial tree over bin codes: numeric codes up to ``last_left`` go
    left; a categorical node sends ``left_codes`` left and ``right_codes`` right; missing
    values and codes the node did not see go to the ``missing_left`` side."""

    feature: int
    last_left: int
    left_codes: tuple[int, ...]
    right_codes: tuple[int, ...]
    missing_left: bool
    left: int
    right: int


@dataclass(frozen=True)
class Frontier:
    """A partial tree: node ``i`` is a :class:`Split` or a leaf, given as the slot its rows
    are counted in (``>= 0``) or -1 for a leaf no longer grown."""

    nodes: tuple[Split | int, ...]
    n_slots: int


@dataclass(frozen=True)
class Bins:
    """How features are binned for tree growth (numeric: ``x < edges[b]`` ends bin b; the
    last code of each feature, ``n_bins[j]``, is missing)."""

    categorical: tuple[bool, ...]
    levels: tuple[tuple[str, ...], ...]
    n_bins: tuple[int, ...]
    edges: tuple[np.ndarray, ...]
    # per feature, (lowest, highest) when every value is a whole number in a short range:
    # its bin is then looked up by value instead of searched among the cuts
    whole_range: tuple[tuple[int, int] | None, ...] = ()


class TableBase(Protocol):
    """What every family of counts asks of a table that stays in its engine: its schema,
    its class counts, how its features are binned, its rules' counts and a sample."""

    source: str
    schema: Schema
    n_rows: int
    warnings: tuple[str, ...]
    sample_rows: int | None  # see EngineOptions

    @property
    def engine(self) -> str: ...

    @property
    def dialect(self) -> str: ...

    @property
    def classes(self) -> tuple[str, ...]: ...

    @property
    def target(self) -> str: ...

    def class_counts(self) -> np.ndarray: ...

    def bins(self, max_bins: int) -> Bins: ...

    def rule_counts(self, tests: list[str], ordered: bool) -> np.ndarray: ...

    def number_rule_stats(self, tests: list[str], formulas: list[str], default: str, ordered: bool) -> np.ndarray: ...

    def sample(self, seed: int, rate: float) -> Dataset: ...

    def close(self) -> None: ...


class GroupedCounts(TableBase, Protocol):
    """Grouped rows (OneR's cross tables, the discretisers' counts) and decision tables (reduct)."""

    def grouped(self, names: tuple[str, ...]) -> Dataset: ...

    def cell_table(self, features: tuple[Feature, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


class TreeHistograms(TableBase, Protocol):
    """A tree's (bin, class) counts per node, level by level, and a forest's bootstrap."""

    def histograms(self, bins: Bins, frontier: Frontier, bag: tuple[int, int] | None = None) -> list[Histogram]:
        """Per feature, the non-empty (slot, bin, class) cells of the frontier's slots (rows,
        or their draws in the bootstrap ``bag``)."""
        ...

    centre: float  # a numeric target's mean, which the cells' sums are taken about

    def root_sums(self, bins: Bins, bag: tuple[int, int] | None = None) -> np.ndarray: ...

    def out_of_bag(
        self, bins: Bins, trees: list[tuple[tuple[int, int], Frontier, np.ndarray]]
    ) -> tuple[int, int | float]: ...


class CoveringCounts(TableBase, Protocol):
    """The covering learners' counts: every feature's (bin, label) counts over row sets
    kept in memory as bits, and the rows a test keeps."""

    def row_classes(self, bins: Bins) -> np.ndarray: ...

    def row_bits(self, bins: Bins, test: str) -> np.ndarray: ...

    def code_counts(self, bins: Bins, row_sets: list[np.ndarray], labels: np.ndarray | None) -> list[Histogram]: ...

    def value_summary(
        self, bins: Bins, max_bins: int
    ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]: ...


class EngineTable(GroupedCounts, TreeHistograms, CoveringCounts, Protocol):
    """A training table that stays in its engine: every family of counts (an engine
    implements them all; each consumer asks for the family it reads)."""


@dataclass(frozen=True)
class Histogram:
    """One feature's cells: parallel arrays of slot, bin code, class code and rows (for a
    numeric target: channel 0, 1, 2 and the cell's rows, Σy, Σy²)."""

    slot: np.ndarray
    code: np.ndarray
    cls: np.ndarray
    rows: np.ndarray


def is_parquet(path: str, input_format: str | None) -> bool:
    """Parquet by ``input_format``, else by the name's extension."""
    if input_format is not None:
        return input_format == "parquet"
    return path.lower().rstrip("/").endswith((".parquet", ".pq", ".parq"))


def not_parquet(source: str, engine: str, tables: str) -> InputError:
    from rulecli.errors import InputError

    return InputError(
        f"{source}: `engine={engine}` reads Parquet files (or a glob such as 'data/*.parquet') and {tables}; "
        "other formats: `engine=memory` or `engine=duckdb`, or convert them to Parquet first"
    )


def is_engine_table(data: object) -> bool:
    return getattr(data, "engine", "memory") != "memory" and hasattr(data, "histograms")


def open_table(
    source: str,
    spec: object,
    options: EngineOptions,
    *,
    input_format: str | None = None,
    reader: Callable[[str], None] | None = None,
) -> EngineTable:
    """``source`` (a file, a glob, or with ``options.table`` a database) as a table of the engine;
    ``reader(path)`` writes a file that is not Parquet, read as the in-memory engine reads
    it, to a Parquet file at ``path`` (DuckDB learns from that copy)."""
    if options.engine == "spark":
        from rulecli.engines import spark

        if options.table is None and not is_parquet(source, input_format):
            # checked before a session starts: the cluster reads its own paths, no local copy
            raise not_parquet(source, "spark", "catalog tables (`table` NAME)")

        return spark.open_table(source, spec, options, input_format=input_format)
    from rulecli.engines.duckdb import DuckDB
    from rulecli.engines.table import open_sql_table

    return open_sql_table(DuckDB(options, reader), source, spec, options, input_format)
