"""Schema drift: how the data a model scores differs from the data it was trained on.

Checked on the first rows of the table (``SAMPLE_ROWS``), so a check costs one short read
whatever the table's size: a column whose rows hold levels training never saw (beyond
``UNSEEN_SHARE``; a text column that now holds numbers is named as such), a rule that tests
a value no row holds (a typo in a hand-written rule: ``'Female'`` for ``'female'``), a class
the truth column never holds, and rules that match no row.
"""

from __future__ import annotations

import difflib

import numpy as np
import polars as pl

from rulecli.display import counted
from rulecli.model.compile import Predictor, column_kinds, model_input, rule_expr
from rulecli.model.core import Committee, DecisionList, Op, RuleRegression, RuleSet, number_lists
from rulecli.model.text import one_line, render_condition
from rulecli.model.tree import Tree
from rulecli.schema import PLAIN, categorical_expr, plain_column
from rulecli.stats import chi2_independence, holm

SAMPLE_ROWS = 100_000
UNSEEN_SHARE = 0.05
SHOWN = 3


def drift_warnings(model: Predictor, lf: pl.LazyFrame, label: str, *, truth: str | None = None) -> list[str]:
    """One line per finding, each starting with ``label``."""
    kinds = column_kinds(model)
    categorical = [c for c, numeric in kinds.items() if not numeric]
    columns = [*categorical, *([truth] if truth is not None and truth not in categorical else [])]
    sample = model_input(model, lf.head(SAMPLE_ROWS))
    frame = sample.select([categorical_expr(c).alias(c) for c in columns]).collect() if columns else None
    n = frame.height if frame is not None else sample.select(pl.len()).collect().item()
    if n == 0:
        return []
    where = f"the first {SAMPLE_ROWS:,} rows" if n == SAMPLE_ROWS else "the data"
    present = {c: set(plain_column(frame, c).drop_nulls().to_list()) for c in columns} if frame is not None else {}
    out = [f"{label}: {m}" for m in _unseen_levels(model, frame, categorical, n, where)]
    if isinstance(model, DecisionList | RuleSet):
        out += [f"{label}: {m}" for m in _absent_values(model, present, kinds, where)]
        out += [f"{label}: {m}" for m in _silent_rules(model, sample, where)]
    if truth is not None and model.classes and truth in present:
        absent = [c for c in model.classes if c not in present[truth]]
        if absent and len(absent) < len(model.classes):
            shown = ", ".join(repr(c) for c in absent[:SHOWN])
            verb = "occurs" if len(absent) == 1 else "occur"
            classes = counted(len(absent), "class")
            out.append(f"{label}: {classes} of the model never {verb} in '{truth}' in {where}: {shown}")
    return out


def _unseen_levels(
    model: Predictor, frame: pl.DataFrame | None, categorical: list[str], n: int, where: str
) -> list[str]:
    schema = model.info.schema
    if schema is None or frame is None:
        return []
    known = {f.name: f.levels for f in schema.features if f.levels}
    out = []
    for name in categorical:
        if name not in known:
            continue
        values = plain_column(frame, name)
        unseen = values.filter(values.is_not_null() & ~values.is_in(list(known[name])))
        if unseen.len() <= UNSEEN_SHARE * n:
            continue
        examples = ", ".join(repr(v) for v in unseen.unique(maintain_order=True).head(SHOWN).to_list())
        share = f"{unseen.len() / n:.0%} of the rows in {where}"
        message = f"column '{one_line(name)}': {share} hold levels training never saw ({examples})"
        if _numbers(unseen).all() and not _numbers(pl.Series(known[name], dtype=pl.String)).any():
            message += "; it held text in training and holds numbers now"
        out.append(message)
    return out


def _absent_values(
    model: DecisionList | RuleSet, present: dict[str, set[str]], kinds: dict[str, bool], where: str
) -> list[str]:
    out = []
    reported: set[tuple[str, str]] = set()
    for i, rule in enumerate(model.rules, start=1):
        for cond in rule.conditions:
            if kinds.get(cond.column, True) or cond.op not in (Op.EQ, Op.IN) or cond.column not in present:
                continue
            values = cond.value if isinstance(cond.value, tuple) else (cond.value,)
            for value in (str(v) for v in values):
                if value in present[cond.column] or (cond.column, value) in reported:
                    continue
                reported.add((cond.column, value))
                close = difflib.get_close_matches(value, sorted(present[cond.column]), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                out.append(
                    f"rule {i} tests {one_line(render_condition(cond))}, but no row in {where} holds {value!r}{hint}"
                )
    return out


def _silent_rules(model: DecisionList | RuleSet, sample: pl.LazyFrame, where: str) -> list[str]:
    if not model.rules:
        return []
    fired = sample.select([rule_expr(r).sum().alias(str(i)) for i, r in enumerate(model.rules, start=1)]).collect()
    silent = [name for name in fired.columns if fired.get_column(name).item() == 0]
    if not silent:
        return []
    shown = ", ".join(silent[:10]) + (f" and {len(silent) - 10} more" if len(silent) > 10 else "")
    noun, verb = ("rule", "matches") if len(silent) == 1 else ("rules", "match")
    return [f"{noun} {shown} of {len(model.rules)} {verb} no row in {where}"]


def _numbers(values: pl.Series) -> pl.Series:
    """Which text values read as numbers."""
    return values.str.strip_chars().cast(pl.Float64, strict=False).is_not_null()


# ----------------------------------------------------------------------------- feature drift

PSI_BINS = 10  # a numeric column the model cuts in more places is binned at the reference's deciles
PSI_FLOOR = 1e-4  # an empty bin's share in the index (its logarithm would be infinite)
FEATURE_ALPHA = 0.05


def model_cuts(model: Predictor) -> dict[str, list[float]]:
    """Each numeric column's cut points as the model's own rules or splits place them (a
    column cut in more than ``PSI_BINS - 1`` places gets none here: deciles stand in)."""
    found: dict[str, set[float]] = {}
    if isinstance(model, DecisionList | RuleSet | RuleRegression | Committee):
        lists = number_lists(model) if isinstance(model, RuleRegression | Committee) else (model,)
        for rule in (r for m in lists for r in m.rules):
            for cond in rule.conditions:
                values = cond.value if isinstance(cond.value, tuple) else (cond.value,)
                found.setdefault(cond.column, set()).update(
                    float(v) for v in values if isinstance(v, float) and np.isfinite(v)
                )
    else:
        trees = (model.nodes,) if isinstance(model, Tree) else model.trees
        for nodes in trees:
            for j, t in zip(nodes.feature.tolist(), nodes.threshold.tolist(), strict=True):
                if j >= 0 and np.isfinite(t):
                    found.setdefault(model.features[j], set()).add(float(t))
    return {c: sorted(v) for c, v in found.items() if 0 < len(v) < PSI_BINS}


def _bins(values: pl.Series, numeric: bool, cuts: list[float] | None, levels: list[str]) -> np.ndarray:
    """Each row's bin: between cut points (or one per level, one for every other value),
    and the last bin for a missing value."""
    if numeric:
        x = values.cast(pl.Float64).fill_nan(None).to_numpy()
        out = np.searchsorted(np.asarray(cuts), np.nan_to_num(x), side="right")
        return np.where(np.isnan(x), len(cuts or []) + 1, out)
    text = values.cast(pl.String)
    codes = text.replace_strict(levels, list(range(len(levels))), default=len(levels), return_dtype=pl.Int64)
    return codes.fill_null(len(levels) + 1).to_numpy()


def feature_drift(model: Predictor, reference: pl.LazyFrame, current: pl.LazyFrame) -> dict[str, object]:
    """Each column the model reads, its distribution here against ``reference``: the
    population stability index over the model's own cut points (the reference's deciles
    where the model cuts a column often) or levels, and Pearson's chi-square test of the
    two tables' bin counts, Holm-adjusted over the columns."""
    kinds = column_kinds(model)
    columns = sorted(kinds)
    ref = model_input(model, reference).select(columns).collect()
    cur = model_input(model, current).select(columns).collect()
    own = model_cuts(model)
    rows, p_values = [], []
    for name in columns:
        numeric = kinds[name]
        cuts, levels = own.get(name), []
        if numeric and cuts is None:
            present = plain_column(ref, name).cast(pl.Float64).fill_nan(None).drop_nulls()
            qs = np.linspace(0, 1, PSI_BINS + 1)[1:-1]
            cuts = sorted(set(np.quantile(present.to_numpy(), qs).tolist())) if present.len() else []
        if not numeric:
            counts = plain_column(ref, name).cast(pl.String).drop_nulls().value_counts(sort=True)
            levels = sorted(counts.get_column(PLAIN).head(PSI_BINS * 2).to_list())
        width = (len(cuts or []) + 2) if numeric else len(levels) + 2
        a = np.bincount(_bins(plain_column(ref, name), numeric, cuts, levels), minlength=width).astype(np.float64)
        b = np.bincount(_bins(plain_column(cur, name), numeric, cuts, levels), minlength=width).astype(np.float64)
        p_ref = np.maximum(a / max(a.sum(), 1.0), PSI_FLOOR)
        p_cur = np.maximum(b / max(b.sum(), 1.0), PSI_FLOOR)
        psi = float(((p_cur - p_ref) * np.log(p_cur / p_ref)).sum())
        p_values.append(chi2_independence(np.vstack([a, b]))[2])
        rows.append({"column": name, "psi": psi, "bins": width, "cut_by": "model" if name in own else "reference"})
    for row, adjusted in zip(rows, holm(p_values), strict=True):
        row["p"] = adjusted
        row["drifted"] = adjusted < FEATURE_ALPHA
    return {"alpha": FEATURE_ALPHA, "correction": "holm", "features": rows}


def psi_failures(drift: dict[str, object], max_psi: float) -> list[str]:
    """One message per column whose index passes ``max_psi`` where the test finds the change
    beyond chance."""
    out = []
    for row in drift["features"]:  # type: ignore[attr-defined]
        if row["psi"] > max_psi and row["drifted"]:
            out.append(
                f"feature drift gate failed: column '{one_line(row['column'])}': population stability index "
                f"{row['psi']:.3f} > {max_psi:g} (`max_psi`; adjusted p = {row['p']:.2g})"
            )
    return out
