"""Row sets as packed bits: AND/ANDNOT and popcounts 64 rows per instruction."""

from __future__ import annotations

import sys

import numpy as np


def pack(mask: np.ndarray) -> np.ndarray:
    """A boolean mask as little-endian bits in uint64 words (padding bits are zero)."""
    packed = np.packbits(mask, bitorder="little")
    padded = np.zeros(-(-packed.size // 8) * 8, dtype=np.uint8)
    padded[: packed.size] = packed
    return padded.view(np.uint64)


def count(bits: np.ndarray) -> int:
    return int(np.bitwise_count(bits).sum())


def indices(bits: np.ndarray, n: int) -> np.ndarray:
    """Row numbers of the set bits, ascending: by the compiled kernel where a learner has
    loaded it (700,000 rows, half of them set: 5.1 ms unpacked and searched by NumPy, whose
    search guesses wrong at every other bit, against 0.5 ms)."""
    kernel = sys.modules.get("rulecli.counting.kernel")
    if kernel is not None:
        return kernel.set_bits(bits, count(bits))
    return np.flatnonzero(np.unpackbits(bits.view(np.uint8), count=n, bitorder="little"))


def test(bits: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether each of ``rows`` (indices) is set."""
    if rows.size * 16 > bits.size * 64:  # many rows: unpacking every bit once is cheaper
        return np.unpackbits(bits.view(np.uint8), bitorder="little").view(bool)[rows]
    return ((bits.view(np.uint8)[rows >> 3] >> (rows & 7).astype(np.uint8)) & 1).astype(bool)


def from_indices(rows: np.ndarray, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return pack(mask)


def weighted_counts(bits: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row of ``bits`` ((m, words) or (words,)), the sum of ``weights`` (n,) over its set
    bits; ``weights`` may be (k, n) for k sums at once."""
    n = weights.shape[-1]
    flat = np.atleast_2d(bits)
    mask = np.unpackbits(flat.view(np.uint8), axis=1, count=n, bitorder="little").astype(np.float64)
    out = mask @ weights.T
    return out[0] if bits.ndim == 1 else out
