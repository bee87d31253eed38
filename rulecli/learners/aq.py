"""AQ: seed-and-star covering (Michalski 1969, 1973).

References
----------
R. S. Michalski, "On the quasi-minimal solution of the general covering problem", 1969,
and the AQ family after it. The algorithm:

1. pick an object x* no rule covers yet; 2. start from the all-``*`` rule;
3. find an object y of another class that the rule matches; 4. if there is none, go to 7;
5. specialise the rule so that y no longer matches, replacing a ``*`` by a value taken
   from x* and choosing the specialisation with the best support (counting, preferably,
   objects not covered yet); keep the k best (a beam, the "star") when several are close;
6. while the rule has too many counterexamples, go back to 3;
7. store the rule, mark the objects it covers, go back to 1.

Selectors are AQ's own: for a nominal attribute the internal disjunction ``a in {...}``
that keeps x*'s value and drops y's (so one selector can exclude several counterexamples
over the steps); for a numeric attribute an interval around x*'s value whose end lies
midway between x* and y. "Too many counterexamples" means more than ``max_error`` of the
rows the rule covers (1 % in textbook examples; by default the bound is chosen per table
by cross-validation, as 1 % fits only clean tables). Seeds are taken in a shuffled order
(``seed``); each counterexample to exclude is the first in that order.

The result is an unordered rule set: rows matching several rules are decided by voting
(one rule one vote, or weighted by support), rows matching none get the majority class or
stay unclassified. A missing value never satisfies a selector; a seed's missing value
cannot be used to exclude anything.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from rulecli import budget, counting
from rulecli.counting.encoded import Encoded
from rulecli.dataset import Dataset
from rulecli.discretize import cut_between_one
from rulecli.learners import Learner, Progress, rules_summary
from rulecli.model.core import Closed, Condition, ModelInfo, Op, Rule, RuleSet, Vote
from rulecli.params import (
    Params,
    beam_width_param,
    jobs_param,
    learn_rows_param,
    majority_rules_param,
    max_rule_length_param,
    max_rules_param,
    min_share_param,
    monotone_param,
    param,
    rules_per_class_param,
    seed_param,
)
from rulecli.schema import Kind
from rulecli.search.monotone import refuse_monotone
from rulecli.search.rule_stats import (
    counted_on_every_row,
    learning_sample,
    set_default_rule,
    set_rule_stats,
    training_summary,
)
from rulecli.search.tuning import CHOSEN_BY, Cut, cuts, cv_splits, paid_choice, truncated, truncation_scores
from rulecli.search.workers import cores, worker_map
from rulecli.stats import is_whole

VOTES = {"one": Vote.ONE, "support": Vote.WEIGHTED}
ERROR_GRID = (0.01, 0.05, 0.1, 0.2, 0.3)  # below 30 rows, 1 % (the first) is kept
DEFAULTS = ("majority", "none")
CUT_CACHE = 1 << 17  # cuts kept per fit (about 20 MB)
# Each seed's star is searched over every row, and noisy tables give a rule per few dozen
# rows: the time grows with the square of the rows (10,000 noisy rows: about a minute of
# CPU; 100,000 did not finish in 3 minutes). Beyond this many, aq learns from a hashed sample.
LEARN_ROWS = 10_000


AQ_MONOTONE = "aq's rules vote as a set, and a vote can move either way (ripper, tree and forest take it)"


@dataclass(frozen=True, kw_only=True)
class AQParams(Params):
    beam_width: int = beam_width_param(5)
    max_error: float | None = param(
        None,
        "Allowed share of counterexamples among covered rows (default: the best of 0.01, 0.05, 0.1, 0.2 "
        "and 0.3 by 3-fold cross-validation on the training rows).",
        ge=0.0,
        lt=1.0,
    )
    min_share: float | None = min_share_param()
    majority_rules: str | None = majority_rules_param()
    rules_per_class: int | None = rules_per_class_param()
    vote: str = param(
        "one", "one (rule, vote) or support (weighted by the training rows a rule gets right).", choices=tuple(VOTES)
    )
    default: str = param("majority", "Rows no rule matches: majority class, or none (unclassified).", choices=DEFAULTS)
    max_rules: int | None = max_rules_param(help="Search at most this many rules (the rows left go to the default).")
    max_rule_length: int | None = max_rule_length_param()
    learn_rows: int = learn_rows_param(LEARN_ROWS)  # AQ's search grows with the square of the rows
    jobs: int | None = jobs_param()
    monotone: str | None = monotone_param(AQ_MONOTONE)
    seed: int = seed_param()


@dataclass(frozen=True)
class _Partial:
    """A rule under construction: per constrained feature, the allowed levels or the bounds."""

    levels: dict[int, frozenset[int]] = field(default_factory=dict)  # categorical: allowed codes
    bounds: dict[int, tuple[float, float]] = field(default_factory=dict)  # numeric: [low, high]
    mask: np.ndarray = field(default_factory=lambda: np.ones(0, dtype=bool))

    @property
    def length(self) -> int:
        return len(self.levels) + len(self.bounds)

    def key(self) -> tuple[object, ...]:
        return (tuple(sorted(self.levels.items())), tuple(sorted(self.bounds.items())))


@dataclass(frozen=True)
class _Matrix:
    """The features side by side, once per fit: a specialisation is tried on every feature
    of a partial rule at once, as one comparison of the rows it covers."""

    # feature-major (a row per feature): gathering a partial rule's rows then reads each
    # feature's values in one run, several times faster than gathering table rows
    numeric: np.ndarray  # (n_numeric, n_rows) float64, NaN missing
    codes: np.ndarray  # (n_categorical, n_rows) int64, n_levels missing
    numeric_of: np.ndarray  # feature index of each numeric column
    categorical_of: np.ndarray
    missing_code: np.ndarray  # per categorical column
    numeric_list: list[int]  # numeric_of and categorical_of as ints, for dictionary lookups
    categorical_list: list[int]

    @classmethod
    def of(cls, enc: Encoded) -> _Matrix:
        num = [j for j, k in enumerate(enc.kinds) if k != Kind.CATEGORICAL]
        cat = [j for j, k in enumerate(enc.kinds) if k == Kind.CATEGORICAL]
        n = enc.n_rows
        return cls(
            np.vstack([enc.values(j) for j in num]) if num else np.zeros((0, n)),
            np.vstack([enc.values(j) for j in cat]) if cat else np.zeros((0, n), np.int64),
            np.array(num, dtype=np.int64),
            np.array(cat, dtype=np.int64),
            np.array([len(enc.levels[j]) for j in cat], dtype=np.int64),
            num,
            cat,
        )


class _Star:
    """The star search for one seed object."""

    def __init__(
        self,
        enc: Encoded,
        matrix: _Matrix,
        params: AQParams,
        order_rank: np.ndarray,
        covered: np.ndarray,
        cuts: dict[tuple[float, float], float],
    ) -> None:
        self.enc, self.matrix, self.params, self.order_rank, self.covered = enc, matrix, params, order_rank, covered
        self.cuts = cuts
        self.middles: dict[int, np.ndarray] = {}

    def _specialisations(self, partial: _Partial, seed: int, y: int, is_pos: np.ndarray) -> _Block | None:
        """Every one-selector change of ``partial`` that keeps ``seed`` and drops ``y``, in
        feature order, scored; computed for all features at once over the rows it covers."""
        limit = self.params.max_rule_length
        can_add = limit is None or partial.length < limit
        rows = np.flatnonzero(partial.mask)
        # (features, covers, new, low, high, dropped code, levels)
        parts = [
            part
            for part in (
                self._numeric_changes(partial, seed, y, rows, can_add),
                self._categorical_changes(partial, seed, y, rows, can_add),
            )
            if part is not None
        ]
        if not parts:
            return None
        if len(parts) == 1:
            features, covers, new, low, high, dropped, n_levels = parts[0]
        else:
            features, covers, new, low, high, dropped, n_levels = (
                np.concatenate([p[i] for p in parts]) for i in range(7)
            )
        if (np.diff(features) < 0).any():
            order = np.argsort(features, kind="stable")
            covers = covers[order]
            features, new, low, high, dropped, n_levels = (
                a[order] for a in (features, new, low, high, dropped, n_levels)
            )
        length = partial.length + new.astype(np.int64)
        fresh, n_pos, n_neg = self._counts(covers, rows, is_pos[rows])
        return _Block(partial, rows, features, covers, low, high, dropped, n_levels, (fresh, n_pos, -n_neg, -length))

    def _numeric_changes(
        self, partial: _Partial, seed: int, y: int, rows: np.ndarray, can_add: bool
    ) -> tuple[np.ndarray, ...] | None:
        """Numeric features: the side of the interval facing y moves to midway between the two."""
        mx = self.matrix
        if not mx.numeric_of.size:
            return None
        sv, yv = mx.numeric[:, seed], mx.numeric[:, y]
        # a few features a partial rule: a set lookup each beats np.isin's sort
        new = np.array([j not in partial.bounds for j in mx.numeric_list], dtype=bool)
        y_missing = np.isnan(yv)
        ok = np.flatnonzero(~np.isnan(sv) & (yv != sv) & (~new | can_add) & (~y_missing | new))
        if not ok.size:
            return None
        old = np.array([partial.bounds.get(j, (-math.inf, math.inf)) for j in mx.numeric_of[ok].tolist()])
        low, high = old[:, 0].copy(), old[:, 1].copy()
        s_ok, y_ok = sv[ok], yv[ok]
        present = ~y_missing[ok]
        middle = self._middle(seed, y)[ok]
        below = present & (y_ok < s_ok)
        above = present & ~below
        low = np.where(below, np.maximum(low, middle), low)
        high = np.where(above, np.minimum(high, middle), high)
        # every feature's rows in one gather (faster than gathering fewer features), then the
        # rows already within the old bounds tested against the new interval, where NaN fails
        # as a missing value must
        sub = np.take(mx.numeric, rows, axis=1)
        sub = sub if ok.size == sub.shape[0] else sub[ok]
        with np.errstate(invalid="ignore"):
            covers = (sub >= low[:, None]) & (sub <= high[:, None])
        return mx.numeric_of[ok], covers, new[ok], low, high, np.full(ok.size, -1), np.full(ok.size, -1)

    def _categorical_changes(
        self, partial: _Partial, seed: int, y: int, rows: np.ndarray, can_add: bool
    ) -> tuple[np.ndarray, ...] | None:
        """Categorical features: y's level dropped from the internal disjunction."""
        mx = self.matrix
        if not mx.categorical_of.size:
            return None
        sc, yc = mx.codes[:, seed], mx.codes[:, y]
        missing = mx.missing_code
        new = np.array([j not in partial.levels for j in mx.categorical_list], dtype=bool)
        y_missing = yc == missing
        allowed_y = np.array(
            [new[c] or int(yc[c]) in partial.levels[j] for c, j in enumerate(mx.categorical_list)], dtype=bool
        )
        ok = np.flatnonzero((sc != missing) & (~new | can_add) & (~y_missing | new) & (yc != sc) & allowed_y)
        if not ok.size:
            return None
        sub = np.take(mx.codes[ok], rows, axis=1)
        dropped = np.where(y_missing[ok], -1, yc[ok])
        covers = (sub != dropped[:, None]) & (sub != missing[ok][:, None])
        nan = np.full(ok.size, np.nan)
        return mx.categorical_of[ok], covers, new[ok], nan, nan, dropped, missing[ok]

    def _counts(self, covers: np.ndarray, rows: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per specialisation: the positives not yet covered, the positives and the negatives
        among ``rows`` it covers (weighted if the rows are)."""
        # the products' inputs are 0/1 and finite weights; OpenBLAS can leave a floating-point
        # 'invalid' flag set all the same (numpy#24067), which NumPy reports as a warning
        # (seen once in CI on a 5-row table): the sums themselves are exact
        with np.errstate(invalid="ignore"):
            if self.enc.w is None:
                # counts as one product in float32, exact below 2**24 rows and several times
                # the speed of integer products
                kind = np.float32 if rows.size < 2**24 else np.float64
                by = np.stack([np.ones(rows.size, dtype=bool), pos, pos & ~self.covered[rows]]).astype(kind)
                n_all, n_pos, fresh = (covers.astype(kind) @ by.T).astype(np.int64).T
                return fresh, n_pos, n_all - n_pos
            # rows counted by their weights, summed as a (rows, specialisations) product: another
            # layout adds in another order, and ties break otherwise
            w = self.enc.w[rows]
            by_row = covers.T.astype(np.float64, order="C")
            n_pos = (w * pos) @ by_row
            fresh = (w * (pos & ~self.covered[rows])) @ by_row
            return fresh, n_pos, w @ by_row - n_pos

    def _middle(self, seed: int, y: int) -> np.ndarray:
        """Per numeric feature, the cut between ``seed``'s value and ``y``'s (NaN where either
        is missing or they are equal); the star's partial rules often face the same ``y``."""
        middle = self.middles.get(y)
        if middle is None:
            sv, yv = self.matrix.numeric[:, seed], self.matrix.numeric[:, y]
            middle = np.full(sv.size, np.nan)
            apart = np.flatnonzero(~np.isnan(sv) & ~np.isnan(yv) & (sv != yv))
            middle[apart] = [self._cut(u, v) for u, v in zip(sv[apart].tolist(), yv[apart].tolist(), strict=True)]
            self.middles[y] = middle
        return middle

    def _cut(self, u: float, v: float) -> float:
        """The cut between a seed's value and a counterexample's; a fit asks for the same pair
        again and again (a quarter of its pairs are new), so they are kept. Zeros are not:
        0.0 and -0.0 are one key but may cut differently."""
        low, high = (u, v) if u < v else (v, u)
        cut = self.cuts.get((low, high))
        if cut is None:
            cut = cut_between_one(low, high)
            if low != 0.0 and high != 0.0:
                if len(self.cuts) >= CUT_CACHE:
                    self.cuts.clear()
                self.cuts[(low, high)] = cut
        return cut

    def _score(self, partial: _Partial, is_pos: np.ndarray) -> tuple[float, float, float, int]:
        """AQ's preference: uncovered positives, then all positives, fewer negatives, shorter
        (rows counted by their weights)."""
        positives = partial.mask & is_pos
        fresh = self.enc.total(where=positives & ~self.covered)
        n_pos = self.enc.total(where=positives)
        n_neg = self.enc.total(where=partial.mask & ~is_pos)
        return (fresh, n_pos, -n_neg, -partial.length)

    def _consistent(self, partial: _Partial, is_pos: np.ndarray) -> bool:
        n_neg = self.enc.total(where=partial.mask & ~is_pos)
        return n_neg <= self.params.max_error * self.enc.total(where=partial.mask)

    def search(self, seed: int) -> _Partial | None:
        """The best rule for ``seed``'s class that covers ``seed``; None if nothing separates it."""
        is_pos = self.enc.y == self.enc.y[seed]
        star = [_Partial(mask=np.ones(self.enc.n_rows, dtype=bool))]
        while True:
            done = [p for p in star if self._consistent(p, is_pos)]
            if done:
                return max(done, key=lambda p: self._score(p, is_pos))
            blocks = []
            for partial in star:
                negatives = np.flatnonzero(partial.mask & ~is_pos)
                y = int(negatives[np.argmin(self.order_rank[negatives])])
                block = self._specialisations(partial, seed, y, is_pos)
                if block is not None:
                    blocks.append(block)
            if not blocks:
                # nothing in x* separates it from y (identical descriptions, or x* missing where
                # they differ): no rule within the error bound covers the seed, so it gets none
                return None
            # best first, ties in the order made (a stable sort); a rule reached twice counts
            # once (the same selectors cover the same rows, so both copies score alike)
            score = [np.concatenate([b.score[i] for b in blocks]) for i in range(4)]
            which = np.concatenate([np.full(b.features.size, k) for k, b in enumerate(blocks)])
            column = np.concatenate([np.arange(b.features.size) for b in blocks])
            ranked = np.lexsort((-score[3], -score[2], -score[1], -score[0]))
            star, seen = [], set()
            for i in ranked.tolist():
                made = blocks[which[i]].partial(int(column[i]), self.enc.n_rows)
                key = made.key()
                if key in seen:
                    continue
                seen.add(key)
                star.append(made)
                if len(star) == self.params.beam_width:
                    break


@dataclass(frozen=True)
class _Block:
    """A partial rule's specialisations, one per feature column; each is made into a
    partial rule only if it enters the star."""

    parent: _Partial
    rows: np.ndarray  # the rows the parent covers
    features: np.ndarray
    covers: np.ndarray  # (specialisations, rows) bool
    low: np.ndarray  # numeric: the new bounds
    high: np.ndarray
    dropped: np.ndarray  # categorical: the level dropped (-1: none, y was missing)
    n_levels: np.ndarray  # categorical: the feature's level count
    score: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # AQ's preference, per column

    def partial(self, k: int, n_rows: int) -> _Partial:
        mask = np.zeros(n_rows, dtype=bool)
        mask[self.rows[self.covers[k]]] = True
        j, parent = int(self.features[k]), self.parent
        if math.isnan(self.low[k]) and math.isnan(self.high[k]):
            code = int(self.dropped[k])
            allowed = parent.levels.get(j, frozenset(range(int(self.n_levels[k]))))
            return _Partial({**parent.levels, j: allowed - {code}}, parent.bounds, mask)
        return _Partial(parent.levels, {**parent.bounds, j: (float(self.low[k]), float(self.high[k]))}, mask)


def _conditions(enc: Encoded, partial: _Partial) -> tuple[Condition, ...]:
    """Selectors as rule conditions, in feature order."""
    out = []
    for j, name in enumerate(enc.names):
        if j in partial.levels:
            allowed = sorted(partial.levels[j])
            if len(allowed) == len(enc.levels[j]):
                out.append(Condition(name, Op.PRESENT))
            elif len(allowed) == 1:
                out.append(Condition(name, Op.EQ, enc.levels[j][allowed[0]]))
            else:
                out.append(Condition(name, Op.IN, tuple(enc.levels[j][k] for k in allowed)))
        elif j in partial.bounds:
            low, high = partial.bounds[j]
            if math.isinf(low) and math.isinf(high):
                out.append(Condition(name, Op.PRESENT))
            elif math.isinf(low):
                out.append(Condition(name, Op.LE, high))
            elif math.isinf(high):
                out.append(Condition(name, Op.GE, low))
            else:
                out.append(Condition(name, Op.INTERVAL, (low, high), Closed.BOTH))
    return tuple(out)


def fit_aq(ds: Dataset, params: AQParams, *, progress: Progress | None = None) -> RuleSet:
    """Learn an AQ rule set.

    Examples
    --------
    >>> import polars as pl
    >>> from rulecli.dataset import DataSpec, prepare_dataset
    >>> df = pl.DataFrame({"c": ["u", "v", "w"] * 4, "y": ["a", "b", "b"] * 4})
    >>> model = fit_aq(prepare_dataset(df, DataSpec()), AQParams(min_share=0.0, majority_rules="keep"))
    >>> sorted((r.conditions[0].op.value, r.conditions[0].value, r.prediction) for r in model.rules)
    [('=', 'u', 'a'), ('in', ('v', 'w'), 'b')]

    Too few rows to choose the truncation on: the majority is left to the default rule.

    >>> model = fit_aq(prepare_dataset(df, DataSpec()), AQParams())
    >>> [(r.conditions[0].value, r.prediction) for r in model.rules], model.default.prediction
    ([('u', 'a')], 'b')
    """
    refuse_monotone(params.monotone, AQ_MONOTONE)
    whole, held = ds, None
    drawn = learning_sample(ds, params.learn_rows, params.seed)
    if drawn is not None:
        ds, held = drawn
    if ds.weights is not None and is_whole(ds.weights):
        # seeds and folds are drawn from the copies whole weights stand for; fractional
        # weights weigh every count, rows drawn whole
        ds = ds.as_copies("aq")
    bound, (share, drop, per_class) = _tuned(ds, params)
    majority = "drop" if drop else "keep"
    chosen = dataclasses.replace(
        params, max_error=bound, min_share=share, majority_rules=majority, rules_per_class=per_class
    )
    enc = counting.covering_counts(ds)
    fitted = _fit(ds, enc, _Matrix.of(enc), chosen, progress)
    cut_by = CHOSEN_BY
    if held is not None:
        # a table longer than the sample: its truncation is chosen on as many rows again that
        # the sample does not hold, not on the cross-validation's 2,000 (on a million planted
        # rows that choice kept four rules and scored 0.726, against 0.81 at 10,000 rows)
        settings = cuts(params.min_share, params.majority_rules, params.rules_per_class)
        scores = {c: (right, size) for c, right, size in truncation_scores(fitted, ds, held, settings)}
        picked = paid_choice(scores)
        assert isinstance(picked, tuple)
        share, drop, per_class = picked
        majority = "drop" if drop else "keep"
        chosen = dataclasses.replace(chosen, min_share=share, majority_rules=majority, rules_per_class=per_class)
        cut_by = HELD_OUT
    model = _truncated(fitted, ds, (share, drop, per_class), chosen)
    extra = _chosen_record(params, chosen, cut_by)
    if extra:
        model = dataclasses.replace(model, info=dataclasses.replace(model.info, training=model.info.training | extra))
    if drawn is not None:
        model = counted_on_every_row(model, drawn[0], whole, params.seed)
    return model


HELD_OUT = "held-out rows of the table the sample does not hold"


def _truncated(model: RuleSet, ds: Dataset, cut: Cut, params: AQParams) -> RuleSet:
    """The rule set without its light rules (:func:`rulecli.search.tuning.truncated`)."""
    kept = truncated(model, ds, *cut)
    searched = {k: v for k, v in model.info.training.items() if k == "search_cut"}
    info = dataclasses.replace(model.info, params=params.record(), training=training_summary(ds, kept.rules) | searched)
    return dataclasses.replace(kept, info=info)


def _chosen_record(params: AQParams, chosen: AQParams, cut_by: str) -> dict[str, object]:
    """What the learner chose for the settings left to it, and how (in the model's training record)."""
    extra: dict[str, object] = {}
    if params.max_error is None:
        extra |= {"max_error": chosen.max_error, "max_error_chosen_by": CHOSEN_BY}
    if params.min_share is None and params.rules_per_class is None:
        extra |= {"min_share": chosen.min_share, "min_share_chosen_by": cut_by}
        extra |= {"rules_per_class": chosen.rules_per_class, "rules_per_class_chosen_by": cut_by}
    if params.majority_rules is None:
        extra |= {"majority_rules": chosen.majority_rules, "majority_rules_chosen_by": cut_by}
    return extra


def _tuned(ds: Dataset, params: AQParams) -> tuple[float, Cut]:
    """The error bound and truncation chosen together on the training rows
    (:mod:`rulecli.search.tuning`). How many counterexamples a rule may cover, and how light
    a rule may be, depend on the table's noise: a 1 % bound and every rule kept fit
    clean tables, while on noisy ones they leave many rules covering a handful of rows each.
    AQ's stars overlap, so a few strong rules often do what many do: a setting's rules must
    pay for themselves, each by a held-out row it gets right (one-standard-error's tolerance
    left aq with 3.9 rules a table against JRip's 3.0 across 78 tables at the same accuracy)."""
    bounds = ERROR_GRID if params.max_error is None else (params.max_error,)
    settings = cuts(params.min_share, params.majority_rules, params.rules_per_class)
    if len(bounds) == 1 and len(settings) == 1:
        return bounds[0], settings[0]
    cv = cv_splits(ds, params.seed)
    if cv is None:  # too few rows to choose on: the simplest rule set the settings allow
        return bounds[0], min(settings, key=lambda cut: (cut[2] is None, cut[2] or 0, not cut[1], -cut[0]))
    splits, _ = cv
    tasks = [(bound, k) for bound in bounds for k in range(len(splits))]
    scores: dict[tuple[float, Cut], tuple[float, int]] = {}
    # closed here, not when the collector finds it: a Ctrl-C that lands in its clean-up while
    # the collector runs it is swallowed ("Exception ignored in: <generator …>")
    with contextlib.closing(_cv_fits(tasks, splits, params)) as fits:
        for (bound, k), fitted in zip(tasks, fits, strict=True):
            # a fit the time budget cut short cannot score its settings: those scored so far choose
            if budget.ran_out("aq: the error bound and truncation were chosen on part of the cross-validation"):
                break
            train, test = splits[k]
            for cut, right, size in truncation_scores(fitted, train, test, settings):
                total, rules = scores.get((bound, cut), (0.0, 0))
                scores[(bound, cut)] = (total + right, rules + size)
    if not scores:
        return bounds[0], settings[0]
    chosen = paid_choice(scores)
    assert isinstance(chosen, tuple)
    return chosen


# The cross-validation's fits (5 error bounds x 3 folds) are independent. On clean or small
# tables they take milliseconds; on noisy ones seconds each, most of aq's time. They run here
# until they have taken PARALLEL_AFTER seconds, the rest then in forked worker processes,
# while this one scores the fits as they come (scoring runs Polars, which workers must not:
# each fold is encoded here, once for its five fits, and workers only search).
PARALLEL_AFTER = 1.0
_SHARED: dict[str, object] = {}
_Fold = tuple[Dataset, Encoded, _Matrix]  # a fold's training rows and their encodings


def _init_worker(folds: list[_Fold], params: AQParams) -> None:
    _SHARED.update(folds=folds, params=params)


def _cv_fit(task: tuple[float, int]) -> RuleSet:
    """One fold's fit at one error bound."""
    bound, k = task
    folds, params = _SHARED["folds"], _SHARED["params"]
    assert isinstance(folds, list) and isinstance(params, AQParams)
    return _fit(*folds[k], dataclasses.replace(params, max_error=bound), None)


def _cv_fits(
    tasks: list[tuple[float, int]], splits: list[tuple[Dataset, Dataset]], params: AQParams
) -> Iterator[RuleSet]:
    """Each task's fit, in the tasks' order (the same wherever it was made)."""
    jobs = params.jobs or cores()
    started = time.perf_counter()
    folds: list[_Fold] = []
    for train, _ in splits:
        enc = Encoded.from_dataset(train)
        folds.append((train, enc, _Matrix.of(enc)))
    _init_worker(folds, params)
    try:
        for i, task in enumerate(tasks):
            if jobs > 1 and len(tasks) - i > 1 and time.perf_counter() - started > PARALLEL_AFTER:
                rest = tasks[i:]
                with worker_map(_cv_fit, rest, min(jobs, len(rest)), _init_worker, (folds, params)) as fits:
                    yield from fits
                return
            yield _cv_fit(task)
    finally:
        _SHARED.clear()


def _fit(ds: Dataset, enc: Encoded, matrix: _Matrix, params: AQParams, progress: Progress | None) -> RuleSet:
    """AQ's rules for ``ds`` (``enc`` and ``matrix`` its encodings) at ``params.max_error``."""
    assert params.max_error is not None
    rng = np.random.default_rng(params.seed)
    order = rng.permutation(enc.n_rows)
    order_rank = np.empty(enc.n_rows, dtype=np.int64)
    order_rank[order] = np.arange(enc.n_rows)
    covered = np.zeros(enc.n_rows, dtype=bool)
    cuts: dict[tuple[float, float], float] = {}
    raw: list[Rule] = []
    cut = False
    for seed in order:
        if covered[seed]:
            continue
        if params.max_rules is not None and len(raw) >= params.max_rules:
            cut = True  # rows no rule covers yet are left to the default
            break
        if budget.ran_out(f"aq: stopped after {len(raw)} rules with rows left uncovered"):
            break
        best = _Star(enc, matrix, params, order_rank, covered, cuts).search(int(seed))
        covered[seed] = True  # a seed nothing separates from a counterexample is not retried
        if best is None:
            continue
        cls = int(enc.y[seed])
        raw.append(Rule(_conditions(enc, best), enc.classes[cls]))
        if progress is not None:
            progress(len(raw))
        covered |= best.mask & (enc.y == cls)
    rules = set_rule_stats(enc, raw, laplace_weights=False)
    default = set_default_rule(enc, rules) if params.default == "majority" else None
    info = ModelInfo(
        algorithm="aq",
        params=params.record(),
        schema=ds.schema,
        training=training_summary(ds, rules) | ({"search_cut": SEARCH_CUT.format(len(raw))} if cut else {}),
    )
    return RuleSet(ds.target, ds.classes, tuple(rules), default, VOTES[params.vote], info)


SEARCH_CUT = "stopped after {} rules with rows left uncovered (`max_rules`)"


LEARNER = Learner(
    name="aq",
    params=AQParams,
    fit=fit_aq,
    summary=rules_summary("aq"),
    help="Learn AQ rules (Michalski) by seed-and-star covering: an unordered, voting rule set.",
    examples=(
        "rulecli aq sample_data/house.csv -y value --default none",
        "rulecli aq sample_data/penguins.csv -y species --vote support --cv 5 -o penguins.aq.json",
    ),
)
