"""RIPPER-k rule induction, following Weka's JRip.

References
----------
W. W. Cohen, "Fast Effective Rule Induction", ICML 1995. The seeds (000/003, ch. 4.5)
describe sequential covering and RIPPER's multi-class scheme: classes in increasing
frequency, each learned against the more frequent ones, the last becoming the default.
JRip (Weka) is the implementation users compare with, so its choices are followed:

* grow on 2/3 of the uncovered rows (stratified, seeded), adding the condition with the
  best FOIL gain ``p * (log2((p+1)/(t+1)) - log2(prior))``; nominal features give
  ``a = v`` (each feature once per rule), numeric ones ``x <= v`` / ``x >= v`` at a data
  value (usable again); stop when the rule covers no negatives or covers fewer than
  ``min_weight`` positives;
* prune on the other 1/3 by deleting the final conditions that maximise the rule's worth.
  JRip's worth is the Laplace accuracy ``(p+1)/(p+n+2)``; Cohen's paper states
  ``(p-n)/(p+n)`` (``--prune-metric cohen``). The default follows JRip, the reference;
* stop adding rules when the description length exceeds the smallest seen by more than
  ``dl_slack`` bits (64), when a rule's error reaches 50 %, or when no positives remain;
* optimise ``k`` times: for each rule build a replacement and a revision and keep the
  variant with the smallest description length, cover the positives left over, then
  delete rules whose removal lowers the description length.

A missing value never satisfies a condition.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from rulecli import budget, counting
from rulecli.counting import bits
from rulecli.counting.encoded import (
    Encoded,
    across,
    categorical_candidates,
    compiled_kernel,
    label_counts,
    numeric_candidates,
)
from rulecli.dataset import Dataset
from rulecli.engines import EngineTable
from rulecli.errors import ParamError
from rulecli.learners import Learner, Progress, rules_summary
from rulecli.model.core import Condition, DecisionList, ModelInfo, Op, Rule, RuleRegression, RuleSet, Vote
from rulecli.model.simplify import simplify
from rulecli.params import (
    Params,
    average_param,
    max_rule_length_param,
    max_rules_param,
    monotone_param,
    param,
    seed_param,
)
from rulecli.schema import Kind
from rulecli.search.monotone import monotone_signs, pooled_non_increasing
from rulecli.search.number_rules import Moments, RuleSearch, irep_list, learned_model, number_model
from rulecli.search.rule_stats import list_rule_stats, set_default_rule, set_rule_stats, training_summary
from rulecli.search.selection import kept_rules
from rulecli.search.tuning import beats_default
from rulecli.stats import is_whole

PRUNE_METRICS = ("jrip", "cohen")


@dataclass(frozen=True)
class _Scored:
    """Threshold candidates as :meth:`_ClassLearner._best_condition` scores them: per
    candidate its values and the float counts of ``x <= v`` and ``x >= v``; the i-th
    numeric feature's are ``bounds[i]:bounds[i + 1]``."""

    values: np.ndarray
    lows: np.ndarray
    le_p: np.ndarray
    le_t: np.ndarray
    ge_p: np.ndarray
    ge_t: np.ndarray
    bounds: np.ndarray
    position: dict[int, int]  # numeric feature -> i
    missing: np.ndarray | None  # (2, n_numeric) counts of missing values (for missing-value tests)


# Tables of at most this many rows have their rules checked against the default rule alone
# by a 3-fold cross-validation: on a few hundred rows of noise, rules that pass RIPPER's
# description-length stop and its 50 % error check still come by chance (JRip fell 2 to 9
# points under the majority rate on such tables, and so did ripper), and on longer tables
# such rules are rare while three more fits cost time.
NOISE_ROWS = 5_000


@dataclass(frozen=True, kw_only=True)
class RipperParams(Params):
    folds: int = param(3, "1/FOLDS of the rows prune, the rest grow (Weka -F).", ge=2)
    min_weight: float = param(2.0, "Minimum positives a condition must keep (Weka -N).", ge=0)
    optimizations: int = param(2, "Optimisation passes (Weka -O).", ge=0)
    pruning: bool = param(True, "Grow/prune split and pruning (Weka -P).", negative="no-pruning")
    check_error_rate: bool = param(True, "Stop at a rule with >= 50% errors (Weka -E).", negative="no-check-error-rate")
    dl_slack: float = param(64.0, "Stop when the description length exceeds the minimum by this many bits.", ge=0)
    default_check: bool = param(
        True,
        f"On up to {NOISE_ROWS:,} rows, drop the rules if cross-validation finds them worse than the default "
        "rule alone.",
        negative="no-default-check",
    )
    prune_metric: str = param(
        "jrip", "Rule worth when pruning: jrip (p+1)/(p+n+2), or cohen (p-n)/(p+n).", choices=PRUNE_METRICS
    )
    unordered: bool = param(False, "Rules for every class, voting by confidence, instead of a list.")
    missing_tests: bool = param(False, "Also test 'is missing' (JRip does not: off keeps its rules).")
    max_rules: int | None = max_rules_param(
        help="At most this many rules: a list keeps those of its whole list that predict the most training rows "
        "right; with --unordered, the first learned."
    )
    max_rule_length: int | None = max_rule_length_param()
    average: str = average_param()
    monotone: str | None = monotone_param()
    seed: int = seed_param()


Conds = tuple[Condition, ...]
M = TypeVar("M", DecisionList, RuleSet, RuleRegression)


# ---------------------------------------------------------------------------- description length
# Quinlan, "MDL and categorical theories (continued)", ICML 1995, as RIPPER and JRip use it.


def _bits(count: float, p: float) -> float:
    """``-count * log2(p)``, taking 0 * log(0) as 0."""
    return 0.0 if count == 0 else -count * math.log2(p)


def subset_dl(total: float, k: float, p: float) -> float:
    """Bits to say which ``k`` of ``total`` elements, each in with probability ``p``."""
    return (_bits(k, p) if p > 0 else 0.0) + _bits(total - k, 1.0 - p)


def theory_dl(n_conditions: int, n_possible: float) -> float:
    """Bits for a rule of ``n_conditions`` conditions, halved for redundancy as RIPPER does."""
    if n_conditions == 0:
        return 0.0
    k = float(n_conditions)
    bits = math.log2(k)
    if k > 1:
        bits += 2.0 * math.log2(bits)
    bits += subset_dl(n_possible, k, k / n_possible)
    return 0.5 * bits


def data_dl(exp_fp_over_err: float, cover: float, uncover: float, fp: float, fn: float) -> float:
    """Bits for the errors of a rule set: false positives among covered, false negatives among the rest."""
    bits = math.log2(cover + uncover + 1.0)
    if cover > uncover:
        expected = exp_fp_over_err * (fp + fn)
        bits += subset_dl(cover, fp, expected / cover)
        bits += subset_dl(uncover, fn, fn / uncover) if uncover > 0 else 0.0
    else:
        expected = (1.0 - exp_fp_over_err) * (fp + fn)
        bits += subset_dl(cover, fp, fp / cover) if cover > 0 else 0.0
        bits += subset_dl(uncover, fn, expected / uncover) if uncover > 0 else 0.0
    return bits


# Simple statistics of a rule in a list: covered, uncovered, tp, tn, fp, fn (JRip's order).
COV, UNC, TP, TN, FP, FN = range(6)


@dataclass
class _Stats:
    """A class's rule list with each rule's simple statistics on the rows it sees in turn."""

    rules: list[Conds]
    stats: list[np.ndarray]
    remaining: list[np.ndarray]  # rows left uncovered after each rule, as bits


class _ClassLearner:
    """Learn the rules for one class against the rows still uncovered (one JRip phase)."""

    def __init__(
        self,
        enc: Encoded,
        cls: int,
        data: np.ndarray,
        exp_fp: float,
        params: RipperParams,
        rng: np.random.Generator,
        on_rule: Progress | None = None,
        directions: dict[str, int] | None = None,
    ) -> None:
        self.enc, self.cls, self.data, self.exp_fp, self.params, self.rng = enc, cls, data, exp_fp, params, rng
        self.on_rule = on_rule
        # monotone constraints: the numeric features this class's rules may bound only from
        # below (+1: 'x >= v') or only from above (-1: 'x <= v')
        self.directions = directions or {}
        self.w = enc.w  # fractional row weights weigh every count (None: each row counts once)
        self.pos = (enc.y == cls).astype(np.uint8)  # a byte a row: the label counts read it for every row
        self.pos_bits = bits.pack(self.pos.astype(bool))
        self.data_bits = bits.from_indices(data, enc.n_rows)
        self.n_possible = _possible_conditions(enc, params.missing_tests)
        # each rule's rows as bits: a rule is asked about again and again, and a million
        # rows are 125 kB this way against 1 MB as a mask
        self.bit_cache: dict[Conds, np.ndarray] = {}
        # row sets (bits) whose positive/negative counts are known: all the class's rows and
        # the last set asked for; see :meth:`_grow_counts`
        self.counted: list[tuple[np.ndarray, np.ndarray]] = []

    @functools.cached_property
    def logs(self) -> np.ndarray:
        """log2(k + 1) for every whole count k of rows, for the kernel's FOIL gains."""
        return np.log2(np.arange(1.0, self.enc.n_rows + 2.0))

    # -- coverage -----------------------------------------------------------------

    def covers_bits(self, rule: Conds) -> np.ndarray:
        """The rows ``rule`` covers, as bits over all rows, cached per rule."""
        packed = self.bit_cache.get(rule)
        if packed is None:
            packed = bits.pack(self.enc.rule_mask(rule))
            self.bit_cache[rule] = packed
        return packed

    def covers(self, rule: Conds, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` (indices) ``rule`` covers."""
        return bits.test(self.covers_bits(rule), rows)

    def _n(self, packed: np.ndarray) -> float:
        """The rows of a bit set, counted by weight."""
        return bits.count(packed) if self.w is None else float(bits.weighted_counts(packed, self.w))

    def simple_stats(self, rule: Conds, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """JRip's six counts for ``rule`` on the row set ``rows`` (bits), and the rows it leaves."""
        rule_bits = self.covers_bits(rule)
        kernel = compiled_kernel(0) if self.w is None else None
        if kernel is not None:
            cover, tp, positives, total, rest = kernel.rule_counts(rule_bits, rows, self.pos_bits)
            fn, uncover = positives - tp, total - cover
        else:
            covered = rule_bits & rows
            cover = self._n(covered)
            tp = self._n(covered & self.pos_bits)
            fn = self._n(rows & self.pos_bits) - tp
            uncover = self._n(rows) - cover
            rest = rows & ~rule_bits
        stats = np.array([cover, uncover, tp, uncover - fn, cover - tp, fn], dtype=np.float64)
        return stats, rest

    def count(self, rules: list[Conds], rows: np.ndarray) -> _Stats:
        """Statistics of ``rules`` as a list over ``rows`` (bits), each seeing what the earlier
        left; without the rows each leaves, which its callers never ask for (a list of
        hundreds of rules held 22 MB of them on 700,000 rows, at the peak of RIPPER's memory)."""
        return self.extend(_Stats([], [], []), rules, rows, remaining=False)

    def extend(self, prev: _Stats, more: list[Conds], rows: np.ndarray | None = None, remaining: bool = True) -> _Stats:
        """``prev`` followed by ``more``, counted on the rows ``prev`` leaves uncovered (and,
        with ``remaining``, the rows each of ``more`` leaves)."""
        if rows is None:
            rows = prev.remaining[-1] if prev.rules else self.data_bits
        out = _Stats(list(prev.rules), list(prev.stats), list(prev.remaining))
        for rule in more:
            stats, rows = self.simple_stats(rule, rows)
            out.rules.append(rule)
            out.stats.append(stats)
            if remaining:
                out.remaining.append(rows)
        return out

    # -- description length (JRip's RuleStats) ------------------------------------

    def _potential(self, rule: Conds, totals: np.ndarray, stat: np.ndarray) -> float | None:
        without = totals.copy()
        without[COV] -= stat[COV]
        without[UNC] += stat[COV]
        without[FP] -= stat[FP]
        without[FN] += stat[TP]
        dl_with = data_dl(self.exp_fp, totals[COV], totals[UNC], totals[FP], totals[FN])
        dl_without = data_dl(self.exp_fp, without[COV], without[UNC], without[FP], without[FN])
        potential = dl_with + theory_dl(len(rule), self.n_possible) - dl_without
        too_wrong = self.params.check_error_rate and stat[COV] > 0 and stat[FP] / stat[COV] >= 0.5
        if potential >= 0 or too_wrong:
            totals[:] = without
            return potential
        return None

    @staticmethod
    def _totals(stats: list[np.ndarray]) -> np.ndarray:
        totals = np.zeros(6)
        for s in stats:
            totals[[COV, TP, FP]] += s[[COV, TP, FP]]
        if stats:
            totals[[UNC, TN, FN]] = stats[-1][[UNC, TN, FN]]
        return totals

    def _min_dl_if_exists(self, st: _Stats, index: int) -> float:
        totals = self._totals(st.stats)
        potential = sum(
            p
            for k in range(index + 1, len(st.rules))
            if (p := self._potential(st.rules[k], totals, st.stats[k])) is not None
        )
        return data_dl(self.exp_fp, totals[COV], totals[UNC], totals[FP], totals[FN]) - potential

    def _min_dl_if_deleted(self, st: _Stats, index: int) -> float:
        totals = self._totals(st.stats[:index])
        rows = self.data_bits if index == 0 else st.remaining[index - 1]
        later = self.count(st.rules[index + 1 :], rows)
        for s in later.stats:
            totals[[COV, TP, FP]] += s[[COV, TP, FP]]
        if later.stats:
            totals[[UNC, TN, FN]] = later.stats[-1][[UNC, TN, FN]]
        elif index > 0:
            totals[[UNC, TN, FN]] = st.stats[index - 1][[UNC, TN, FN]]
        else:
            first = st.stats[0]
            totals[[UNC, TN, FN]] = [first[COV] + first[UNC], first[TN] + first[FP], first[TP] + first[FN]]
        potential = sum(
            p
            for rule, s in zip(later.rules, later.stats, strict=True)
            if (p := self._potential(rule, totals, s)) is not None
        )
        return data_dl(self.exp_fp, totals[COV], totals[UNC], totals[FP], totals[FN]) - potential

    def relative_dl(self, st: _Stats, index: int) -> float:
        """How many bits the rule at ``index`` costs compared with the best list without it."""
        return (
            self._min_dl_if_exists(st, index)
            + theory_dl(len(st.rules[index]), self.n_possible)
            - self._min_dl_if_deleted(st, index)
        )

    def reduce_dl(self, st: _Stats) -> _Stats:
        """Delete, last to first, every rule whose removal does not lengthen the description."""
        totals = self._totals(st.stats)
        keep = [True] * len(st.rules)
        for k in range(len(st.rules) - 1, -1, -1):
            if self._potential(st.rules[k], totals, st.stats[k]) is not None:
                keep[k] = False
        kept = [r for r, k in zip(st.rules, keep, strict=True) if k]
        return self.count(kept, self.data_bits)

    def has_positives(self, rows: np.ndarray) -> bool:
        return bool(bits.count(rows & self.pos_bits))

    def default_dl(self, rows: np.ndarray) -> float:
        return data_dl(self.exp_fp, 0.0, self.enc.total(rows), 0.0, self.enc.total(rows, self.pos[rows] == 1))

    # -- growing and pruning ----------------------------------------------------------

    def split(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Stratified, shuffled split into grow ((folds-1)/folds) and prune (1/folds) rows."""
        labels = self.enc.y[rows]
        folds, ordered = self.params.folds, self.w is not None
        # counts of whole rows come out the same in any order, so unweighted rows stay
        # ascending and every count over them reads memory in order; the permutation is
        # drawn all the same, so that every later draw stays where it was
        kernel = compiled_kernel(rows.size)
        split = (
            None
            if kernel is None
            else kernel.stratified_split(self.rng, rows, labels, self.enc.n_classes, folds, ordered)
        )
        if split is not None:
            return split
        prune = np.zeros(rows.size, dtype=bool)
        for c in np.flatnonzero(np.bincount(labels)):  # the classes present, ascending
            members = np.flatnonzero(labels == c)
            self.rng.shuffle(members)
            prune[members[: members.size // folds]] = True
        if not ordered:
            self.rng.shuffle(np.zeros(rows.size, dtype=np.uint8))  # Fisher-Yates draws the same for any item size
            return rows[~prune], rows[prune]
        order = self.rng.permutation(rows.size)
        grow_mask, prune_mask = ~prune[order], prune[order]
        return rows[order][grow_mask], rows[order][prune_mask]

    def _counts(self, rows: np.ndarray) -> np.ndarray:
        """The (2, n_slots) counts of negative and positive rows among ``rows`` (indices)."""
        return label_counts(self.enc, rows, self.pos[rows], 2)

    def _grow_counts(self, rows: np.ndarray, prune_rows: np.ndarray) -> np.ndarray | None:
        """The counts of the grow rows split from ``rows`` (bits), as those of ``rows`` less
        those of ``prune_rows``: a third of the rows counted where the grow rows were two
        thirds. ``rows`` are the rows no rule covers yet, which lose only what each new rule
        covers, so their counts follow from the last set's, less what it lost (700,000 rows:
        216 -> 157 million rows counted in all). Only whole counts: weighted sums would be
        added in another order. None where rows are weighted."""
        if self.w is not None:
            return None
        if not self.counted:
            self.counted.append((self.data_bits, self._counts(self.data)))
        known = None
        for earlier, counts in self.counted:  # the set it lies in that lost the fewest rows
            if not (rows & ~earlier).any():
                lost = bits.count(earlier & ~rows)
                if known is None or lost < known[0]:
                    known = (lost, earlier, counts)
        assert known is not None  # every set lies in the class's rows
        lost, earlier, counts = known
        if lost:
            if lost < bits.count(rows):
                counts = counts - self._counts(bits.indices(earlier & ~rows, self.enc.n_rows))
            else:
                counts = self._counts(bits.indices(rows, self.enc.n_rows))
            del self.counted[1:]
            self.counted.append((rows, counts))
        return counts - self._counts(prune_rows)

    def grow(self, rows: np.ndarray, start: Conds = (), counts: np.ndarray | None = None) -> Conds:
        """Add the best-gain condition until the rule is pure, out of features or too small
        (``counts``: :meth:`_counts` of ``rows``, where known)."""
        rule = list(start)
        if rows.size == 0:
            return tuple(rule)
        used = {
            c.column for c in rule if c.op == Op.MISSING or self.enc.kinds[self.enc.index(c.column)] == Kind.CATEGORICAL
        }
        limit = self.params.max_rule_length
        prior = (self.enc.total(rows, self.pos[rows] == 1) + 1.0) / (self.enc.total(rows) + 1.0)
        while rows.size and prior < 1.0 and (limit is None or len(rule) < limit):
            best = self._best_condition(rows, prior, used, counts)
            counts = None
            if best is None or best[1] < self.params.min_weight:
                break
            cond, _, rate = best
            rule.append(cond)
            if cond.op in (Op.EQ, Op.MISSING):
                used.add(cond.column)
            rows = self.enc.rows_where(cond, rows)
            prior = rate
        return tuple(rule)

    def _best_condition(
        self, rows: np.ndarray, prior: float, used: set[str], counts: np.ndarray | None
    ) -> tuple[Condition, float, float] | None:
        """The condition with the largest FOIL gain (ties: first feature, first value)."""
        best: tuple[Condition, float, float] | None = None
        best_gain = 0.0
        log_prior = math.log2(prior)
        if counts is None:
            counts = self._counts(rows)
        thresholds = self._thresholds(counts, log_prior)
        le_p, le_t, ge_p, ge_t = thresholds.le_p, thresholds.le_t, thresholds.ge_p, thresholds.ge_t
        # every threshold of every numeric feature scored at once, each feature's best below
        le_gain = le_p * (np.log2((le_p + 1.0) / (le_t + 1.0)) - log_prior)
        ge_gain = ge_p * (np.log2((ge_p + 1.0) / (ge_t + 1.0)) - log_prior)
        take_le = le_gain > ge_gain  # JRip prefers '>=' on ties
        for name, direction in self.directions.items():
            i = thresholds.position[self.enc.names.index(name)]
            take_le[int(thresholds.bounds[i]) : int(thresholds.bounds[i + 1])] = direction < 0
        threshold_gain = np.where(take_le, le_gain, ge_gain)
        for j, name in enumerate(self.enc.names):
            categorical = self.enc.kinds[j] == Kind.CATEGORICAL
            # the level counts end with the missing values' row; the threshold counts carry them too
            table = categorical_candidates(self.enc, j, counts) if categorical and name not in used else None
            # a column a rule already bounds has no missing values among its rows: cover 0, no gain
            if self.params.missing_tests and name not in used:
                assert thresholds.missing is not None  # counted where missing-value tests are asked for
                missing = table[-1] if table is not None else thresholds.missing[:, thresholds.position[j]]
                accu, cover = float(missing[1]), float(missing.sum())
                gain = accu * (math.log2((accu + 1.0) / (cover + 1.0)) - log_prior) if cover else 0.0
                if gain > best_gain:
                    best_gain = gain
                    best = (Condition(name, Op.MISSING), accu, (accu + 1) / (cover + 1))
            if categorical:
                if table is None:
                    continue
                table = table[:-1]
                accu, cover = table[:, 1].astype(np.float64), across(table, np.add).astype(np.float64)
                gain = accu * (np.log2((accu + 1.0) / (cover + 1.0)) - log_prior)
                if gain.size == 0:
                    continue
                k = int(np.argmax(gain))
                if gain[k] > best_gain:
                    best_gain = float(gain[k])
                    best = (Condition(name, Op.EQ, self.enc.levels[j][k]), accu[k], (accu[k] + 1) / (cover[k] + 1))
                continue
            i = thresholds.position[j]
            start, stop = int(thresholds.bounds[i]), int(thresholds.bounds[i + 1])
            if stop == start:
                continue
            k = start + int(np.argmax(threshold_gain[start:stop]))
            if threshold_gain[k] > best_gain:
                best_gain = float(threshold_gain[k])
                if take_le[k]:
                    cond = Condition(name, Op.LE, float(thresholds.values[k]))
                    best = (cond, le_p[k], (le_p[k] + 1) / (le_t[k] + 1))
                else:
                    cond = Condition(name, Op.GE, float(thresholds.lows[k]))
                    best = (cond, ge_p[k], (ge_p[k] + 1) / (ge_t[k] + 1))
        return best

    def _thresholds(self, counts: np.ndarray, log_prior: float) -> _Scored:
        """Every numeric feature's threshold candidates with their counts, or, where the
        compiled kernel is loaded and no missing-value tests are asked for, only those
        whose gain may be the feature's greatest (the others' gains need not be made:
        scoring 112,000 candidates a search took a fifth of RIPPER's time on 700,000 rows)."""
        kernel = compiled_kernel(0)
        # the kernel keeps the candidates best either way; a constrained feature wants one way's best
        if kernel is not None and not self.params.missing_tests and not self.directions:
            offsets = self.enc.slot_offsets[: len(self.enc.numeric_features) + 1]
            logs = self.logs if counts.dtype.kind == "i" else np.zeros(0)
            slots, bounds, le_p, le_t, ge_p, ge_t = kernel.foil_candidates(counts, offsets, log_prior, logs)
            values, lows = self.enc.slot_values[slots], self.enc.slot_lows[slots]
            return _Scored(values, lows, le_p, le_t, ge_p, ge_t, bounds, self.enc.slot_row, None)
        t = numeric_candidates(self.enc, counts)
        le_p, le_t = t.at_most[1].astype(np.float64), across(t.at_most.T, np.add).astype(np.float64)
        ge_p, ge_t = t.at_least[1].astype(np.float64), across(t.at_least.T, np.add).astype(np.float64)
        return _Scored(t.values, t.lows, le_p, le_t, ge_p, ge_t, t.bounds, t.position, t.missing)

    def prune(self, rule: Conds, rows: np.ndarray, use_whole: bool) -> Conds:
        """Keep the prefix of conditions with the best worth on ``rows`` (shorter on ties)."""
        if rows.size == 0 or not rule:
            return rule
        pos = self.pos[rows].astype(bool)
        total, positives = self.enc.total(rows), self.enc.total(rows, pos)
        best_worth, best_len = (positives + 1.0) / (total + 2.0), 0
        covered = np.ones(rows.size, dtype=bool)
        kept = rows  # whole rows are counted among the rows still covered, which shrink
        for length, cond in enumerate(rule, 1):
            if self.w is None:
                kept = self.enc.rows_where(cond, kept)
                p = float(np.count_nonzero(self.pos[kept]))
                n = kept.size - p
                uncovered_negatives = total - positives - n
            else:
                covered &= self.enc.condition_mask(cond, rows)
                p = self.enc.total(rows, covered & pos)
                n = self.enc.total(rows, covered) - p
                uncovered_negatives = self.enc.total(rows, ~covered & ~pos)
            if use_whole:
                worth = (p + uncovered_negatives) / total
            elif self.params.prune_metric == "cohen":
                worth = (p - n) / (p + n) if p + n > 0 else -1.0
            else:
                worth = (p + 1.0) / (p + n + 2.0)
            if worth > best_worth:
                best_worth, best_len = worth, length
        return rule[:best_len]

    def grow_and_prune(self, rows_bits: np.ndarray) -> Conds:
        rows = bits.indices(rows_bits, self.enc.n_rows)
        if not self.params.pruning:
            return self.grow(rows)
        grow_rows, prune_rows = self.split(rows)
        counts = self._grow_counts(rows_bits, prune_rows)
        return self.prune(self.grow(grow_rows, counts=counts), prune_rows, use_whole=False)

    # -- the stages -------------------------------------------------------------------

    def _stop(self, stats: np.ndarray, min_dl: float, dl: float) -> bool:
        if dl > min_dl + self.params.dl_slack:
            return True
        if stats[TP] <= 0:
            return True
        return self.params.check_error_rate and stats[FP] / stats[COV] >= 0.5

    def build(self, max_rules: int | None) -> list[Conds]:
        """Add grown-and-pruned rules until the description length or error says stop."""
        rules: list[Conds] = []
        rows = self.data_bits
        dl = min_dl = self.default_dl(self.data)
        st = _Stats([], [], [])
        while self.has_positives(rows) and (max_rules is None or len(rules) < max_rules):
            if budget.ran_out(f"ripper: rules for class '{self.enc.classes[self.cls]}' stopped after {len(rules)}"):
                break
            rule = self.grow_and_prune(rows)
            trial = self.extend(st, [rule])
            dl += self.relative_dl(trial, len(rules))
            min_dl = min(min_dl, dl)
            if self._stop(trial.stats[-1], min_dl, dl):
                break
            rules.append(rule)
            if self.on_rule is not None:
                self.on_rule(len(rules))
            st = trial
            rows = trial.remaining[-1]
        return rules

    def optimise(self, rules: list[Conds], max_rules: int | None) -> list[Conds]:
        """One optimisation pass: replace or revise each rule, cover what is left, drop rules by DL."""
        final = _Stats([], [], [])
        rows = self.data_bits
        dl = min_dl = self.default_dl(self.data)
        position = 0
        while self.has_positives(rows):
            if position < len(rules) and budget.ran_out(
                "ripper: optimisation stopped part-way: the rules after it as built"
            ):
                final = self.extend(final, rules[position:])
                break
            if position >= len(rules):
                if max_rules is not None and len(rules) >= max_rules:
                    break
                rule = self.grow_and_prune(rows)
                trial = self.extend(final, [rule])
                dl += self.relative_dl(trial, position)
                min_dl = min(min_dl, dl)
                if self._stop(trial.stats[-1], min_dl, dl):
                    break
                rules.append(rule)
            else:
                rule = self._best_variant(rules, position, rows, final)
                rules[position] = rule
                trial = self.extend(final, [rule])
            final = trial
            rows = final.remaining[-1]
            position += 1
        # Rules after the point where no positives remain can only add false positives.
        return self.reduce_dl(final).rules

    def _best_variant(self, rules: list[Conds], position: int, rows_bits: np.ndarray, final: _Stats) -> Conds:
        old = rules[position]
        if not bits.count(self.covers_bits(old) & rows_bits):
            return old
        grow_rows, prune_rows = self.split(bits.indices(rows_bits, self.enc.n_rows))
        counts = self._grow_counts(rows_bits, prune_rows)
        if position + 1 < len(rules):  # the rows a later rule covers, as one bit set (not a mask per rule)
            later = functools.reduce(np.bitwise_or, (self.covers_bits(r) for r in rules[position + 1 :]))
            prune_rows = prune_rows[~bits.test(later, prune_rows)]
        replace = self.prune(self.grow(grow_rows, counts=counts), prune_rows, use_whole=True)
        revise_rows = grow_rows[self.covers(old, grow_rows)]
        revision = self.prune(self.grow(revise_rows, start=old), prune_rows, use_whole=True)

        def dl_with(variant: Conds) -> float:
            return self.relative_dl(self.extend(final, [variant, *rules[position + 1 :]]), position)

        old_dl, rev_dl, rep_dl = dl_with(old), dl_with(revision), dl_with(replace)
        if old_dl <= rev_dl and old_dl <= rep_dl:
            return old
        return revision if rev_dl <= rep_dl else replace

    def learn(self, max_rules: int | None) -> list[Conds]:
        rules = self.build(max_rules)
        if self.params.pruning:
            for _ in range(self.params.optimizations):
                if budget.ran_out("ripper: optimisation passes skipped"):
                    break
                rules = self.optimise(rules, max_rules)
        return rules


def _possible_conditions(enc: Encoded, missing_tests: bool = False) -> float:
    """JRip's count of conditions a rule could use: levels, and two per distinct numeric value
    (and, with missing tests, one per feature that has missing values)."""
    total = 0.0
    for j, kind in enumerate(enc.kinds):
        if missing_tests and enc.has_missing(j):
            total += 1.0
        total += len(enc.levels[j]) if kind == Kind.CATEGORICAL else 2.0 * enc.distinct_count(j)
    return max(total, 1.0)


def _class_order(enc: Encoded) -> list[int]:
    counts = enc.class_counts(np.arange(enc.n_rows))
    return sorted(range(enc.n_classes), key=lambda c: (counts[c], c))


def _directions(enc: Encoded, cls: int, signs: tuple[int, ...] | None) -> dict[str, int]:
    """Which way class ``cls``'s rules may bound each constrained feature: a rule for the
    second class may only switch on as a '+' feature rises ('x >= v'), a rule for the
    first only switch off ('x <= v'); '-' the other way."""
    if signs is None:
        return {}
    toward = 1 if cls == 1 else -1
    return {name: sign * toward for name, sign in zip(enc.names, signs, strict=True) if sign}


def _learn_ordered(
    enc: Encoded,
    params: RipperParams,
    rng: np.random.Generator,
    on_rule: Progress | None,
    signs: tuple[int, ...] | None = None,
) -> tuple[list[Rule], int]:
    order = _class_order(enc)
    counts = enc.class_counts(np.arange(enc.n_rows))
    rows = np.arange(enc.n_rows)
    rules: list[Rule] = []
    for i, cls in enumerate(order[:-1]):
        remaining_budget = None if params.max_rules is None else params.max_rules - len(rules)
        if rows.size == 0 or not (enc.y[rows] == cls).any() or remaining_budget == 0:
            continue
        exp_fp = counts[cls] / counts[order[i:]].sum()
        done = len(rules)
        tick = None if on_rule is None else (lambda k, done=done: on_rule(done + k))
        learner = _ClassLearner(enc, cls, rows, exp_fp, params, rng, tick, _directions(enc, cls, signs))
        class_rules = learner.learn(remaining_budget)
        for conds in class_rules:
            rules.append(Rule(conds, enc.classes[cls]))
            rows = rows[~learner.covers(conds, rows)]
    return rules, order[-1]


def _learn_unordered(
    enc: Encoded, params: RipperParams, rng: np.random.Generator, on_rule: Progress | None
) -> list[Rule]:
    """Every class against all the others on all rows (Cohen 1995's unordered RIPPER)."""
    counts = enc.class_counts(np.arange(enc.n_rows))
    rows = np.arange(enc.n_rows)
    rules: list[Rule] = []
    for cls in _class_order(enc):
        remaining_budget = None if params.max_rules is None else params.max_rules - len(rules)
        if remaining_budget == 0:
            break
        done = len(rules)
        tick = None if on_rule is None else (lambda k, done=done: on_rule(done + k))
        learner = _ClassLearner(enc, cls, rows, counts[cls] / counts.sum(), params, rng, tick)
        rules.extend(Rule(conds, enc.classes[cls]) for conds in learner.learn(remaining_budget))
    return rules


def fit_ripper(
    ds: Dataset | EngineTable, params: RipperParams, *, progress: Progress | None = None
) -> DecisionList | RuleSet | RuleRegression:
    """Learn a RIPPER rule list (or, with ``unordered``, a rule set voting by confidence);
    for a numeric target, rules that predict a number.

    Examples
    --------
    >>> import polars as pl
    >>> from rulecli.dataset import DataSpec, prepare_dataset
    >>> df = pl.DataFrame({"x": [float(i) for i in range(40)], "y": ["a"] * 10 + ["b"] * 30})
    >>> model = fit_ripper(prepare_dataset(df, DataSpec()), RipperParams())
    >>> [r.conditions[0].op.value for r in model.rules], model.default.prediction
    (['<='], 'b')
    """
    if getattr(ds, "weights", None) is not None and is_whole(ds.weights):
        # the grow/prune splits are drawn from the copies whole weights stand for;
        # fractional weights weigh every count, rows split whole (an engine's rows weigh 1)
        ds = ds.as_copies("ripper")
    fit = _fit_numbers if ds.regression else _fit_classes
    model = fit(ds, params, progress)
    if not (params.default_check and model.rules and ds.n_rows <= NOISE_ROWS):
        return model
    checked = beats_default(ds, params.seed, lambda train: fit(train, params, None))
    if checked is None or checked[0] >= checked[1]:
        return model
    dropped = {"rules": len(model.rules), "held_out_score": checked[0], "default_held_out_score": checked[1]}
    return _default_alone(ds, model, dropped)


def _default_alone(ds: Dataset | EngineTable, model: M, dropped: dict[str, object]) -> M:
    """The model without its rules: the default rule over every row (the majority class,
    or the rows' mean or median), with ``training.rules_dropped``."""
    if isinstance(model, RuleRegression):
        assert isinstance(ds, Dataset)
        y = ds.y.astype(np.float64)
        average = str(model.info.params.get("average", "mean"))
        alone = number_model(Encoded.from_dataset(ds), y, ds.target, [], ordered=True, average=average, info=model.info)
        training = dict(model.info.training) | {"rules": 0, "rules_dropped": dropped}
        return dataclasses.replace(
            model, rules=(), default=alone.default, info=dataclasses.replace(model.info, training=training)
        )
    majority = ds.classes[int(np.argmax(ds.class_counts()))]
    _, default = list_rule_stats(counting.covering_counts(ds), [], majority)
    info = dataclasses.replace(model.info, training=training_summary(ds, []) | {"rules_dropped": dropped})
    return dataclasses.replace(model, rules=(), default=default, info=info)


def _fit_classes(ds: Dataset | EngineTable, params: RipperParams, progress: Progress | None) -> DecisionList | RuleSet:
    enc = counting.covering_counts(ds)
    rng = np.random.default_rng(params.seed)
    info = ModelInfo(algorithm="ripper", params=params.record(), schema=ds.schema)
    signs = monotone_signs(params.monotone, ds)
    if signs is not None and params.unordered:
        raise ParamError(
            "takes an ordered list: an unordered rule set's votes for both classes can move either way",
            param="monotone",
        )
    if params.unordered:
        raw = _learn_unordered(enc, params, rng, progress)
        rule_set = set_rule_stats(enc, raw, laplace_weights=True)
        default = set_default_rule(enc, raw)
        model: DecisionList | RuleSet = RuleSet(ds.target, ds.classes, tuple(rule_set), default, Vote.BEST, info)
    else:
        # a budget is met by dropping rules from the whole list (rulecli.search.selection)
        whole = dataclasses.replace(params, max_rules=None) if params.max_rules else params
        raw, default_class = _learn_ordered(enc, whole, rng, progress, signs)
        if params.max_rules and len(raw) > params.max_rules:
            raw = _within_budget(enc, raw, default_class, params.max_rules)
        listed, default = list_rule_stats(enc, raw, enc.classes[default_class])
        model = DecisionList(ds.target, ds.classes, tuple(listed), default, info)
    model = simplify(model)
    if signs is not None:
        model = _monotone_shares(model)
    training = training_summary(ds, model.rules)
    return dataclasses.replace(model, info=dataclasses.replace(info, training=training))


# a numeric target's rules are searched for on at most this many rows: each rule costs passes
# over the rows left, and a table of numbers supports more rules the more rows it has (on the
# synthetic table of BENCHMARKS.md, 746 rules in 74 s at a million rows)
NUMBER_ROWS = 300_000


def _fit_numbers(ds: Dataset | EngineTable, params: RipperParams, progress: Progress | None) -> RuleRegression:
    """RIPPER on a numeric target: grow on 2/3 of the rows left, prune on 1/3, go on while the
    rules beat the rows' mean on their held-out rows (:func:`rulecli.search.number_rules.irep_list`).
    The description length and the optimisation passes are for classes."""
    if not params.pruning:
        raise ParamError("a numeric target's rules are kept by how they predict held-out rows", param="pruning")
    if params.monotone is not None:
        raise ParamError("takes classes (tree and forest take it for a number)", param="monotone")
    assert isinstance(ds, Dataset)  # an engine's rows: the sample it draws (rulecli.api.learning.fit_model)

    def learn(moments: Moments) -> list[tuple[Condition, ...]]:
        search = RuleSearch(moments, max(params.min_weight, 1.0), params.max_rule_length, params.missing_tests)
        return irep_list(
            search,
            np.random.default_rng(params.seed),
            folds=params.folds,
            max_rules=params.max_rules,
            stop=lambda rules: budget.ran_out(f"ripper: the rules stopped after {rules}"),
            on_rule=progress,
        )

    info = ModelInfo(algorithm="ripper", params=params.record(), schema=ds.schema)
    ordered = not params.unordered
    return learned_model(
        ds, learn, learn_rows=NUMBER_ROWS, seed=params.seed, ordered=ordered, average=params.average, info=info
    )


def _within_budget(enc: Encoded, rules: list[Rule], default_class: int, budget: int) -> list[Rule]:
    """The ``budget`` rules of the list that keep the most training rows predicted right."""
    masks = np.stack([enc.rule_mask(r.conditions) for r in rules])
    predicted = [enc.classes.index(r.prediction) for r in rules] + [default_class]
    right = np.stack([enc.y == c for c in predicted])
    return [rules[k] for k in kept_rules(masks, right, enc.w, budget)]


def _monotone_shares(model: DecisionList | RuleSet) -> DecisionList | RuleSet:
    """A two-class list's class shares made to fall down the list, the default last.
    Every rule predicts one class; a constrained feature moving the allowed way only
    switches rules on (or only off), so the deciding rule moves up (or down) the list, and
    the predicted share moves the allowed way too. Shares that break the order are pooled
    into their weighted mean (the rule's class and training counts stay as they are)."""
    assert isinstance(model, DecisionList) and model.default is not None
    rules = [*model.rules, model.default]
    if not model.rules or any(r.stats is None or r.stats.class_counts is None for r in rules):
        return model
    k = model.classes.index(model.rules[0].prediction)
    counts = np.array([r.stats.class_counts for r in rules], dtype=np.float64)  # type: ignore[union-attr]
    totals = counts.sum(axis=1)
    shares = np.divide(counts[:, k], totals, out=np.zeros_like(totals), where=totals > 0)
    pooled = pooled_non_increasing(shares, totals)
    if np.array_equal(pooled, shares):
        return model
    fitted = [
        dataclasses.replace(r, probabilities=(1 - q, q) if k == 1 else (q, 1 - q))
        for r, q in zip(rules, pooled.tolist(), strict=True)
    ]
    return dataclasses.replace(model, rules=tuple(fitted[:-1]), default=fitted[-1])


LEARNER = Learner(
    name="ripper",
    params=RipperParams,
    fit=fit_ripper,
    summary=rules_summary("ripper"),
    help="Learn RIPPER rules (Cohen 1995) as Weka's JRip does: an ordered rule list, rarest class first; for a "
    "number, a list of rules of constants.",
    numeric_target=True,
    engines=("memory", "duckdb", "spark"),
    examples=(
        "rulecli ripper sample_data/penguins.csv -y species -o penguins.ripper.json",
        "rulecli ripper sample_data/labor.csv --unordered --test sample_data/labor.csv --metrics-out labor.json",
    ),
)
