"""Counting, in one wing: the class counts of rows that every learner asks for, wherever the rows are.

A table is in memory (a prepared :class:`~rulecli.dataset.Dataset`) or stays in an
engine (an :class:`~rulecli.engines.EngineTable`, DuckDB or Spark, which answers in SQL).
Each family of counts is asked the same way of both, here; the learners never ask where
the rows are:

- **covering counts** (:func:`covering_counts`): the (value, class) counts of every
  feature over a set of rows, and the rows a condition keeps, for the covering learners.
  In memory :class:`~rulecli.counting.encoded.Encoded` (each column encoded once, counts
  by ``bincount`` or the compiled loops of :mod:`rulecli.counting.kernel`, row sets as
  bits, :mod:`rulecli.counting.bits`); in an engine
  :class:`~rulecli.counting.engine_encoded.EngineEncoded`, the same answers from the
  engine's binned copy of the features.
- **grouped rows** (:func:`grouped`): a feature's values with each class's rows, the cross
  table OneR and the discretisers read: the rows themselves in memory, an engine's
  ``GROUP BY`` as a small weighted table.
- **decision tables** (:func:`decision_table`): every feature cut into cells and the
  rows as cell codes, for reduct: in memory each row's codes, in an engine its distinct
  rows of codes with their counts as weights (one pass).
- **tree histograms**: the (bin, class) counts of every feature per node, for trees
  and forests: in memory over :class:`~rulecli.counting.binned.Binned` columns (the
  growers of :mod:`rulecli.search.grow`), in an engine one pass per level
  (:meth:`~rulecli.engines.EngineTable.histograms`, :mod:`rulecli.search.engine_grow`).
"""

from __future__ import annotations

import numpy as np

from rulecli.counting.cells import FeatureCells, cells_of
from rulecli.counting.encoded import Encoded
from rulecli.counting.engine_encoded import EngineEncoded
from rulecli.dataset import Dataset
from rulecli.engines import EngineTable, is_engine_table


def covering_counts(ds: Dataset | EngineTable) -> Encoded:
    """The covering learners' counts of ``ds``, in memory or in its engine."""
    return EngineEncoded.from_table(ds) if is_engine_table(ds) else Encoded.from_dataset(ds)


def grouped(ds: Dataset | EngineTable, names: tuple[str, ...]) -> Dataset:
    """What a cross table of ``names`` by class is counted on: the rows in memory, or an
    engine's distinct values of ``names`` with each class's count as the row's weight (the
    same cross table, so the same cuts and rules)."""
    return ds.grouped(names) if is_engine_table(ds) else ds


def decision_table(
    ds: Dataset | EngineTable, method: str, bins: int
) -> tuple[list[FeatureCells], np.ndarray, np.ndarray, np.ndarray | None]:
    """Every feature cut into cells by ``method`` (cuts from its value × class counts), and
    the rows as cell codes: (cells, codes per row and feature, class codes, weights or None)."""
    cells = [cells_of(grouped(ds, (f.name,)), f, method, bins) for f in ds.schema.features]
    if is_engine_table(ds):
        codes, y, w = ds.cell_table(tuple(c.feature for c in cells))
        return cells, codes, y, w
    return cells, np.stack([c.codes for c in cells], axis=1).astype(np.int32), ds.y, ds.weights
