"""Feature and target descriptions stored in every model.

A feature is *numeric* (compared with thresholds and intervals) or *categorical*
(compared by equality with string levels). Missing values are kept as missing.
"""

from __future__ import annotations

import datetime as dt
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

    ``right_closed`` intervals are ``(a, b]`` (interval notation); otherwise ``[a, b)``.
    ``low``/``high`` are the training minimum and maximum, used only for labels.
    """

    column: str
    edges: tuple[float, ...]
    right_closed: bool = True
    low: float | None = None
    high: float | None = None
    method: str = ""


class Unit(StrEnum):
    """What a numeric feature's numbers count: days since 1970-01-01 (a date column), or
    seconds since 1970-01-01 00:00:00 (a date and time column). Rules compare the numbers;
    text and exports show them as dates."""

    DATE = "date"
    DATETIME = "datetime"


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    kind: Kind
    levels: tuple[str, ...] = ()
    cuts: Cuts | None = None
    unit: Unit | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """The predicted column: class labels are strings, in a fixed order (none for regression).

    ``bins`` holds the cut points when a numeric target was binned into classes
    (``--target-bins``); the same cuts turn the raw column into labels at evaluation.
    """

    name: str
    classes: tuple[str, ...]
    bins: Cuts | None = None
    # how a numeric column was read, as a number or as classes, and why ("integers of 14
    # values"): what typing decided on its own, recorded in the model
    reading: str | None = None

    @property
    def regression(self) -> bool:
        """A numeric target predicted as a number: it has no classes."""
        return not self.classes


@dataclass(frozen=True, slots=True)
class Schema:
    features: tuple[Feature, ...]
    target: Target
    # columns of the table not learned from, and why ("id", "levels"): what typing decided
    # on its own, recorded in the model (columns the user excluded are not listed)
    left_out: tuple[tuple[str, str], ...] = ()

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


# The name a Series is worked on under: Polars runs some Series methods as ``pl.col(name)``
# on a one-column frame, which a name such as ``^a.*$`` or ``*`` matches as a pattern.
PLAIN = "value"


def plain_column(frame: pl.DataFrame, column: str) -> pl.Series:
    """The column named ``column`` of ``frame`` as a Series named ``PLAIN``: the one way to
    take a column out of a frame to work on, so that no Series method reads its name as a
    pattern (``^a.*$``, ``*``)."""
    return frame.get_column(column).alias(PLAIN)


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


EPOCH = dt.datetime(1970, 1, 1)
# the unambiguous written forms a date or date-and-time column is recognised in (ISO 8601
# and year-first with slashes); "%.f" takes an optional fraction of a second
DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d")
DATETIME_FORMATS = (
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%dT%H:%M:%S%.fZ",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M",
    "%Y/%m/%d %H:%M:%S%.f",
)


def _as_text(column: str) -> pl.Expr:
    # a Date or Datetime column written out reads as one of the forms above
    return col(column).cast(pl.String).str.strip_chars()


def _dates(text: pl.Expr) -> pl.Expr:
    return pl.coalesce([text.str.to_date(f, strict=False) for f in DATE_FORMATS])


# a moment with a UTC offset (as a zoned Datetime column writes itself out) counts as its UTC time
ZONED_FORMATS = ("%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%dT%H:%M:%S%.f%z")


def _zoned(text: pl.Expr, form: str) -> pl.Expr:
    utc = text.str.to_datetime(form, strict=False, time_unit="us", time_zone="UTC")
    return utc.dt.replace_time_zone(None)


def _moments(text: pl.Expr) -> pl.Expr:
    parsed = [text.str.to_datetime(f, strict=False, time_unit="us") for f in DATETIME_FORMATS]
    zoned = [_zoned(text, f) for f in ZONED_FORMATS]
    return pl.coalesce([*parsed, *zoned, _dates(text).cast(pl.Datetime("us"))])


def temporal_expr(column: str, unit: Unit | str) -> pl.Expr:
    """A date or date-and-time column (as text, Date or Datetime) as the numbers its rules
    compare: days or seconds since 1970-01-01. A value in no known form is missing."""
    moment = _moments(_as_text(column))
    if unit == Unit.DATE:
        return moment.dt.date().cast(pl.Int32).cast(pl.Float64)
    return moment.dt.epoch("s").cast(pl.Float64)


def temporal_source(column: str, unit: Unit | str) -> str:
    """:func:`temporal_expr` as Polars source, for an export (``column``: the source of the
    column expression): the same forms, the same numbers."""
    text = f"{column}.cast(pl.String).str.strip_chars()"
    dates = ", ".join(f"{text}.str.to_date({f!r}, strict=False)" for f in DATE_FORMATS)
    times = ", ".join(f"{text}.str.to_datetime({f!r}, strict=False, time_unit='us')" for f in DATETIME_FORMATS)
    zoned = ", ".join(
        f"{text}.str.to_datetime({f!r}, strict=False, time_unit='us', time_zone='UTC').dt.replace_time_zone(None)"
        for f in ZONED_FORMATS
    )
    moment = f"pl.coalesce([{times}, {zoned}, pl.coalesce([{dates}]).cast(pl.Datetime('us'))])"
    if unit == Unit.DATE:
        return f"{moment}.dt.date().cast(pl.Int32).cast(pl.Float64)"
    return f"{moment}.dt.epoch('s').cast(pl.Float64)"


_FIRST = 1_000  # values a text column is first looked at for a date


def temporal_unit(series: pl.Series) -> Unit | None:
    """The unit of a column that holds dates (every value a date) or dates and times, or None."""
    if series.dtype == pl.Date:
        return Unit.DATE
    if isinstance(series.dtype, pl.Datetime):
        return Unit.DATETIME
    if series.dtype != pl.String:
        return None
    # a Series method runs as an expression on the Series' name: '^a.*$' would be a pattern
    present = series.alias(PLAIN).drop_nulls()

    def dated(text: pl.Series) -> bool:  # years 1000 to 2999: a quick refusal of most text columns
        return bool(text.str.strip_chars().str.contains(r"^[12]\d{3}[-/]\d").all())

    # the first values first: most text columns are refused there, and at once
    if present.len() == 0 or not dated(present.head(_FIRST)) or not dated(present):
        return None
    text = present.str.strip_chars()
    frame = text.to_frame("v")
    if frame.select(_dates(pl.col("v")).is_not_null().all()).item():
        return Unit.DATE
    if frame.select(_moments(pl.col("v")).is_not_null().all()).item():
        return Unit.DATETIME
    return None


def render_moment(value: float, unit: Unit | str) -> str:
    """A date feature's number as the date (or date and time, ISO 8601) it counts."""
    if unit == Unit.DATE:
        return (EPOCH + dt.timedelta(days=value)).date().isoformat()
    return (EPOCH + dt.timedelta(seconds=value)).isoformat(timespec="seconds")


def feature_expr(feature: Feature) -> pl.Expr:
    """A feature's column as learning reads it: numbers (dates counted in their unit) or text."""
    if feature.unit is not None:
        return temporal_expr(feature.name, feature.unit)
    return numeric_expr(feature.name) if feature.kind == Kind.NUMERIC else categorical_expr(feature.name)
