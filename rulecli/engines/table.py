"""A training table that stays in a SQL engine: the profile that gives its schema, and the counts.

The engines differ in how they read files and run queries (:class:`Backend`: DuckDB
in-process, Spark on a cluster); the queries are the same, written for each dialect by
:mod:`rulecli.engines.sql`. The first passes profile the columns (types, distinct values,
class counts), which gives the schema reading the table in memory gives; tree growth
writes a binned copy of the features once (a small integer per cell) and counts each level
from it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np
import polars as pl

from rulecli.dataset import (
    MAX_TEXT_LEVELS,
    Dataset,
    DataSpec,
    TargetView,
    check_columns,
    dataset_with_schema,
    missing_target_warning,
    prepare_dataset,
    quoted,
    too_many_levels,
)
from rulecli.discretize import cut_between
from rulecli.display import counted
from rulecli.engines import Bins, EngineOptions, Frontier, Histogram, sql
from rulecli.errors import InputError, ParamError
from rulecli.model.languages import SqlText, sql_text
from rulecli.schema import PLAIN, Feature, Kind, Schema, is_numeric_dtype, temporal_unit
from rulecli.stats import hash_threshold, tallies

QUANTILE_ROWS = 1_000_000  # rows a feature's quantile bins are found on: a hashed sample past it
EXACT_DISTINCT = 100_000  # columns with at most about this many values are profiled value by value
MAX_LEVELS = 10_000  # levels a categorical feature may have on an engine
WHOLE_RANGE = 4096  # values a bin lookup table may list
OOB_NODES = 20_000  # tree nodes one out-of-bag query takes at most
T = TypeVar("T")


class Backend(Protocol):
    """What an engine does for a :class:`SqlTable`."""

    name: str  # the engine's name (memory, duckdb, spark)
    label: str  # the engine's name for a person
    dialect: str  # a SQL dialect of rulecli.model.languages

    def scan(self, source: str, options: EngineOptions, input_format: str | None) -> tuple[str, pl.Schema]:
        """The FROM clause of the whole table, each row with its number ``_rulecli_id``
        (files of a glob in name order, as Polars reads them), and its columns' types."""
        ...

    def frame(self, query: str, failure: str) -> pl.DataFrame:
        """The query's result; an InputError starting with ``failure`` when it fails."""
        ...

    def quantiles(self, x: str, points: str) -> str:
        """The exact quantiles of ``x`` at ``points`` (an aggregate: the same for any order of the rows)."""
        ...

    def code_type(self, n: int) -> str: ...

    def scratch(self, root: str | None) -> str: ...

    def materialise(self, query: str, path: str, failure: str) -> str:
        """The query's rows written once under ``path``; the FROM clause that reads them."""
        ...

    def upload(self, name: str, frame: pl.DataFrame) -> None:
        """``frame`` (a few small columns) as the view ``name``, replacing any before."""
        ...

    def remove(self, path: str) -> None: ...

    def close(self) -> None: ...


@dataclass
class SqlTable(TargetView):
    """A training table counted by a SQL engine (see :class:`rulecli.engines.EngineTable`)."""

    source: str
    schema: Schema
    n_rows: int
    warnings: tuple[str, ...]
    relation: str  # the FROM clause: rows with a target, each with its number ``_rulecli_id``
    counts: np.ndarray
    backend: Backend = field(repr=False)
    temp_root: str | None = field(default=None, repr=False)  # temp_directory, else the system's
    workdir: str | None = field(default=None, repr=False)
    binned: dict[int, tuple[Bins, str]] = field(default_factory=dict, repr=False)
    on_pass: Callable[[str, float], None] | None = field(default=None, repr=False)
    sample_rows: int | None = None  # see rulecli.engines.EngineOptions
    # sorted distinct values of the numeric features with few, from the profile
    known_values: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    # whether ``_rulecli_id`` numbers the rows with a target 0, 1, 2, ... (no gaps)
    dense_ids: bool = field(default=False, repr=False)
    # a numeric target's midrange, and the units per unit it is counted in about it (see
    # rulecli.engines.sql.FIXED_BITS): the binned copy holds each row's target so
    centre: float = 0.0
    scale: float = 1.0
    weights: None = None
    weighting: None = None
    weight_column: None = None

    @property
    def total_weight(self) -> int:
        return self.n_rows

    @property
    def engine(self) -> str:
        return self.backend.name

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    def class_counts(self) -> np.ndarray:
        return self.counts

    # -- counting

    def _run(self, what: str, query: str) -> pl.DataFrame:
        return self._timed(what, lambda: self.backend.frame(query, self._failure(what)))

    def _failure(self, what: str) -> str:
        return f"{self.source}: {self.backend.label} could not {what}"

    def _timed(self, what: str, work: Callable[[], T]) -> T:
        """A pass over the table, reported to ``on_pass`` with its seconds."""
        start = time.perf_counter()
        result = work()
        if self.on_pass is not None:
            self.on_pass(what, time.perf_counter() - start)
        return result

    def _count_distinct(self, what: str, columns: list[str]) -> pl.DataFrame:
        """The distinct rows of ``columns`` (SQL expressions with aliases) and their count ``n``,
        in the columns' order."""
        keys = ", ".join(str(i + 1) for i in range(len(columns)))
        return self._run(
            what, f"SELECT {', '.join(columns)}, count(*) AS n FROM {self.relation} GROUP BY {keys} ORDER BY {keys}"
        )

    def grouped(self, names: tuple[str, ...]) -> Dataset:
        """The distinct values of ``names`` with the target, each with its row count as weight."""
        features = [self.schema.feature(n) for n in names]
        q = sql_text(self.dialect)
        columns = [f"{sql.column(self.dialect, f)} AS {q.ident(f.name)}" for f in features]
        target = q.ident(self.target)
        columns.append(f"CAST({target} AS {q.text}) AS {target}")
        frame = self._count_distinct(f"count {', '.join(names)}", columns)
        schema = Schema(tuple(features), self.schema.target)
        weights = frame.get_column("n").to_numpy().astype(np.float64)
        return dataset_with_schema(frame.drop("n"), schema, self.source, row_weights=weights)

    def bins(self, max_bins: int) -> Bins:
        """Bins as :class:`~rulecli.counting.binned.Binned` makes them in memory: one per value
        up to ``max_bins`` values (so the same cuts), else at quantiles (:meth:`_quantiles`)."""
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
        return {
            f.name: self.known_values[f.name]
            for f in features
            if f.name in self.known_values and self.known_values[f.name].size <= max_bins
        }

    def _quantiles(self, feature: Feature, max_bins: int) -> np.ndarray:
        x = sql.column(self.dialect, feature)
        points = sql.float_list(np.arange(1, max_bins) / max_bins)
        # exact quantiles, of a hashed sample past QUANTILE_ROWS rows: an engine's approximate
        # ones (t-digests) differ from run to run with the order its threads read the rows in,
        # and so did the model files
        rate = min(1.0, QUANTILE_ROWS / max(self.n_rows, 1))
        sampled = "" if rate >= 1.0 else f" WHERE {sql.row_hash('_rulecli_id', 0)} < {hash_threshold(rate)}"
        query = f"SELECT {self.backend.quantiles(x, points)} AS q FROM {self.relation}{sampled}"
        frame = self._run(f"find the quantiles of {feature.name}", query)
        return np.unique(np.asarray(frame.get_column("q")[0].to_list(), dtype=np.float64))

    def _binned_table(self, bins: Bins, *, numbered: bool = False) -> str:
        """The features' bin codes and the class code, written once (a small integer a cell);
        ``numbered``: with each row's number among the rows with a target as ``id``, in the
        table's order (the row numbers of the table read in memory)."""
        key = (id(bins), numbered)
        if key in self.binned and self.binned[key][0] is bins:
            return self.binned[key][1]
        if self.workdir is None:
            self.workdir = self.backend.scratch(self.temp_root)
        codes = [
            f"CAST({sql.bin_code(self.dialect, f, j, bins)} AS {self.backend.code_type(bins.n_bins[j])}) AS b{j}"
            for j, f in enumerate(self.schema.features)
        ]
        codes.append(f"{self._target_sql()} AS y")
        if numbered:
            # numbering every row afresh sorts the table: only where rows without a target
            # (or a database table's row ids) leave gaps
            ids = "_rulecli_id" if self.dense_ids else "row_number() OVER (ORDER BY _rulecli_id) - 1"
            codes.append(f"CAST({ids} AS BIGINT) AS id")
        query = f"SELECT {', '.join(codes)} FROM {self.relation}"
        path = f"{self.workdir}/binned{len(self.binned)}"
        what = "write the binned table"
        relation = self._timed(what, lambda: self.backend.materialise(query, path, self._failure(what)))
        self.binned[key] = (bins, relation)
        return relation

    def _target_sql(self) -> str:
        """Each row's class code, or its number's units from the centre (:attr:`scale`)."""
        if self.regression:
            return self._units(f"{self._number()} - {self._literal(self.centre)}")
        y = sql.class_code(self.dialect, self.target, self.classes)
        return f"CAST({y} AS {self.backend.code_type(len(self.classes))})"

    def _number(self) -> str:
        return f"CAST({sql_text(self.dialect).ident(self.target)} AS DOUBLE)"

    def _literal(self, value: float) -> str:
        return sql_text(self.dialect).literal(value)

    def _units(self, value_sql: str) -> str:
        return sql.units(value_sql, self._literal(self.scale))

    def _channels(self, bag: bool) -> list[str]:
        """What a cell sums: its rows (or draws) by class, grouped on ``y``; for a number its
        rows, and the sum of their units and of their squares (exact), as channels 0, 1, 2."""
        rows = "sum(w)" if bag else "count(*)"
        if not self.regression:
            return [rows]
        weighted = "w * " if bag else ""
        return [rows, sql.exact_sum(f"{weighted}y"), sql.exact_sum(f"{weighted}y * y")]

    def _in_target_units(self, sums: np.ndarray) -> np.ndarray:
        """Channels of :meth:`_channels` (rows, Σ units, Σ units²), a row each, as rows, Σy and
        Σy² about the centre (a division by a power of two: exact)."""
        return sums / np.array([1.0, self.scale, self.scale * self.scale])

    def histograms(self, bins: Bins, frontier: Frontier, bag: tuple[int, int] | None = None) -> list[Histogram]:
        """Per feature, the non-empty (slot, bin, class) cells of the frontier's slots: rows,
        or with ``bag`` the rows' draws in that bootstrap (``rulecli.stats.poisson_draws``).
        For a numeric target a cell's "classes" are its channels: rows, Σy and Σy²."""
        d = len(self.schema.features)
        codes = [f"b{j}" for j in range(d)]
        slot = sql.frontier_slot(frontier, codes, bins.n_bins)
        label = () if self.regression else ("y",)
        sets = ", ".join(f"({', '.join(('s', *label, f'b{j}'))})" for j in range(d))
        rows, kept = (
            (self._binned_table(bins), "s >= 0") if bag is None else (self._bagged(bins, bag), "s >= 0 AND w > 0")
        )
        channels = self._channels(bag is not None)
        sums = ", ".join(f"{c} AS n{i}" for i, c in enumerate(channels))
        grouped = (
            f"SELECT {', '.join(('s', *label, *codes))}, {sums} FROM "
            f"(SELECT {slot} AS s, * FROM {rows}) AS rulecli_slots WHERE {kept} GROUP BY GROUPING SETS ({sets})"
        )
        # a grouping set's rows hold its own feature's code, the others' NULL: one feature
        # number and one code column instead of a code column per feature (the result of a
        # level of a deep tree held 7.6 million cells, 1.5 GB with twenty code columns)
        feature = " ".join(f"WHEN b{j} IS NOT NULL THEN {j}" for j in range(d))
        listed = ", ".join(("s", *label, f"CASE {feature} END AS j", f"COALESCE({', '.join(codes)}) AS code"))
        query = f"SELECT {listed}, {', '.join(f'n{i}' for i in range(len(channels)))} FROM ({grouped}) AS rulecli_cells"
        frame = self._run(f"count {counted(frontier.n_slots, 'node')}", query)
        j = frame.get_column("j").to_numpy().astype(np.int64)
        order = np.argsort(j, kind="stable")
        bounds = np.searchsorted(j[order], np.arange(d + 1))
        slots, code = (frame.get_column(c).to_numpy().astype(np.int64)[order] for c in ("s", "code"))
        if self.regression:
            sums = self._in_target_units(frame.select(pl.col(f"n{c}").cast(pl.Float64) for c in range(3)).to_numpy())
            sums = sums[order]
        else:
            y, n = (frame.get_column(c).to_numpy().astype(np.int64)[order] for c in ("y", "n0"))
        out = []
        for f in range(d):
            mine = slice(bounds[f], bounds[f + 1])
            if not self.regression:
                out.append(Histogram(slots[mine], code[mine], y[mine], n[mine]))
                continue
            size = bounds[f + 1] - bounds[f]
            channel = np.repeat(np.arange(3), size)
            out.append(Histogram(np.tile(slots[mine], 3), np.tile(code[mine], 3), channel, sums[mine].T.ravel()))
        return out

    def _bagged(self, bins: Bins, bag: tuple[int, int]) -> str:
        """The binned rows with their draws ``w`` in the bootstrap ``bag``, as a subquery."""
        relation = self._binned_table(bins, numbered=True)
        hashed = f"(SELECT *, {sql.bag_hash('id', bag)} AS h FROM {relation}) AS rulecli_hashed"
        return f"(SELECT *, {sql.poisson_draws('h')} AS w FROM {hashed}) AS rulecli_bagged"

    def root_sums(self, bins: Bins, bag: tuple[int, int] | None = None) -> np.ndarray:
        """A tree's root: the rows (or the draws in the bootstrap ``bag``) of each class, or
        for a number the channels of :meth:`histograms`."""
        if bag is None and not self.regression:
            return self.counts
        rows = self._binned_table(bins) if bag is None else self._bagged(bins, bag)
        sums = ", ".join(f"{c} AS n{i}" for i, c in enumerate(self._channels(bag is not None)))
        if self.regression:
            frame = self._run("sum the target", f"SELECT {sums} FROM {rows}")
            return self._in_target_units(frame.select(pl.col(f"n{c}").cast(pl.Float64) for c in range(3)).to_numpy())[0]
        frame = self._run("count a bootstrap's classes", f"SELECT y, {sums} FROM {rows} GROUP BY y")
        out = np.zeros(len(self.classes), dtype=np.int64)
        out[frame.get_column("y").to_numpy().astype(np.int64)] = frame.get_column("n0").to_numpy()
        return out

    def out_of_bag(
        self, bins: Bins, trees: list[tuple[tuple[int, int], Frontier, np.ndarray]]
    ) -> tuple[int, int | float]:
        """The rows some tree's bootstrap missed, and how many of them those trees' averaged
        leaf shares (the class of the largest share, the first of equals) misclassify, or
        for a number the sum of those rows' squared errors of the trees' mean value. Each
        tree is its bag, its frontier giving each row's leaf as a slot, and its leaf shares
        (leaf by class); shares are summed tree by tree, as in memory, so the sums are the
        same doubles. The trees go into the query in groups of at most ``OOB_NODES`` nodes
        (one tree at least; a deep forest's query would otherwise be megabytes of SQL), each
        group adding its trees to every row's sums written by the group before."""
        relation = self._binned_table(bins, numbered=True)
        if self.workdir is None:
            self.workdir = self.backend.scratch(self.temp_root)
        d, k = len(self.schema.features), trees[0][2].shape[1] if trees else 1
        codes = [f"b{j}" for j in range(d)]
        literal = sql_text(self.dialect).literal
        groups = _tree_groups([shares.shape[0] for _, _, shares in trees])
        sums = None  # the relation of every row's miss count m and share sums s0, s1, ... so far
        for g, group in enumerate(groups):
            hashes = ", ".join(f"{sql.bag_hash('b.id', trees[t][0])} AS h{t}" for t in group)
            leaves = ", ".join(
                f"{sql.frontier_slot(trees[t][1], [f'b.{c}' for c in codes], bins.n_bins)} AS l{t}" for t in group
            )
            carried = ", a.m AS m0, " + ", ".join(f"a.s{c} AS s{c}0" for c in range(k)) if sums else ""
            source = f"{relation} AS b" + (f" JOIN {sums} AS a ON a.id = b.id" if sums else "")
            missed = " + ".join(
                ["m0" if sums else "0", *(f"(CASE WHEN {sql.undrawn(f'h{t}')} THEN 1 ELSE 0 END)" for t in group)]
            )
            added = []
            for c in range(k):
                terms = [
                    f"(CASE WHEN {sql.undrawn(f'h{t}')} THEN "
                    f"{sql.element(self.dialect, ', '.join(map(literal, trees[t][2][:, c].tolist())), f'l{t}')} "
                    "ELSE 0.0e0 END)"
                    for t in group
                ]
                # left to right, as the trees are added in memory
                added.append(f"{' + '.join([f's{c}0' if sums else '0.0e0', *terms])} AS s{c}")
            query = (
                f"SELECT id, y, {missed} AS m, {', '.join(added)} FROM "
                f"(SELECT b.id AS id, b.y AS y{carried}, {hashes}, {leaves} FROM {source}) AS rulecli_leaves"
            )
            if g < len(groups) - 1:
                what = f"score {counted(len(group), 'tree')} out of bag"
                path = f"{self.workdir}/oob{g}"
                sums = self._timed(
                    what, lambda q=query, p=path, w=what: self.backend.materialise(q, p, self._failure(w))
                )
                continue
            scored = self._squared_errors(query) if self.regression else _misclassified(query, k)
            frame = self._run(f"score {counted(len(group), 'tree')} out of bag", scored)
        has, wrong = frame.row(0)
        if self.regression:  # the squares' exact sum in units squared
            return int(has or 0), int(wrong or 0) / self.scale**2
        return int(has or 0), int(wrong or 0)

    def _squared_errors(self, sums: str) -> str:
        """The rows with a miss count m above 0, and the sum of their squared errors (in
        units) of the trees' mean value s0 / m, from the relation ``sums``."""
        row = f"CAST(y AS DOUBLE) / {self._literal(self.scale)} + {self._literal(self.centre)}"
        error = self._units(f"{row} - s0 / GREATEST(m, 1)")
        return (
            f"SELECT sum(CASE WHEN m > 0 THEN 1 ELSE 0 END) AS has, "
            f"{sql.exact_square_sum('CASE WHEN m > 0 THEN e ELSE 0 END')} AS wrong "
            f"FROM (SELECT m, {error} AS e FROM ({sums}) AS rulecli_sums) AS rulecli_errors"
        )

    # -- the covering learners: row sets in memory as bits, features in the engine

    def row_classes(self, bins: Bins) -> np.ndarray:
        """Each row's class code, by row number."""
        relation = self._binned_table(bins, numbered=True)
        frame = self._run("read the classes", f"SELECT y FROM {relation} ORDER BY id")
        return frame.get_column("y").to_numpy().astype(np.int64)

    def row_bits(self, bins: Bins, test: str) -> np.ndarray:
        """The rows where ``test`` (SQL over the bin codes ``b0``, ``b1``, ...) holds, as
        :mod:`rulecli.counting.bits` packs them."""
        relation = self._binned_table(bins, numbered=True)
        word, bit = sql.bit_word(self.dialect, "id"), sql.bit_value(self.dialect, "id")
        frame = self._run(
            "find a condition's rows",
            f"SELECT {word} AS w, bit_or({bit}) AS m FROM {relation} WHERE {test} GROUP BY 1",
        )
        return _packed(frame.get_column("w").to_numpy(), frame.get_column("m").to_numpy(), self.n_rows)

    def code_counts(self, bins: Bins, row_sets: list[np.ndarray], labels: np.ndarray | None) -> list[Histogram]:
        """Per feature, the (bin, label) counts of the rows of each of ``row_sets`` (bits), in
        one pass: each histogram's ``rows`` holds a column per row set (its ``slot`` is 0).
        A row's label is its bit in ``labels``, or its class where ``labels`` is None."""
        relation = self._binned_table(bins, numbered=True)
        d = len(self.schema.features)
        words = [_words(rows) for rows in row_sets]
        union = np.bitwise_or.reduce(words)
        used = np.flatnonzero(union)
        # u: the rows of any set, so that only they are aggregated
        upload = {"u": union[used].astype(np.int64), **{f"r{i}": w[used].astype(np.int64) for i, w in enumerate(words)}}
        if labels is not None:
            upload["l"] = _words(labels)[used].astype(np.int64)
        self.backend.upload("rulecli_rows", pl.DataFrame({"w": used.astype(np.int64), **upload}))
        word = sql.bit_word(self.dialect, "b.id")
        label = "b.y" if labels is None else sql.bit_of(self.dialect, "m.l", "b.id")
        codes = [f"b{j}" for j in range(d)]
        member = [f"{sql.bit_of(self.dialect, f'm.r{i}', 'b.id')} AS k{i}" for i in range(len(row_sets))]
        sums = ", ".join(f"sum(k{i}) AS n{i}" for i in range(len(row_sets)))
        sets = ", ".join(f"(lab, b{j})" for j in range(d))
        query = (
            f"SELECT lab, {', '.join(codes)}, {sums} FROM (SELECT {', '.join('b.' + c for c in codes)}, "
            f"{label} AS lab, {', '.join(member)} FROM {relation} AS b JOIN rulecli_rows AS m ON m.w = {word} "
            f"WHERE {sql.bit_of(self.dialect, 'm.u', 'b.id')} = 1) AS rulecli_kept GROUP BY GROUPING SETS ({sets})"
        )
        rows = sum(_bit_count(w) for w in words)
        frame = self._run(f"count {counted(rows, 'row')} by condition", query)
        out = []
        for j in range(d):
            part = frame.filter(pl.col(f"b{j}").is_not_null())
            label_codes, code = (part.get_column(c).to_numpy().astype(np.int64) for c in ("lab", f"b{j}"))
            n = part.select([f"n{i}" for i in range(len(row_sets))]).to_numpy().astype(np.int64)
            out.append(Histogram(np.zeros_like(code), code, label_codes, n))
        return out

    def value_summary(
        self, bins: Bins, max_bins: int
    ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Per feature, over the rows with a target: whether any value is missing, how many
        distinct values a numeric feature takes (estimated where its bins are quantiles), and
        each numeric bin's least and greatest value (NaN for a bin without rows), for the
        ``bins`` of :meth:`bins` with ``max_bins``."""
        features = self.schema.features
        numeric = [j for j, f in enumerate(features) if f.kind == Kind.NUMERIC]
        few = self._few_values([features[j] for j in numeric], max_bins)
        stats = ["count(*) AS n"]
        for j, f in enumerate(features):
            x = sql.column(self.dialect, f)
            stats.append(f"count({x}) AS p{j}")
            if j in numeric:
                stats.append(f"{'count(DISTINCT ' if f.name in few else 'approx_count_distinct('}{x}) AS d{j}")
        first = self._run("count the features' values", f"SELECT {', '.join(stats)} FROM {self.relation}")
        n = int(first.item(0, "n"))
        missing = np.array([int(first.item(0, f"p{j}")) < n for j in range(len(features))])
        distinct = np.array([int(first.item(0, f"d{j}")) if j in numeric else 0 for j in range(len(features))])
        lows = [np.empty(0)] * len(features)
        highs = [np.empty(0)] * len(features)
        for j in numeric:
            if features[j].name in few:
                lows[j] = highs[j] = few[features[j].name]
        ranged = [j for j in numeric if features[j].name not in few]
        if ranged:
            views = ", ".join(
                f"{sql.bin_code(self.dialect, f, j, bins)} AS c{j}, {sql.column(self.dialect, f)} AS x{j}"
                for j, f in ((j, features[j]) for j in ranged)
            )
            keys = ", ".join(f"c{j}" for j in ranged)
            ends = ", ".join(f"min(x{j}) AS lo{j}, max(x{j}) AS hi{j}" for j in ranged)
            sets = ", ".join(f"(c{j})" for j in ranged)
            frame = self._run(
                "find the bins' values",
                f"SELECT {keys}, {ends} FROM (SELECT {views} FROM {self.relation}) AS rulecli_bins "
                f"GROUP BY GROUPING SETS ({sets})",
            )
            for j in ranged:
                part = frame.filter(pl.col(f"c{j}").is_not_null() & (pl.col(f"c{j}") < bins.n_bins[j]))
                code = part.get_column(f"c{j}").to_numpy().astype(np.int64)
                lows[j] = np.full(bins.n_bins[j], np.nan)
                highs[j] = np.full(bins.n_bins[j], np.nan)
                lows[j][code] = part.get_column(f"lo{j}").cast(pl.Float64).to_numpy()
                highs[j][code] = part.get_column(f"hi{j}").cast(pl.Float64).to_numpy()
        return missing, distinct, lows, highs

    def cell_table(self, features: tuple[Feature, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct rows of the features' cells (numeric features cut by their ``cuts``)
        with the class: (cell codes, class codes, rows of each), in one pass."""
        codes = []
        for j, f in enumerate(features):
            edges, right_closed = (f.cuts.edges, f.cuts.right_closed) if f.cuts is not None else ((), False)
            codes.append(f"{sql.cell_code(self.dialect, f, edges, right_closed)} AS c{j}")
        codes.append(f"{sql.class_code(self.dialect, self.target, self.classes)} AS y")
        frame = self._count_distinct("count the decision table", codes)
        cells = frame.select([f"c{j}" for j in range(len(features))]).to_numpy().astype(np.int32)
        y = frame.get_column("y").to_numpy().astype(np.int64)
        return cells.reshape(frame.height, len(features)), y, frame.get_column("n").to_numpy().astype(np.float64)

    def rule_counts(self, tests: list[str], ordered: bool) -> np.ndarray:
        """Class counts of each rule's rows and, last, of the rows no rule takes: in a decision
        list (``ordered``) the rows each rule decides (the first that matches), in a rule set
        every row a rule matches."""
        k = len(self.classes)
        y = sql.class_code(self.dialect, self.target, self.classes)
        if ordered:
            whens = " ".join(f"WHEN {t} THEN {i}" for i, t in enumerate(tests))
            decided = f"CASE {whens} ELSE {len(tests)} END" if tests else "0"
            frame = self._run(
                "count the rules' rows",
                f"SELECT {decided} AS r, {y} AS y, count(*) AS n FROM {self.relation} GROUP BY 1, 2",
            )
            out = np.zeros((len(tests) + 1, k))
            rows = frame.get_column("r").to_numpy().astype(np.int64)
            out[rows, frame.get_column("y").to_numpy().astype(np.int64)] = frame.get_column("n").to_numpy()
            return out
        sums = [f"count(CASE WHEN {t} THEN 1 END) AS m{i}" for i, t in enumerate(tests)]
        none = " OR ".join(f"({t})" for t in tests) if tests else "FALSE"
        sums.append(f"count(CASE WHEN {none} THEN NULL ELSE 1 END) AS m{len(tests)}")
        frame = self._run(
            "count the rules' rows", f"SELECT {y} AS y, {', '.join(sums)} FROM {self.relation} GROUP BY 1"
        )
        out = np.zeros((len(tests) + 1, k))
        classes = frame.get_column("y").to_numpy().astype(np.int64)
        for i in range(len(tests) + 1):
            out[i, classes] = frame.get_column(f"m{i}").to_numpy()
        return out

    def number_rule_stats(self, tests: list[str], formulas: list[str], default: str, ordered: bool) -> np.ndarray:
        """Per rule (its SQL test and formula), then for the default (its formula): the rows
        it is credited with (those it decides in a list, every row it matches in a set; the
        default's: the rows no rule matches, or every row when none is left), their target's
        mean and population variance and the formula's mean squared error on them, a row
        each, in one pass (sums of units, exact: see :data:`rulecli.engines.sql.FIXED_BITS`)."""
        y, centre = self._number(), self._literal(self.centre)
        any_rule = " OR ".join(f"({t})" for t in tests) if tests else "FALSE"
        per_row = [
            f"{self._units(f'{y} - {centre}')} AS v",
            f"{self._units(f'{y} - {default}')} AS dv",
            f"CASE WHEN {any_rule} THEN 0 ELSE 1 END AS left_over",
        ]
        rest = ("CASE WHEN left_over = 1 THEN v END", "CASE WHEN left_over = 1 THEN dv END")
        figures = [_moments("rest", *rest), _moments("every", "v", "dv")]
        if ordered and tests:
            decided = " ".join(f"WHEN {t} THEN {i}" for i, t in enumerate(tests))
            value = " ".join(f"WHEN {t} THEN {f}" for t, f in zip(tests, formulas, strict=True))
            per_row += [f"CASE {decided} ELSE -1 END AS r", f"{self._units(f'{y} - (CASE {value} END)')} AS rv"]
            query = (
                f"SELECT r, {', '.join([*figures, _moments('r', 'v', 'rv')])} FROM (SELECT {', '.join(per_row)} "
                f"FROM {self.relation}) AS rulecli_decided GROUP BY GROUPING SETS ((r), ())"
            )
            frame = self._run("count the rules' rows", query)
            whole = frame.filter(pl.col("r").is_null())  # the grouping set of every row
            ruled = frame.filter(pl.col("r") >= 0)
            out = np.zeros((len(tests) + 2, 4))
            out[ruled.get_column("r").to_numpy().astype(np.int64)] = self._figures(ruled, "r")
            out[-2:] = np.vstack([self._figures(whole, "rest"), self._figures(whole, "every")])
        else:
            for i, (t, f) in enumerate(zip(tests, formulas, strict=True)):
                per_row += [f"CASE WHEN {t} THEN 1 ELSE 0 END AS h{i}", f"{self._units(f'{y} - ({f})')} AS e{i}"]
                figures.append(_moments(f"m{i}", f"CASE WHEN h{i} = 1 THEN v END", f"CASE WHEN h{i} = 1 THEN e{i} END"))
            rows = f"(SELECT {', '.join(per_row)} FROM {self.relation}) AS rulecli_rows"
            frame = self._run("count the rules' rows", f"SELECT {', '.join(figures)} FROM {rows}")
            out = np.vstack([self._figures(frame, n) for n in [*(f"m{i}" for i in range(len(tests))), "rest", "every"]])
        # the default's rows: those left, or every row when the rules match them all
        return out[:-1] if out[-2, 0] > 0 else np.vstack([out[:-2], out[-1:]])

    def _figures(self, frame: pl.DataFrame, name: str) -> np.ndarray:
        """(rows, mean, variance, mean squared error) from the exact sums of :func:`_moments`
        ``name`` (whole numbers: the figures do not depend on the order the engine added the
        rows in), a row per row of ``frame``; zeros where no row had a value."""
        counts, firsts, seconds, errors = (
            [int(x or 0) for x in frame.get_column(f"{name}_{k}").to_list()] for k in ("n", "s1", "s2", "e2")
        )
        out = np.zeros((frame.height, 4))
        units = self.scale
        for i, (n, s1, s2, e2) in enumerate(zip(counts, firsts, seconds, errors, strict=True)):
            if n:
                variance = (n * s2 - s1 * s1) / (n * n * units * units)
                out[i] = (n, self.centre + s1 / (n * units), variance, e2 / (n * units * units))
        return out

    def sample(self, seed: int, rate: float) -> Dataset:
        """The rows whose hashed number falls below ``rate``, in the table's order."""
        names = [*self.schema.feature_names, self.target]
        select = ", ".join(sql_text(self.dialect).ident(n) for n in names)
        query = (
            f"SELECT _rulecli_id, {select} FROM {self.relation} "
            f"WHERE {sql.row_hash('_rulecli_id', seed)} < {hash_threshold(rate)} ORDER BY _rulecli_id"
        )
        frame = self._run("draw a sample", query)
        ids = frame.get_column("_rulecli_id").to_numpy().astype(np.int64)
        return dataset_with_schema(frame.drop("_rulecli_id"), self.schema, self.source, row_ids=ids)

    def close(self) -> None:
        if self.workdir is not None:
            self.backend.remove(self.workdir)
            self.workdir = None
        self.backend.close()


def _words(packed: np.ndarray) -> np.ndarray:
    """Bits packed in uint64 words as 32-bit words (what a BIGINT shifts without a sign)."""
    return packed.view(np.uint32)


def _bit_count(words: np.ndarray) -> int:
    return int(np.bitwise_count(words).sum())


def _packed(word: np.ndarray, value: np.ndarray, n: int) -> np.ndarray:
    """32-bit words ``value`` at positions ``word`` as bits over ``n`` rows in uint64 words."""
    out = np.zeros(2 * -(-n // 64), dtype=np.uint32)
    out[word.astype(np.int64)] = value.astype(np.uint32)
    return out.view(np.uint64)


def _whole_range(values: np.ndarray) -> tuple[int, int] | None:
    if values.size == 0 or not np.all(values == np.round(values)):
        return None
    low, high = int(values[0]), int(values[-1])
    return (low, high) if high - low < WHOLE_RANGE else None


def open_sql_table(
    backend: Backend, source: str, spec: object, options: EngineOptions, input_format: str | None
) -> SqlTable:
    assert isinstance(spec, DataSpec)
    flag = f"`engine={backend.name}`"
    if spec.weights is not None or spec.class_weight is not None:
        raise ParamError(f"`weights` and `class_weight` do not work with {flag} yet; use `engine=memory`")
    if spec.target_bins is not None:
        raise ParamError(f"`target_bins` does not work with {flag} yet; use `engine=memory`")
    try:
        raw, columns = backend.scan(source, options, input_format)
        table = _profile(backend, source, raw, columns, spec)
    except BaseException:
        backend.close()
        raise
    table.temp_root = options.temp_directory
    table.sample_rows = options.sample_rows
    table.dense_ids = table.dense_ids and options.table is None
    return table


def _profile(backend: Backend, source: str, raw: str, columns: pl.Schema, spec: DataSpec) -> SqlTable:
    """The table's schema from its columns' distinct values (what typing and the levels
    depend on), so the schema is the one reading the table in memory gives."""
    q = sql_text(backend.dialect)
    names = list(columns)
    if not names:
        raise InputError(f"{source}: no data rows")
    target = spec.target if spec.target is not None else names[-1]
    check_columns(names, [target], source, "`target`")

    def run(query: str) -> pl.DataFrame:
        return backend.frame(query, f"{source}: {backend.label} could not profile it")

    view = _viewer(q, columns)
    numeric = {n for n in names if is_numeric_dtype(columns[n])}
    first, n_all, distinct, present = _counted(run, raw, names, numeric, view, source)
    used = [n for n in names if n in {target, *(spec.features or names)} - set(spec.exclude)]
    kept = {target, *spec.use, *spec.features, *spec.numeric}
    # text of many values is left out unless kept (prepare_dataset says so from the counts
    # below): its values are not listed
    free_text = {
        n
        for n in used
        if n not in numeric | kept
        and distinct[n] > 2 * MAX_TEXT_LEVELS
        and too_many_levels(distinct[n], present[n])
        and not _dates(run, raw, q, n, columns)
    }
    for n in used:
        if n not in numeric | free_text | {target, *spec.numeric} and distinct[n] > MAX_LEVELS:
            raise InputError(
                f"{source}: column '{n}' has about {distinct[n]:,} distinct values; with "
                f"`engine={backend.name}` a categorical feature may have at most {MAX_LEVELS:,} "
                f"(`exclude` {quoted(n)}, or `numeric` {quoted(n)})"
            )
    listed = [n for n in used if n not in free_text and (distinct[n] <= EXACT_DISTINCT or n not in numeric)]
    found = _listed_values(run, raw, listed, view)
    representative = _representative(columns, target, found, free_text, used, first, n_all, present)
    # what the listed values do not show: how many rows hold a value, and the distinct
    # values of the columns not listed
    profile = {
        n: (found[n].get_column("v").drop_nulls().len() if n in found else distinct[n], present[n])
        for n in used
        if n != target
    }
    prepared = prepare_dataset(representative, spec, source=source, profile=profile)
    known = {
        n: np.sort(found[n].get_column("v").drop_nulls().cast(pl.Float64).to_numpy())
        for n in found
        if n in numeric and n != target
    }
    if not prepared.schema.target.regression:
        return _sql_table(backend, source, raw, prepared, found, n_all, view(target), known)
    numbers = _sql_table(backend, source, raw, prepared, {}, n_all, view(target), known, rows=present[target])
    i = names.index(target)
    return _counted_in_units(numbers, *(float(first.item(0, f"{end}{i}")) for end in ("lo", "hi")))


def _tree_groups(sizes: list[int]) -> list[list[int]]:
    """The trees (by their node counts) in groups of at most ``OOB_NODES`` nodes, one tree at least."""
    groups: list[list[int]] = [[]]
    nodes = 0
    for t, size in enumerate(sizes):
        if groups[-1] and nodes + size > OOB_NODES:
            groups.append([])
            nodes = 0
        groups[-1].append(t)
        nodes += size
    return groups


def _misclassified(sums: str, k: int) -> str:
    """The rows with a miss count m above 0, and how many of them the class of the largest
    mean share s_c / m (the first of equals) gets wrong, from the relation ``sums``."""
    shares = ", ".join(f"s{c} / GREATEST(m, 1) AS p{c}" for c in range(k))
    first_max = " ".join(
        f"WHEN {' AND '.join(f'p{c} >= p{o}' for o in range(c + 1, k))} THEN {c}" for c in range(k - 1)
    )
    return (
        f"SELECT sum(CASE WHEN m > 0 THEN 1 ELSE 0 END) AS has, "
        f"sum(CASE WHEN m > 0 AND (CASE {first_max} ELSE {k - 1} END) <> y THEN 1 ELSE 0 END) AS wrong "
        f"FROM (SELECT y, m, {shares} FROM ({sums}) AS rulecli_sums) AS rulecli_shares"
    )


def _moments(name: str, value: str, error: str) -> str:
    """The exact sums of :meth:`SqlTable.number_rule_stats` for one group of rows: where
    ``value`` (units from the centre) is not NULL, the rows and the sums of the units and their
    squares, and the sum of the squares of ``error`` (units)."""
    return (
        f"count({value}) AS {name}_n, {sql.exact_sum(value)} AS {name}_s1, "
        f"{sql.exact_square_sum(value)} AS {name}_s2, {sql.exact_square_sum(error)} AS {name}_e2"
    )


def _viewer(q: SqlText, columns: pl.Schema) -> Callable[[str], str]:
    def view(name: str) -> str:
        # numbers with NaN read as missing, as rulecli reads them
        if is_numeric_dtype(columns[name]) and columns[name].is_float():
            return f"NULLIF({q.ident(name)}, CAST('NaN' AS DOUBLE))"
        return q.ident(name)

    return view


def _counted(
    run: Callable[[str], pl.DataFrame],
    raw: str,
    names: list[str],
    numeric: set[str],
    view: Callable[[str], str],
    source: str,
) -> tuple[pl.DataFrame, int, dict[str, int], dict[str, int]]:
    """One pass: the rows, each column's distinct values (approximately) and values present,
    and the range of each numeric column."""
    stats = ", ".join(
        f"approx_count_distinct({view(n)}) AS d{i}, count({view(n)}) AS p{i}"
        + (f", min({view(n)}) AS lo{i}, max({view(n)}) AS hi{i}" if n in numeric else "")
        for i, n in enumerate(names)
    )
    first = run(f"SELECT count(*) AS n, {stats} FROM {raw}")
    n_all = int(first.item(0, "n"))
    if n_all == 0:
        raise InputError(f"{source}: no data rows")
    distinct = {n: int(first.item(0, f"d{i}")) for i, n in enumerate(names)}
    present = {n: int(first.item(0, f"p{i}")) for i, n in enumerate(names)}
    return first, n_all, distinct, present


def _listed_values(
    run: Callable[[str], pl.DataFrame], raw: str, listed: list[str], view: Callable[[str], str]
) -> dict[str, pl.DataFrame]:
    """Every value of the columns with few, with its count, in one pass: a grouping set per column."""
    found: dict[str, pl.DataFrame] = {}
    if not listed:
        return found
    views = ", ".join(f"{view(n)} AS v{i}" for i, n in enumerate(listed))
    keys = ", ".join(f"v{i}" for i in range(len(listed)))
    flags = ", ".join(f"grouping(v{i}) AS g{i}" for i in range(len(listed)))
    sets = ", ".join(f"(v{i})" for i in range(len(listed)))
    grouped = run(
        f"SELECT {keys}, {flags}, count(*) AS n FROM (SELECT {views} FROM {raw}) AS rulecli_values "
        f"GROUP BY GROUPING SETS ({sets})"
    )
    for i, n in enumerate(listed):
        mine = grouped.filter(pl.col(f"g{i}") == 0)
        found[n] = mine.select(pl.col(f"v{i}").alias("v"), pl.col("n"))
    return found


def _representative(
    columns: pl.Schema,
    target: str,
    found: dict[str, pl.DataFrame],
    free_text: set[str],
    used: list[str],
    first: pl.DataFrame,
    n_all: int,
    present: dict[str, int],
) -> pl.DataFrame:
    """A small frame that types as the whole table does: each column's listed values, or
    (many numbers) its range and a missing value if it has one."""
    values: dict[str, pl.Series] = {}
    for i, n in enumerate(columns):
        dtype = columns[n]
        if n == target and n in found:
            series = _most_frequent_last(found[n])
        elif n in found:
            series = found[n].get_column("v")
        elif n in free_text:  # the counts leave it out
            series = pl.Series("v", [None], dtype=dtype)
        elif n in used:  # many numbers: their range (and a missing value, if any) types them
            series = first.select(pl.col(f"lo{i}").alias("v"), pl.col(f"hi{i}").alias("v2")).row(0)
            series = pl.Series("v", [*series, *([None] if present[n] < n_all else [])], dtype=first.schema[f"lo{i}"])
        else:  # a column left out needs only its name and type
            series = pl.Series("v", [None], dtype=dtype)
        values[n] = series.cast(dtype).alias(n)
    length = max(s.len() for s in values.values()) + 1  # every column repeats a value: none looks like an ID
    return pl.DataFrame(
        [_padded(values[n].filter(values[n].is_not_null()) if n == target else values[n], length) for n in columns]
    )


def _counted_in_units(table: SqlTable, low: float, high: float) -> SqlTable:
    """A numeric target's table, its values counted about their midrange in units (see
    :data:`rulecli.engines.sql.FIXED_BITS`). The midrange, not the mean: the least and
    greatest values are the same whatever the order the engine reads the rows in, where its
    mean of doubles is not."""
    table.centre = low / 2 + high / 2
    table.scale = sql.unit_scale(max(high - table.centre, table.centre - low))
    return table


def _most_frequent_last(counted: pl.DataFrame) -> pl.Series:
    """A target's values (with their counts ``n``) with the most frequent last, where the
    representative frame repeats it, and 0 not taken among equals: the target is read as
    counts (0 the most frequent value) where the whole table's values are."""
    present = counted.filter(pl.col("v").is_not_null())
    if present.height == 0:
        return present.get_column("v")
    top = present.filter(pl.col("n") == present.get_column("n").max()).get_column("v").to_list()
    last = next((v for v in top if v != 0), top[0])
    values = present.get_column("v")
    return values.filter(values != last).append(pl.Series("v", [last], dtype=values.dtype))


def _sql_table(
    backend: Backend,
    source: str,
    raw: str,
    prepared: Dataset,
    found: dict[str, pl.DataFrame],
    n_all: int,
    view_target: str,
    known: dict[str, np.ndarray],
    rows: int | None = None,
) -> SqlTable:
    """The engine's table of the rows with a target, with the class counts the profile found
    (a numeric target: no classes, and the ``rows`` that hold a value)."""
    schema = prepared.schema
    target = schema.target.name
    labels = found[target].filter(pl.col("v").is_not_null()) if target in found else pl.DataFrame({"v": [], "n": []})
    by_class = dict(
        zip(labels.get_column("v").cast(pl.String).to_list(), labels.get_column("n").to_list(), strict=True)
    )
    counts = tallies(np.array([float(by_class.get(c, 0)) for c in schema.target.classes]))
    n_rows = int(sum(by_class.values())) if rows is None else rows
    warnings = list(prepared.warnings)
    if n_rows < n_all:
        warnings.insert(0, missing_target_warning(source, target, n_all - n_rows))
    relation = f"(SELECT * FROM {raw} WHERE {view_target} IS NOT NULL) AS rulecli_rows"
    dense = n_rows == n_all
    return SqlTable(
        source, schema, n_rows, tuple(warnings), relation, counts, backend, known_values=known, dense_ids=dense
    )


def _dates(run: Callable[[str], pl.DataFrame], raw: str, q: SqlText, name: str, columns: pl.Schema) -> bool:
    """Whether a column of many values may hold dates (a date type, or text whose first
    thousand distinct values are dates): its values are then listed, and typed as memory
    types them."""
    if columns[name].is_temporal():
        return True
    if columns[name] != pl.String:
        return False
    x = q.ident(name)
    some = run(f"SELECT DISTINCT {x} AS v FROM {raw} WHERE {x} IS NOT NULL LIMIT 1000").get_column("v")
    return temporal_unit(some) is not None


def _padded(series: pl.Series, length: int) -> pl.Series:
    """The column's values, the last repeated up to ``length`` rows (extended under
    :data:`rulecli.schema.PLAIN`, whatever the column's name)."""
    if series.len() == 0:
        return pl.Series(series.name, [None] * length, dtype=series.dtype)
    return series.alias(PLAIN).extend_constant(series[-1], length - series.len()).alias(series.name)
