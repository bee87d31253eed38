"""Feature and target descriptions stored in every model.

A feature is *numeric* (compared with thresholds and intervals) or *categorical*
(compared by equality with string levels). Missing values are kept as missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import polars as pl
import polars.selectors as cs


class Kind(StrEnum):
    NUMERIC = "numeric"
    CATEGORICAL = "categorical"


@dataclass(frozen=True, slots=True)
class Cuts:
    """Interior cut points of a discretised numeric column.

    ``right_closed`` intervals are ``(a, b]`` (the seeds' notation); otherwise ``[a, b)``.
    ``low``/``high`` are the training minimum and maximum, used only for labels.
    """

    column: str
    edges: tuple[float, ...]
    right_closed: bool = True
    low: float | None = None
    high: float | None = None
    method: str = ""


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    kind: Kind
    levels: tuple[str, ...] = ()
    cuts: Cuts | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """The predicted column: class labels are strings, in a fixed order (none for regression).

    ``bins`` holds the cut points when a numeric target was binned into classes
    (``--target-bins``); the same cuts turn the raw column into labels at evaluation.
    """

    name: str
    classes: tuple[str, ...]
    bins: Cuts | None = None

    @property
    def regression(self) -> bool:
        """A numeric target predicted as a number: it has no classes."""
        return not self.classes


@dataclass(frozen=True, slots=True)
class Schema:
    features: tuple[Feature, ...]
    target: Target

    def feature(self, name: str) -> Feature:
        for feature in self.features:
            if feature.name == name:
                return feature
        raise KeyError(name)

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)


def is_numeric_dtype(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() and dtype != pl.Boolean


def infer_kind(dtype: pl.DataType) -> Kind:
    """Numbers are numeric; strings, booleans, categoricals and anything else categorical."""
    return Kind.NUMERIC if is_numeric_dtype(dtype) else Kind.CATEGORICAL


def is_pattern(column: str) -> bool:
    """Names ``pl.col`` reads as a wildcard or a regular expression rather than a name."""
    return column == "*" or (column.startswith("^") and column.endswith("$"))


def col(column: str) -> pl.Expr:
    """The column named ``column``, literally, whatever characters the name holds."""
    return cs.by_name(column).as_expr() if is_pattern(column) else pl.col(column)


def numeric_expr(column: str) -> pl.Expr:
    """A column as Float64 with NaN read as missing, the one numeric view every stage uses."""
    return col(column).cast(pl.Float64).fill_nan(None)


def categorical_expr(column: str) -> pl.Expr:
    """A column as strings, the one categorical view every stage uses."""
    return col(column).cast(pl.String)


def normalize_missing(lf: pl.LazyFrame) -> pl.LazyFrame:
    """Read NaN in float columns as missing, so every stage sees one kind of missing value."""
    return lf.with_columns(cs.float().fill_nan(None))
