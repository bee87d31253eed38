"""Arrays of numbers as the JSON texts Python's ``json`` writes for them, made a column at a time.

A forest's file holds millions of numbers: written one at a time through Python, 100
trees of 1.5 million nodes took 4 s. Polars writes a float as Python's ``repr`` does (the
shortest digits that read back, ".0" on a whole number) from 1e-4 up to 1e16, and
positionally below, where ``repr`` takes an exponent. Values outside that range, and any
value this module cannot show it writes exactly as Python does, are written by Python;
:func:`polars_writes_repr` checks Polars' side once per process.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

# where Polars' text of a float is repr's: from 1e-4 (repr's first positional power) to 1e16
_LOW, _HIGH = 1e-4, 1e16
# 10**k is exact in a double up to here, so one product or quotient by it is correctly rounded
_EXACT_POWER = 22
# ten significant digits: the cut of impurities and gains (see :func:`short_texts`)
_DIGITS = 10


def float_text(value: float) -> str:
    """As ``json`` writes a float (its repr); JSON has no NaN or infinity."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no JSON number")
    return float.__repr__(value)


def count_text(value: float) -> str:
    """A whole number as an integer (counts), any other as a float (weighted rows)."""
    return str(int(value)) if value == math.floor(value) else float_text(value)


def short_text(value: float) -> str:
    """``value`` cut to ten significant digits, written as ``json`` writes the float the cut
    reads back as: its repr, which has the cut's digits (ten name one double), so only the
    style can differ: repr adds ".0" to a whole number and writes exponents from 10 to 15 out."""
    if value == 0:
        return float_text(value)
    cut = f"{value:.{_DIGITS}g}"
    if "e" in cut:
        return cut if int(cut.rsplit("e", 1)[1]) < 0 else float_text(float(cut))
    return cut if "." in cut else cut + ".0"


@functools.cache
def polars_writes_repr() -> bool:
    """Whether this Polars writes floats in [1e-4, 1e16) as repr does (checked on values whose
    digits or style are easy to get wrong); if not, every float is written by Python."""
    probe = [0.0, -0.0, 1e-4, 0.00012345, 0.1, 1 / 3, -2 / 3, 1.0, 100.0, 1234567.0, 0.30000000000000004]
    probe += [2.0**-13, 123456789.12345679, 9007199254740993.0, 9999999999999998.0, 5e15, 1.7976931348623157e15]
    return pl.Series(probe, dtype=pl.Float64).cast(pl.String).to_list() == [float_text(v) for v in probe]


def int_texts(values: np.ndarray) -> pl.Series:
    return pl.Series(values, dtype=pl.Int64).cast(pl.String)


def bool_texts(values: np.ndarray) -> pl.Series:
    return pl.Series(values, dtype=pl.Boolean).cast(pl.String)  # "true", "false"


def float_texts(values: np.ndarray) -> pl.Series:
    """Each value's :func:`float_text` (a non-finite one raises ValueError)."""
    size = np.abs(values)
    by_polars = ((size >= _LOW) & (size < _HIGH)) | (values == 0)
    return _texts(values, by_polars & polars_writes_repr(), pl.Series(values).cast(pl.String), float_text)


def count_texts(values: np.ndarray) -> pl.Series:
    """Each value's :func:`count_text`."""
    whole = np.isfinite(values) & (values == np.floor(values)) & (np.abs(values) < 2.0**53)
    return _texts(values, whole, int_texts(np.where(whole, values, 0).astype(np.int64)), count_text)


def short_texts(values: np.ndarray) -> pl.Series:
    """Each value's :func:`short_text` (a forest's impurities and gains repeat: each
    distinct value is written once)."""
    distinct, where = _distinct(values)
    return _short_texts(distinct).gather(where)


def _short_texts(values: np.ndarray) -> pl.Series:
    """Each value's :func:`short_text`, cut by integer arithmetic where that is exact.

    A value v of decimal exponent e is scaled by 10**(9 - e) into [1e9, 1e10) and rounded
    to the integer q: q's digits are the cut's, and q / 10**(9 - e) is the double the cut
    reads back as, rounded once (both powers of ten exact). The scaling rounds once too, so
    a value whose scaled fraction lies near one half, where that rounding could flip q,
    is cut by Python, as are zeros and values too small or large for exact powers."""
    size = np.abs(values)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        exponent = np.floor(np.log10(size))
        fits = np.isfinite(exponent) & (np.abs(_DIGITS - 1 - exponent) <= _EXACT_POWER - 1)
        exponent = np.where(fits, exponent, 0).astype(np.int64)
        shift = _DIGITS - 1 - exponent
        power = 10.0 ** np.abs(shift)
        scaled = np.where(shift >= 0, size * power, size / power)
        fraction = scaled - np.floor(scaled)
    fits &= (scaled >= 10.0 ** (_DIGITS - 1)) & (scaled < 10.0**_DIGITS) & (np.abs(fraction - 0.5) > 1e-4)
    q = np.where(fits, np.floor(scaled + 0.5), 10.0 ** (_DIGITS - 1))
    carried = q == 10.0**_DIGITS  # 9.9999999996 cuts to 10.00000000
    q[carried] = 10.0 ** (_DIGITS - 1)
    exponent += carried
    shift -= carried
    cut = np.copysign(np.where(shift >= 0, q / 10.0 ** np.abs(shift), q * 10.0 ** np.abs(shift)), values)
    positional = (exponent >= -4) & (exponent < 16)
    written = pl.Series(cut).cast(pl.String)
    far = np.flatnonzero(fits & ~positional)
    if far.size:
        written = written.scatter(far, _scientific(q[far], exponent[far], values[far] < 0))
    return _texts(values, fits & (~positional | polars_writes_repr()), written, short_text)


def _scientific(q: np.ndarray, exponent: np.ndarray, negative: np.ndarray) -> pl.Series:
    """repr's text of q's digits (trailing zeros dropped) times 10**exponent, as 1.5e-05."""
    digits = int_texts(q.astype(np.int64)).str.strip_chars_end("0")
    frame = pl.DataFrame({"digits": digits, "exponent": exponent, "negative": negative})
    return frame.select(
        pl.concat_str(
            pl.when(pl.col("negative")).then(pl.lit("-")).otherwise(pl.lit("")),
            pl.col("digits").str.head(1),
            pl.when(pl.col("digits").str.len_chars() > 1).then(pl.lit(".")).otherwise(pl.lit("")),
            pl.col("digits").str.slice(1),
            pl.when(pl.col("exponent") < 0).then(pl.lit("e-")).otherwise(pl.lit("e+")),
            pl.col("exponent").abs().cast(pl.String).str.zfill(2),
        )
    ).to_series()


def _texts(values: np.ndarray, ours: np.ndarray, written: pl.Series, text: Callable[[float], str]) -> pl.Series:
    """``written`` where ``ours``, else ``text`` of the value (each distinct one once)."""
    rest = np.flatnonzero(~ours)
    if rest.size:
        distinct, where = _distinct(values[rest])
        texts = np.array([text(v) for v in distinct.tolist()], dtype=object)[where]
        written = written.scatter(rest, pl.Series(texts, dtype=pl.String))
    return written


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (by their bits: -0.0 is written apart from 0.0) and where each
    value is among them."""
    bits, where = np.unique(np.ascontiguousarray(values, dtype=np.float64).view(np.int64), return_inverse=True)
    return bits.view(np.float64), where.reshape(-1)


def arrays(texts: pl.Series, sizes: Sequence[int]) -> list[str]:
    """Runs of ``texts`` (ASCII), ``sizes[k]`` in the k-th, each as a JSON array: all joined
    at once and the runs cut out of the one string (a join per run took three times as long)."""
    if not texts.len():
        return ["[]" for _ in sizes]
    joined = texts.str.join(",").item()
    # the text of run k ends at the comma after its last text (or at the end of the string)
    stops = np.concatenate([[0], np.cumsum(texts.str.len_bytes().to_numpy().astype(np.int64) + 1)])[np.cumsum(sizes)]
    starts = np.concatenate([[0], stops[:-1]])
    return [
        "[" + joined[a : b - 1] + "]" if a < b else "[]" for a, b in zip(starts.tolist(), stops.tolist(), strict=True)
    ]


def rows(columns: Sequence[pl.Series]) -> pl.Series:
    """Each row of ``columns`` as a JSON array."""
    frame = pl.DataFrame({str(k): c for k, c in enumerate(columns)})
    return frame.select(pl.concat_str(pl.lit("["), pl.concat_str(pl.all(), separator=","), pl.lit("]"))).to_series()
