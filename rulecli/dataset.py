"""Turn a raw table into a prepared training set: chosen features, typed columns, class labels.

Preparation never fills or drops missing feature values. Rows whose target is
missing cannot be learned from; they are left out and counted in a warning.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import shlex
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from rulecli.discretize import compute_cuts, interval_labels, label_expr
from rulecli.display import counted
from rulecli.errors import InputError, ParamError
from rulecli.params import DATA_PANEL, Params, param
from rulecli.schema import (
    PLAIN,
    Feature,
    Kind,
    Schema,
    Target,
    categorical_expr,
    feature_expr,
    infer_kind,
    is_numeric_dtype,
    numeric_expr,
    plain_column,
    temporal_expr,
    temporal_unit,
)
from rulecli.search.workers import cores
from rulecli.stats import class_groups, tallies, tally

MAX_CODES = 10  # an integer target of more values is a number (the digits 0-9 are ten classes)
COUNT_VALUES = 5  # integers from 0, 0 the most frequent: a count from this many values on
WIDE_VALUES = 4  # integers spread wide (1, 2, 10 may still be codes): a number from this many values on
REGRESSION_LIMIT = 300  # log10 of the largest sum of squares kept clear of float64's 1.8e308
ID_LIKE_MIN_ROWS = 20
# a text column whose values differ on at least this share of the rows holding one
# identifies rows (an ID, a free-text note): a rule on it fits single rows
ID_SHARE = 0.95
ID_NUMBERS_MIN_ROWS = 100  # whole numbers all different: a row number only on longer tables
# a text feature of more values is left out where its levels are thin (fewer than
# MIN_LEVEL_ROWS rows each on average: conditions no one can read, each level on a few
# rows) or past MAX_KEPT_LEVELS whatever the rows (a country or a state on a long table is kept)
MAX_TEXT_LEVELS = 50
MIN_LEVEL_ROWS = 20
MAX_KEPT_LEVELS = 1000
MAX_COPIES = 20_000_000  # rows a learner that copies weighted rows may make
THREADED_CELLS = 500_000  # rows x features from which the columns are prepared in threads


@dataclass(frozen=True, kw_only=True)
class DataSpec(Params):
    """Which columns to learn from and how to type them (declared once: the API's data
    keywords and every learner command's data options)."""

    target: str | None = param(None, "Target column (default: the last column).", short="y", panel=DATA_PANEL)
    features: tuple[str, ...] = param(
        (), "Use only these feature columns (repeat or comma-separate).", panel=DATA_PANEL
    )
    exclude: tuple[str, ...] = param((), "Leave these columns out.", panel=DATA_PANEL)
    categorical: tuple[str, ...] = param((), "Treat these columns as categorical.", panel=DATA_PANEL)
    numeric: tuple[str, ...] = param((), "Treat these columns as numeric.", panel=DATA_PANEL)
    target_bins: int | None = param(None, "Bin a numeric target into K quantile classes first.", ge=2, panel=DATA_PANEL)
    # None: the typing rule of target_reading decides
    target_type: str | None = param(
        None,
        "Predict the target as a number (trees, forests) or as classes; default: floats and integers of more "
        "than 10 values, spread wide or counting from 0 are numbers, anything else holds classes.",
        choices=("regression", "classification"),
        switches=True,
        panel=DATA_PANEL,
    )
    weights: str | None = param(
        None,
        "Weigh each row by this column (a weight k counts the row k times; 0 leaves it out).",
        metavar="COLUMN",
        panel=DATA_PANEL,
    )
    class_weight: str | None = param(
        None,
        "Weigh the rows of each class: 'balanced' (every class weighs the same in total) or e.g. 'yes=5,no=1'.",
        metavar="balanced|CLASS=W,...",
        panel=DATA_PANEL,
    )
    # also any column named in `features`
    use: tuple[str, ...] = param(
        (),
        "Use these columns even where they look like IDs or free text (left out by default).",
        metavar="COLUMN",
        panel=DATA_PANEL,
    )
    # not an option: the learner says whether it can predict a number (trees, forests)
    numeric_target: bool = False


class TargetView:
    """What a learner reads of the target off a table's ``schema``, wherever its rows are."""

    schema: Schema

    @property
    def classes(self) -> tuple[str, ...]:
        return self.schema.target.classes

    @property
    def target(self) -> str:
        return self.schema.target.name

    @property
    def regression(self) -> bool:
        return self.schema.target.regression


@dataclass(frozen=True)
class Dataset(TargetView):
    """Prepared training data.

    ``frame`` holds each feature as Float64 (numeric) or String (categorical) and the
    target as String class labels; ``y`` holds the class codes in ``schema.target.classes``
    order. A regression target (``schema.target.regression``) is Float64 in the frame and
    its values in ``y``.
    """

    frame: pl.DataFrame
    schema: Schema
    y: np.ndarray
    source: str = "<data>"
    warnings: tuple[str, ...] = field(default=())
    # each row's weight from the weight column (a weight k counts the row k times), or None
    row_weights: np.ndarray | None = None
    # each class's weight (`class_weight`), or None
    class_weights: np.ndarray | None = None
    # how the weights were given, for the model's record ("column w", "class weight balanced")
    weighting: str | None = None
    weight_column: str | None = None
    # each row's number in the table as read (before rows without a target or weight were
    # left out), or None when it is its position: what a sample drawn by hashing rows keys on
    row_ids: np.ndarray | None = None
    # columns as arrays, made once per dataset whichever learner (or analysis) asks first
    _arrays: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_rows(self) -> int:
        return self.frame.height

    @functools.cached_property
    def weights(self) -> np.ndarray | None:
        """The weight each row is learned with (its row weight times its class's), or None
        when every row counts once."""
        if self.row_weights is None and self.class_weights is None:
            return None
        w = np.ones(self.n_rows) if self.row_weights is None else self.row_weights
        if self.class_weights is not None:
            w = w * self.class_weights[self.y]
        return None if np.all(w == 1.0) else w

    @functools.cached_property
    def class_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows grouped by class, and each class's bounds among them (:func:`~rulecli.stats.class_groups`)."""
        return class_groups(self.y, len(self.classes))

    def class_counts(self) -> np.ndarray:
        """Rows of each class, each counted by its weight (whole numbers stay integers)."""
        return tallies(np.bincount(self.y, weights=self.weights, minlength=len(self.classes)))

    @property
    def total_weight(self) -> int | float:
        """The rows, each counted by its weight."""
        return self.n_rows if self.weights is None else tally(float(self.weights.sum()))

    def as_copies(self, learner: str) -> Dataset:
        """The rows repeated as often as their whole weights say: exactly the table a person
        would get by writing each row out k times (for what a learner draws at random)."""
        if self.weights is None:
            return self
        total = float(self.weights.sum())
        if total > MAX_COPIES:
            raise ParamError(
                f"the weights sum to {total:.3g} rows, more than {learner} draws from as copies of the rows "
                f"({MAX_COPIES:,}); scale them down (fractional weights are weighed without copies)"
            )
        rows = np.repeat(np.arange(self.n_rows), self.weights.astype(np.int64))
        # numbered as the written-out table numbers them, so hashed samples draw as from it
        return dataclasses.replace(self.subset(rows), row_weights=None, class_weights=None, row_ids=None)

    def numeric(self, name: str, *, keep: bool = True) -> np.ndarray:
        """A numeric feature as float64 with NaN for missing (read-only, shared). ``keep``:
        held for the next caller; without it, made for one use (by a caller that keeps a
        compact form of its own) unless it is held already."""
        # no copy where the column is already float64 without nulls: a view of the frame's buffer
        return self._array(
            "numeric", name, lambda: np.asarray(plain_column(self.frame, name).to_numpy(), np.float64), keep
        )

    def codes(self, name: str, *, keep: bool = True) -> np.ndarray:
        """A categorical feature as level codes; missing is ``len(levels)`` (read-only, shared;
        ``keep`` as for :meth:`numeric`)."""

        def encode() -> np.ndarray:
            levels = self.schema.feature(name).levels
            codes = plain_column(self.frame, name).cast(pl.Enum(list(levels))).to_physical()
            return codes.fill_null(len(levels)).to_numpy().astype(np.int64)

        return self._array("codes", name, encode, keep)

    def _array(self, kind: str, name: str, make: Callable[[], np.ndarray], keep: bool) -> np.ndarray:
        key = (kind, name)
        if key in self._arrays:
            return self._arrays[key]
        array = make()
        array.setflags(write=False)  # shared by every caller: nobody may change it
        if keep:
            self._arrays[key] = array
        return array

    def subset(self, rows: np.ndarray) -> Dataset:
        """The same schema over a subset of rows (for validation splits and CV folds)."""
        index = pl.Series(rows.astype(np.int64))
        return Dataset(
            self.frame[index],
            self.schema,
            self.y[rows],
            self.source,
            self.warnings,
            None if self.row_weights is None else self.row_weights[rows],
            self.class_weights,
            self.weighting,
            self.weight_column,
            rows if self.row_ids is None else self.row_ids[rows],
        )

    @property
    def ids(self) -> np.ndarray:
        """Each row's number in the table as read (see ``row_ids``)."""
        return np.arange(self.n_rows) if self.row_ids is None else self.row_ids


def check_columns(columns: Sequence[str], names: Sequence[str], source: str, option: str) -> None:
    """Each of ``names`` (given with ``option``) is one of ``columns``, or one error naming it."""
    for name in names:
        if name not in columns:
            close = difflib.get_close_matches(name, columns, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise InputError(
                f"{source}: column '{name}' given with {option} is not in the data "
                f"({hint}columns: {', '.join(columns)})"
            )


def _sorted_labels(series: pl.Series) -> tuple[str, ...]:
    """Distinct values in a stable order: declared (ARFF/Enum), numeric, or alphabetical."""
    distinct = series.drop_nulls().unique()
    if isinstance(series.dtype, pl.Enum):
        present = set(distinct.cast(pl.String).to_list())
        return tuple(c for c in series.dtype.categories.to_list() if c in present)
    if is_numeric_dtype(distinct.dtype):
        distinct = distinct.sort()
        return tuple(distinct.cast(pl.String).to_list())
    return tuple(sorted(distinct.cast(pl.String).to_list()))


def target_reading(column: pl.Series, spec: DataSpec) -> tuple[bool, str | None]:
    """Whether a target is a number, and why, for a numeric column read on its own. Floats
    are numbers; integers are numbers where they have more than ``MAX_CODES`` values, are
    spread wider than codes are (four values or more, and at least twice as many numbers
    between the least and the greatest as values: dollars 0, 5, 10, 25, 100), or count something (0 the most frequent
    of five values or more: visits, children); other integers (0/1, ratings 1-5, the digits
    0-9) are class codes. Text and booleans hold classes. ``target_type`` (and ``categorical``,
    ``target_bins``) decide instead."""
    if spec.target_type is not None:
        return spec.target_type == "regression", f"`target_type={spec.target_type}`"
    if spec.target_bins is not None or column.name in spec.categorical or not is_numeric_dtype(column.dtype):
        return False, None
    if column.dtype.is_float():
        return True, "floats"
    values, frequencies = np.unique(column.drop_nulls().to_numpy(), return_counts=True)
    n = values.size
    if n > MAX_CODES:
        return True, f"integers of {n} values"
    if n >= WIDE_VALUES and int(values[-1]) - int(values[0]) >= 2 * n:
        return True, f"integers of {n} values from {values[0]} to {values[-1]}"
    if n >= COUNT_VALUES and values[0] == 0 and frequencies[0] > frequencies[1:].max():
        return True, f"counts (integers of {n} values, 0 the most frequent)"
    return False, f"integer codes of {n} values"


def _prepare_target(
    df: pl.DataFrame, name: str, spec: DataSpec, source: str, weights: np.ndarray | None = None
) -> tuple[pl.Series, Target]:
    column = plain_column(df, name)
    if spec.target_type == "regression" and not spec.numeric_target:
        raise ParamError(
            "`target_type=regression`: this learner predicts classes (ripper, cn2, tree, forest and m5rules "
            "predict numbers)"
        )
    if spec.target_type == "regression" and not is_numeric_dtype(column.dtype):
        raise InputError(f"{source}: `target_type=regression` needs a numeric target, but '{name}' is {column.dtype}")
    number, reading = target_reading(column, spec)
    if number and spec.target_bins is None:
        if not spec.numeric_target:
            raise InputError(
                f"{source}: target '{name}' holds {reading}, a number this learner cannot predict; pass "
                "`target_bins` K to bin it into K classes, `target_type=classification` to read its values as "
                "classes, or use ripper, cn2, tree, forest or m5rules"
            )
        values = _to_numeric(df, name, source)
        if values.drop_nulls().n_unique() < 2:
            raise InputError(f"{source}: target column '{name}' has a single value; there is nothing to learn")
        return values.alias(name), Target(name, (), reading=reading)
    if spec.target_bins is not None:
        if not is_numeric_dtype(column.dtype):
            raise InputError(f"{source}: `target_bins` needs a numeric target, but '{name}' is {column.dtype}")
        values = df.select(numeric_expr(name)).to_series().to_numpy().astype(np.float64)
        cuts = compute_cuts(name, values, "equal-frequency", bins=spec.target_bins, weights=weights)
        labels = df.select(label_expr(cuts)).to_series()
        classes = tuple(c for c in interval_labels(cuts) if c in set(labels.drop_nulls().to_list()))
        return labels, Target(name, classes, cuts)
    labels = df.select(categorical_expr(name)).to_series()
    return labels, Target(name, _sorted_labels(column), reading=reading)


def _stray_text_in_numbers(series: pl.Series, levels: tuple[str, ...]) -> str | None:
    """The first non-number in a text column whose values are otherwise (>= 90 %) numbers."""
    # its levels first: where every one is a number or none is (nearly every column), no row
    # need be parsed (4 columns of 1,000,000 rows: 123 ms)
    numbers = pl.Series(levels, dtype=pl.String).str.strip_chars().cast(pl.Float64, strict=False)
    if numbers.null_count() in (0, len(levels)):
        return None
    present = series.drop_nulls()
    if present.len() < 2:
        return None
    parsed = present.str.strip_chars().cast(pl.Float64, strict=False)
    bad = present.filter(parsed.is_null())
    if bad.len() == 0 or bad.len() > 0.1 * present.len():
        return None
    return str(bad[0])


def _feature_names(df: pl.DataFrame, target: str, spec: DataSpec, source: str) -> list[str]:
    check_columns(df.columns, spec.features, source, "`features`")
    check_columns(df.columns, spec.exclude, source, "`exclude`")
    check_columns(df.columns, spec.categorical, source, "`categorical`")
    check_columns(df.columns, spec.numeric, source, "`numeric`")
    check_columns(df.columns, spec.use, source, "`use`")
    both = set(spec.categorical) & set(spec.numeric)
    if both:
        raise ParamError(f"column '{sorted(both)[0]}' is given with both `categorical` and `numeric`")
    chosen = list(spec.features) if spec.features else list(df.columns)
    return [c for c in chosen if c != target and c not in spec.exclude and c != spec.weights]


def _as_numbers(df: pl.DataFrame, name: str) -> tuple[pl.Series, object | None]:
    """The column as Float64 (text parsed as numbers), and the first value that is not one."""
    column = df.get_column(name).alias(PLAIN)
    if is_numeric_dtype(column.dtype):
        return column.cast(pl.Float64), None
    converted = column.cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False)
    bad = column.filter(converted.is_null() & column.is_not_null())
    return converted, (bad[0] if bad.len() else None)


def _to_numeric(df: pl.DataFrame, name: str, source: str) -> pl.Series:
    converted, bad = _as_numbers(df, name)
    if bad is not None:
        raise InputError(f"{source}: column '{name}' is numeric but holds the value {bad!r}")
    if converted.is_infinite().any():
        raise InputError(
            f"{source}: column '{name}' holds an infinite value; rulecli reads NaN and empty "
            "fields as missing but cannot learn from ±inf"
        )
    return converted.fill_nan(None)


def prepare_dataset(
    df: pl.DataFrame, spec: DataSpec, *, source: str = "<data>", profile: Mapping[str, tuple[int, int]] | None = None
) -> Dataset:
    """Select, type and label the columns of a raw table for learning. ``profile`` gives
    columns' (distinct values, values present) on the whole table where ``df`` holds only
    some of its values (an engine's profile)."""
    if df.width == 0 or df.height == 0:
        raise InputError(f"{source}: no data rows")
    if len(set(df.columns)) != len(df.columns):
        raise InputError(f"{source}: duplicate column names")
    target_name = spec.target if spec.target is not None else df.columns[-1]
    check_columns(df.columns, [target_name], source, "`target`")
    warnings: list[str] = []
    if spec.weights == target_name:
        raise ParamError(f"`weights` {quoted(spec.weights)}: that is the target column")
    weights = None if spec.weights is None else read_weights(df, spec.weights, source)
    ids = None
    if weights is not None and not (weights > 0).all():
        # a row of weight 0 is a row left out: left out before anything is learned from the table
        ids = np.flatnonzero(weights > 0)
        df, weights = df.filter(pl.Series(weights > 0)), weights[weights > 0]
    df, kept_rows = _drop_missing_target(df, target_name, source, warnings)
    if kept_rows is not None:
        ids = np.flatnonzero(kept_rows) if ids is None else ids[kept_rows]
        weights = None if weights is None else weights[kept_rows]
    labels, target = _prepare_target(df, target_name, spec, source, weights)
    if not target.regression and len(target.classes) < 2:
        raise InputError(
            f"{source}: target column '{target_name}' has a single class "
            f"({target.classes[0]!r}); there is nothing to learn"
        )
    prepared, notes = _prepare_features(df, _feature_names(df, target_name, spec, source), spec, source, profile)
    warnings.extend(_summarised(notes, source))
    left_out = tuple((name, LEFT_OUT[kind]) for kind, name, _ in notes if kind in LEFT_OUT)
    kept = [p for p in prepared if p is not None]
    if not kept:
        hint = ""
        if df.width == 1 and any(sep in target_name for sep in ";|"):
            hint = " (is the file separated by ';' or '|'? rulecli reads ',' for CSV and tabs for TSV)"
        raise InputError(f"{source}: no usable feature columns besides the target '{target_name}'{hint}")
    if target.regression:
        codes = labels.to_numpy().astype(np.float64)
        _check_summable(codes, target_name, source)
    else:
        codes = labels.cast(pl.Enum(list(target.classes))).to_physical().to_numpy().astype(np.int64)
    per_class = None
    if spec.class_weight is not None:
        if target.regression:
            raise ParamError("`class_weight` weighs classes, but this target is a number")
        per_class = _class_weights(spec.class_weight, target.classes, codes, weights)
    frame = pl.DataFrame([*(series for series, _ in kept), labels.alias(target_name)])
    schema = Schema(tuple(feature for _, feature in kept), target, left_out)
    return Dataset(
        frame, schema, codes, source, tuple(warnings), weights, per_class, _weighting(spec), spec.weights, ids
    )


MAX_WEIGHT_SUM = 1e15  # weighted counts stay exact integers below 2^53


def read_weights(df: pl.DataFrame, name: str, source: str, purpose: str = "learn") -> np.ndarray:
    """The weight column as float64: finite numbers of at least 0 on every row."""
    check_columns(df.columns, [name], source, "`weights`")
    values, bad = _as_numbers(df, name)
    if bad is not None:
        raise InputError(f"{source}: weight column '{name}' holds {str(bad)!r}, which is not a number")
    w = values.fill_null(float("nan")).to_numpy().astype(np.float64)
    missing = np.isnan(w)
    if missing.any():
        row = int(np.argmax(missing)) + 1
        raise InputError(
            f"{source}: weight column '{name}' has no value on data row {row}; "
            "every row needs a weight (0 leaves it out)"
        )
    wrong = ~np.isfinite(w) | (w < 0)
    if wrong.any():
        row = int(np.argmax(wrong)) + 1
        raise InputError(
            f"{source}: weight column '{name}' holds {w[row - 1]:g} on data row {row}; weights are finite numbers "
            "of at least 0"
        )
    if not (w > 0).any():
        raise InputError(f"{source}: every weight in '{name}' is 0; there is nothing to {purpose}")
    if w.sum() > MAX_WEIGHT_SUM:
        raise InputError(f"{source}: the weights in '{name}' sum to {w.sum():.3g}; rescale them (below 1e15)")
    return w


def _class_weights(text: str, classes: tuple[str, ...], y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Each class's weight: 'balanced' (every class weighs as much in total), or 'a=2,b=1'
    (classes not named weigh 1)."""
    if text == "balanced":
        totals = np.bincount(y, weights=weights, minlength=len(classes)).astype(np.float64)
        return totals.sum() / (len(classes) * np.where(totals > 0, totals, 1.0))
    out = np.ones(len(classes))
    for part in text.split(","):
        label, equals, value = part.strip().rpartition("=")
        if not equals or not label:
            raise ParamError(f"`class_weight` takes 'balanced' or CLASS=WEIGHT pairs such as a=2,b=1, got {part!r}")
        if label not in classes:
            raise ParamError(f"`class_weight`: '{label}' is not a class of the target (classes: {', '.join(classes)})")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not (math.isfinite(number) and number > 0):
            raise ParamError(f"`class_weight`: the weight of '{label}' must be a number above 0, got {value!r}")
        out[classes.index(label)] = number
    return out


def _weighting(spec: DataSpec) -> str | None:
    parts = ([f"column {spec.weights}"] if spec.weights is not None else []) + (
        [f"class weight {spec.class_weight}"] if spec.class_weight is not None else []
    )
    return " and ".join(parts) or None


def _check_summable(y: np.ndarray, name: str, source: str) -> None:
    """Leaf means and squared errors sum the target's squares; past ~1e150 they overflow."""
    largest = float(np.abs(y).max())
    if largest > 0 and 2 * math.log10(largest) + math.log10(y.size) > REGRESSION_LIMIT:
        raise InputError(
            f"{source}: target column '{name}' holds values up to {largest:.3g} in size, too large to "
            "average and square; rescale it (e.g. to other units)"
        )


def missing_target_warning(source: str, target: str, n_missing: int) -> str:
    verb = "is" if n_missing == 1 else "are"
    return f"{source}: {counted(n_missing, 'row')} with a missing '{target}' {verb} left out"


def _drop_missing_target(
    df: pl.DataFrame, target_name: str, source: str, warnings: list[str]
) -> tuple[pl.DataFrame, np.ndarray | None]:
    """Rows without a target value cannot be learned from: left out, with a warning (and
    the rows kept, or None when all are)."""
    target_column = plain_column(df, target_name)
    missing_target = target_column.is_null()
    if target_column.dtype.is_float():
        missing_target = missing_target | target_column.is_nan().fill_null(False)
    n_missing = int(missing_target.sum())
    if n_missing == df.height:
        raise InputError(f"{source}: target column '{target_name}' has no values")
    if n_missing:
        warnings.append(missing_target_warning(source, target_name, n_missing))
        return df.filter(~missing_target), (~missing_target).to_numpy()
    return df, None


def _prepare_features(
    df: pl.DataFrame, names: list[str], spec: DataSpec, source: str, profile: Mapping[str, tuple[int, int]] | None
) -> tuple[list[tuple[pl.Series, Feature] | None], list[tuple[str, str, str]]]:
    """Each named column typed for learning (None where it is of no use), and the notes
    on them in column order."""

    def prepare(name: str) -> tuple[tuple[pl.Series, Feature] | None, list[tuple[str, str, str]]]:
        mine: list[tuple[str, str, str]] = []
        return _prepare_feature(df, name, spec, source, mine, (profile or {}).get(name)), mine

    if df.height * len(names) < THREADED_CELLS:
        done = [prepare(name) for name in names]
    else:
        # Polars types, parses and counts without holding the GIL: the columns are prepared
        # on every core (1,000,000 rows x 20 features: 0.95 s -> 0.61 s)
        with ThreadPoolExecutor(cores()) as pool:
            done = list(pool.map(prepare, names))
    return [feature for feature, _ in done], [note for _, mine in done for note in mine]


def _prepare_feature(
    df: pl.DataFrame,
    name: str,
    spec: DataSpec,
    source: str,
    notes: list[tuple[str, str, str]],
    counted: tuple[int, int] | None = None,
) -> tuple[pl.Series, Feature] | None:
    """A feature column typed for learning, or None (with a note: kind, column, message)
    when it is of no use. ``counted``: the column's (distinct values, values present) on
    the whole table, where ``df`` holds only some of its values."""
    kind = infer_kind(df.schema[name])
    unit = None if name in spec.categorical else temporal_unit(plain_column(df, name))
    if name in spec.categorical:
        kind = Kind.CATEGORICAL
    elif name in spec.numeric or unit is not None:
        kind = Kind.NUMERIC
    levels: tuple[str, ...] = ()
    stray = None
    if unit is not None:  # dates are ordered: compared as the days (or seconds) they count
        series = df.select(temporal_expr(name, unit)).to_series().alias(PLAIN)
    elif kind == Kind.NUMERIC:
        series = _to_numeric(df, name, source).alias(PLAIN)
    else:
        series = df.select(categorical_expr(name)).to_series().alias(PLAIN)
        levels = _sorted_labels(plain_column(df, name))
        stray = _stray_text_in_numbers(series, levels)
        if stray is not None:
            notes.append(
                (
                    "stray",
                    f"{name} ({stray!r})",
                    f"column '{name}' looks numeric but holds {stray!r}; it is read as categorical (pass "
                    f"`numeric` {quoted(name)} to refuse such values, or `null_values` {quoted(stray)} if it marks a "
                    "missing one)",
                )
            )
    n_distinct = _distinct_count(series, exact=kind == Kind.CATEGORICAL or df.schema[name].is_integer())
    distinct, present = counted or (n_distinct, series.len() - series.null_count())
    if distinct == 0:
        notes.append(("empty", name, f"column '{name}' has no values; skipped"))
        return None
    if n_distinct == 1 and series.null_count() == 0:
        notes.append(("constant", name, f"column '{name}' is constant; skipped"))
        return None
    # numbers with a stray word are measurements, never IDs (though they may hold too many values)
    reason = None if name in spec.use or name in spec.features else _left_out(df, name, kind, distinct, present)
    if reason == "id" and stray is not None:
        reason = "levels" if distinct > MAX_TEXT_LEVELS else None
    if reason is not None:
        notes.append((reason, name, LEFT_OUT_MESSAGE[reason].format(name=name, distinct=distinct, use=quoted(name))))
        return None
    return series.alias(name), Feature(name, kind, levels, unit=unit)


def quoted(name: str) -> str:
    """A column name as a shell word: pasted after an option, it names that column."""
    return shlex.quote(name)


def _distinct_count(series: pl.Series, *, exact: bool) -> int:
    """The column's distinct present values: counted where exact (what :func:`_left_out`
    reads for text and whole numbers), else 0, 1 or 2 for none, one, or more than one (all
    that tells an empty or constant column apart; 16 columns of 1,000,000 decimals: 0.21-0.32
    s counted, 0.04 s by their least and greatest)."""
    present = series.drop_nulls()
    if exact or present.len() == 0:
        return present.n_unique()
    return 1 if present.min() == present.max() else 2


def _left_out(df: pl.DataFrame, name: str, kind: Kind, distinct: int, present: int) -> str | None:
    """Why a usable column is no feature ("id", "levels"), or None: text that differs on
    (nearly) every row, whole numbers that number the rows, text of too many values."""
    if kind == Kind.CATEGORICAL:
        if present >= ID_LIKE_MIN_ROWS and distinct >= ID_SHARE * present:
            return "id"
        return "levels" if too_many_levels(distinct, present) else None
    dtype = df.schema[name]
    if not dtype.is_integer() or present < ID_NUMBERS_MIN_ROWS or distinct < ID_SHARE * present:
        return None
    # (nearly) every value different and spread over no more than twice as many numbers as
    # rows: counted out, as IDs are (a measurement as varied is spread far wider)
    low, high = plain_column(df, name).min(), plain_column(df, name).max()
    return "id" if int(high) - int(low) < 2 * present else None  # type: ignore[arg-type]


def too_many_levels(distinct: int, present: int) -> bool:
    """Text of ``distinct`` values on ``present`` rows is too varied to learn from."""
    return distinct > MAX_TEXT_LEVELS and (distinct > MAX_KEPT_LEVELS or present < MIN_LEVEL_ROWS * distinct)


LEFT_OUT = {"id": "identifies rows", "levels": "too many levels"}
LEFT_OUT_MESSAGE = {
    "id": "column '{name}' has a different value on (nearly) every row (an ID or free text?): left out "
    "(`use` {use} uses it)",
    "levels": "column '{name}' has {distinct:,} distinct values, too many for readable rules: left out "
    f"(more than {MAX_TEXT_LEVELS} are kept only with {MIN_LEVEL_ROWS} rows a value, up to {MAX_KEPT_LEVELS:,}; "
    "`use` {use} uses it)",
}
SUMMARY = {
    "empty": "{count} columns have no values; skipped: {names}",
    "constant": "{count} columns are constant; skipped: {names}",
    "id": "{count} columns have a different value on (nearly) every row (IDs or free text?): left out "
    "(`use` NAME uses one): {names}",
    "levels": f"{{count}} columns have more than {MAX_TEXT_LEVELS} distinct values on too few rows each: left out "
    "(`use` NAME uses one): {names}",
    "stray": "{count} columns look numeric but hold text; read as categorical (see `numeric`, `null_values`): {names}",
}
NAMED = 3  # a summary names this many columns, then counts the rest


def _summarised(notes: list[tuple[str, str, str]], source: str) -> list[str]:
    """One line per column, or, past a few of one kind, one line per kind with a count."""
    out = []
    for kind, template in SUMMARY.items():
        mine = [(name, message) for k, name, message in notes if k == kind]
        if len(mine) <= NAMED:
            out += [f"{source}: {message}" for _, message in mine]
            continue
        names = ", ".join(f"'{n}'" for n, _ in mine[:NAMED]) + f" and {len(mine) - NAMED} more"
        out.append(f"{source}: " + template.format(count=len(mine), names=names))
    return out


def target_label_expr(target: Target) -> pl.Expr:
    """The raw target column as class labels, exactly as training made them."""
    if target.bins is not None:
        return label_expr(target.bins).alias(target.name)
    return categorical_expr(target.name)


def stratified_folds(y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Fold number ``0..k-1`` per row; each class is shuffled and dealt round-robin. A
    numeric target (float ``y``) is dealt in its sorted order, each run of ``k`` neighbouring
    values one to a fold in a random order, so that every fold spans the target's range."""
    rng = np.random.default_rng(seed)
    if y.dtype.kind == "f":
        order = np.lexsort((rng.random(y.size), y))  # ties in a random order
        blocks = -(-y.size // k)
        folds = np.empty(y.size, dtype=np.int64)
        folds[order] = rng.random((blocks, k)).argsort(axis=1).ravel()[: y.size]
        return folds
    folds = np.empty(y.size, dtype=np.int64)
    offset = 0
    for cls in np.unique(y):
        rows = np.flatnonzero(y == cls)
        rng.shuffle(rows)
        folds[rows] = (np.arange(rows.size) + offset) % k
        offset += rows.size
    return folds


def stratified_holdout(y: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split row indices into (train, held-out), holding out ``fraction`` of each class."""
    rng = np.random.default_rng(seed)
    held = np.zeros(y.size, dtype=bool)
    for cls in np.unique(y):
        rows = np.flatnonzero(y == cls)
        rng.shuffle(rows)
        held[rows[: round(fraction * rows.size)]] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def dataset_with_schema(
    df: pl.DataFrame,
    schema: Schema,
    source: str,
    *,
    row_weights: np.ndarray | None = None,
    row_ids: np.ndarray | None = None,
) -> Dataset:
    """Rows of a table already typed once (an engine's sample or grouped counts) as a
    Dataset under that ``schema``: features read as training reads them, the target as its
    class codes (or its numbers), the levels and classes those of the whole table."""
    columns = [df.select(feature_expr(f)).to_series() for f in schema.features]
    if schema.target.regression:
        labels = df.select(numeric_expr(schema.target.name)).to_series()
        y = labels.to_numpy().astype(np.float64)
    else:
        labels = df.select(categorical_expr(schema.target.name)).to_series()
        y = labels.cast(pl.Enum(list(schema.target.classes))).to_physical().to_numpy().astype(np.int64)
    frame = pl.DataFrame([*columns, labels])
    return Dataset(frame, schema, y, source, (), row_weights, None, None, None, row_ids)
