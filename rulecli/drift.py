"""Schema drift: how the data a model scores differs from the data it was trained on.

Checked on the first rows of the table (``SAMPLE_ROWS``), so a check costs one short read
whatever the table's size: a column whose rows hold levels training never saw (beyond
``UNSEEN_SHARE``; a text column that now holds numbers is named as such), a rule that tests
a value no row holds (a typo in a hand-written rule: ``'Female'`` for ``'female'``), a class
the truth column never holds, and rules that match no row.
"""

from __future__ import annotations

import difflib

import polars as pl

from rulecli.model.compile import Predictor, column_kinds, model_input, rule_expr
from rulecli.model.core import DecisionList, Op, RuleSet
from rulecli.model.text import one_line, render_condition
from rulecli.schema import categorical_expr
from rulecli.words import counted

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
    present = {c: set(frame.get_column(c).drop_nulls().to_list()) for c in columns} if frame is not None else {}
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
        values = frame.get_column(name)
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
