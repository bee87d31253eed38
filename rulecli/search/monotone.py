"""Monotone constraints: which way each feature may move a model's prediction, and the
pooling that makes a rule list's probabilities follow its rules' order."""

from __future__ import annotations

import numpy as np

from rulecli.dataset import Dataset
from rulecli.engines import EngineTable
from rulecli.errors import ParamError
from rulecli.schema import Kind


def monotone_signs(text: str | None, ds: Dataset | EngineTable) -> tuple[int, ...] | None:
    """``'age:+,debt:-'`` as a sign per feature in the table's order (+1 rising, -1 falling,
    0 free); None for no constraints. Only a number or a date has an order, and only a
    numeric target or two classes have one prediction to constrain."""
    if text is None or not text.strip():
        return None
    if not ds.regression and len(ds.classes) > 2:
        raise ParamError(
            f"needs a numeric target or two classes; '{ds.target}' has {len(ds.classes)} "
            "(one class's share can only rise if others fall)",
            param="monotone",
        )
    signs = dict.fromkeys(ds.schema.feature_names, 0)
    for item in text.split(","):
        name, _, sign = item.strip().rpartition(":")
        if sign not in ("+", "-") or not name:
            raise ParamError(f"'{item.strip()}' is not COLUMN:+ or COLUMN:-", param="monotone")
        if name not in signs:
            raise ParamError(f"'{name}' is not a feature of this table", param="monotone")
        if ds.schema.feature(name).kind != Kind.NUMERIC:
            raise ParamError(f"'{name}' is categorical: its levels have no order to follow", param="monotone")
        if signs[name]:
            raise ParamError(f"'{name}' is constrained twice", param="monotone")
        signs[name] = 1 if sign == "+" else -1
    return tuple(signs.values())


def pooled_non_increasing(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The non-increasing sequence nearest ``values`` in weighted squared error: adjacent
    violators pooled into their weighted mean (Ayer et al. 1955; Barlow et al. 1972)."""
    blocks: list[list[float]] = []  # [weighted mean, weight, length]
    for value, weight in zip(values.tolist(), np.maximum(weights, 1e-12).tolist(), strict=True):
        blocks.append([value, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            mean, w, n = blocks.pop()
            before = blocks[-1]
            total = before[1] + w
            before[0] = (before[0] * before[1] + mean * w) / total
            before[1], before[2] = total, before[2] + n
    return np.repeat([b[0] for b in blocks], [b[2] for b in blocks]).astype(np.float64)
