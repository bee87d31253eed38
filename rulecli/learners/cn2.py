"""CN2: beam search for the best complex, then cover and remove.

References
----------
P. Clark and T. Niblett, "The CN2 induction algorithm", Machine Learning 3:261-283, 1989
(ordered rules: a decision list). P. Clark and R. Boswell, "Rule induction with CN2: some
recent improvements", EWSL 1991 (unordered rules, Laplace quality). The search: start
from the empty pattern; extend every pattern in the beam by every atomic selector; drop
patterns below the minimum support; score each as a rule (its majority class) with a
quality measure; remember the best; keep the ``beam_width`` best; repeat while the beam is
not empty. Emit the best rule, mark the rows it covers — they no longer count for support —
and repeat.

Selectors are ``a = v`` for categorical features and ``x <= v`` / ``x >= v`` at data values
for numeric ones (at most one of each per feature and rule, so intervals arise). A
specialisation that keeps exactly the rows of its parent is no specialisation and is
skipped. The best complex must also pass Clark & Niblett's likelihood-ratio test against
the class distribution of the rows it is learned from, at significance ``alpha``.

An unordered rule set predicts, as Clark & Boswell do, by summing the class distributions
(training counts) of the matching rules (``vote = distribution``); ``vote = best`` lets the
matching rule with the highest Laplace accuracy decide, which was 1.5 points more accurate
on the benchmark datasets (BENCHMARKS.md).

Default ``alpha = 0.05``: with ``alpha = 1`` (no test, Orange's default) entropy favours
rules covering a handful of rows and the list grows long, and such rules do not
generalise (Clark & Niblett's reason for the test); 0.05 is the conventional level, and on the benchmark data
it gives shorter lists at no loss of accuracy (BENCHMARKS.md).

That test alone does not scale: against the class distribution a rule is learned from,
a pocket of a few rows of one class at the end of a numeric range is significant, and the
more rows, the more such pockets the search finds (on planted rules with 10 % label
noise the list grew from 61 to 221 rules and lost a point from 10,000 to 100,000 rows).
Each condition added must therefore also raise the share of the rule's class (its
majority class; for a rule set, the class it is learned for) significantly above the
share in the rows before it — Orange's "parent alpha" — by a one-degree-of-freedom
likelihood-ratio test at ``alpha`` divided, as Bonferroni does, by the number of
(feature, operator) families tried at that step: the candidate thresholds of one
family are nested sets, not independent tests (D. Jensen and P. Cohen, "Multiple
comparisons in induction algorithms", Machine Learning 38:309-338, 2000, on why an
uncorrected search overfits more the more it compares). Candidates that fail it neither
enter the beam nor become the rule. For a rule set, the search for a class also stops
once no rule raises that class above its share of all the training rows: the rows left
for a class hold fewer of it with every rule, and against them a rule mostly of other
classes would otherwise pass.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from rulecli import budget, counting
from rulecli.counting.encoded import Encoded, across
from rulecli.dataset import Dataset
from rulecli.engines import EngineTable
from rulecli.errors import ParamError
from rulecli.learners import Learner, Progress, rules_summary
from rulecli.model.core import Condition, DecisionList, ModelInfo, Rule, RuleRegression, RuleSet, Vote
from rulecli.model.simplify import simplify
from rulecli.params import Params, average_param, beam_width_param, max_rules_param, monotone_param, param, seed_param
from rulecli.search.monotone import refuse_monotone
from rulecli.search.number_rules import Moments, RuleSearch, beam_rule, learned_model
from rulecli.search.rule_stats import list_rule_stats, set_default_rule, set_rule_stats, training_summary
from rulecli.search.selectors import Complex, Level, selectors
from rulecli.stats import chi2_critical

QUALITIES = ("entropy", "laplace", "accuracy")


CN2_MONOTONE = (
    "cn2's list mixes both classes' rules, and a rule's class is known only when its search ends "
    "(ripper, tree and forest take it)"
)


@dataclass(frozen=True, kw_only=True)
class CN2Params(Params):
    ordered: bool = param(
        True, "A decision list (Clark & Niblett) or a rule set per class (Clark & Boswell).", negative="unordered"
    )
    beam_width: int = beam_width_param(5)
    min_support: int | None = param(
        None,
        "Drop candidate rules covering fewer rows (counted by weight); "
        "default: 1 up to 7,500 rows, then one row in 5,000.",
        ge=1,
        flag="min-covered",
    )
    quality: str | None = param(
        None, "entropy (default for --ordered), laplace (default for --unordered) or accuracy.", choices=QUALITIES
    )
    alpha: float = param(
        0.05,
        "Significance level of the likelihood-ratio tests: each rule against the rows it is learned from, "
        "each condition against the rule without it (1 = no test).",
        gt=0.0,
        le=1.0,
    )
    vote: str = param(
        "distribution",
        "--unordered only: distribution (sum class counts) or best (most accurate rule).",
        choices=(Vote.DISTRIBUTION.value, Vote.BEST.value),
    )
    max_rule_length: int = param(5, "At most this many conditions per rule.", ge=1)
    max_rules: int | None = max_rules_param()
    average: str = average_param()
    monotone: str | None = monotone_param(CN2_MONOTONE)
    seed: int = seed_param()

    @property
    def measure(self) -> str:
        return self.quality or ("entropy" if self.ordered else "laplace")


def _quality(counts: np.ndarray, measure: str, target: int | None) -> np.ndarray:
    """Quality of candidate rules from their (m, K) class counts; higher is better."""
    n = across(counts, np.add).astype(np.float64)
    hits = across(counts, np.maximum) if target is None else counts[:, target]
    k = counts.shape[1]  # Clark & Boswell's k: the number of classes
    if measure == "laplace":
        return (hits + 1.0) / (n + k)
    if measure == "accuracy":
        return np.divide(hits, n, out=np.zeros_like(n), where=n > 0)
    shares = np.divide(counts, n[:, None], out=np.zeros(counts.shape), where=n[:, None] > 0)
    logs = np.log2(np.where(shares > 0, shares, 1.0))
    return across(shares * logs, np.add)  # minus the entropy


def _sizes(counts: np.ndarray) -> np.ndarray:
    """The rows each (m, K) row of class counts stands for."""
    return across(counts, np.add)


def _lrs(counts: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Likelihood-ratio statistic 2 * sum f ln(f / e) of each row of counts against ``prior``
    (one distribution for every row, or one per row)."""
    n = across(counts, np.add)[:, None].astype(np.float64)
    expected = n * (prior if prior.ndim == 2 else prior[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, counts * np.log(counts / np.where(expected > 0, expected, 1.0)), 0.0)
    return 2.0 * across(terms, np.add)


class _Search:
    """Beam search for the best complex over the current training rows."""

    def __init__(self, enc: Encoded, params: CN2Params, target: int | None) -> None:
        self.enc, self.params, self.target = enc, params, target
        self.critical = chi2_critical(params.alpha, enc.n_classes - 1)
        # a rule for a class must hold more of it than the training rows do (rule sets)
        whole = enc.class_counts(np.arange(enc.n_rows))
        self.base_share = None if target is None else float(whole[target] / whole.sum())
        # a specialisation that drops a row drops at least the lightest row's weight; summed
        # in another order, one that keeps every row may differ from its parent by rounding
        self.slack = 0.5 * (1.0 if enc.w is None else float(enc.w.min()))
        self.last: tuple[np.ndarray, np.ndarray] | None = None  # the last search's rows and their counts

    def _root_counts(self, rows: np.ndarray, gone: np.ndarray | None) -> np.ndarray:
        """The slots' class counts of ``rows``. The covering loop searches again on the rows
        the last rule left (``gone``: the last search's rows that ``rows`` lacks): their
        counts are the last search's less those of the rows it covered, far fewer than the
        rows left (whole counts only: weighted sums taken in another order could differ in
        the last bit)."""
        counts = None
        if self.last is not None and gone is not None and self.enc.w is None:
            before, before_counts = self.last
            if before.size - gone.size == rows.size and gone.size < rows.size:
                counts = before_counts - self.enc.count_classes([gone])[0]
        if counts is None:
            counts = self.enc.count_classes([rows])[0]
        self.last = (rows, counts)
        return counts

    def _raises(self, counts: np.ndarray, parent_counts: np.ndarray, families: int) -> np.ndarray:
        """Which candidates raise their class's share significantly above their parent's
        (a one-sided likelihood-ratio test of that share, Bonferroni over ``families``)."""
        picked = np.argmax(counts, axis=1) if self.target is None else np.full(counts.shape[0], self.target)
        at = np.arange(counts.shape[0])
        hits = counts[at, picked].astype(np.float64)
        n = across(counts, np.add).astype(np.float64)
        share = parent_counts[at, picked] / across(parent_counts, np.add)
        two = np.stack([hits, n - hits], axis=1)
        statistic = _lrs(two, np.stack([share, 1.0 - share], axis=1))
        return (hits > share * n) & (statistic > chi2_critical(self.params.alpha / max(families, 1), 1))

    def _kept(
        self,
        counts: np.ndarray,
        support: np.ndarray,
        owner: np.ndarray,
        parents: list[Complex],
        families: int,
    ) -> np.ndarray:
        """The candidates with enough rows that leave some of their parent's out (and, with
        ``alpha`` below 1, that raise their parent's accuracy significantly)."""
        params = self.params
        parent_counts = np.array([p.counts for p in parents])
        sizes = across(parent_counts, np.add)[owner]
        keep = np.flatnonzero((support >= params.min_support) & (support < sizes - self.slack))
        if params.alpha < 1.0:
            keep = keep[self._raises(counts[keep], parent_counts[owner[keep]], families)]
        return keep

    def best_complex(self, rows: np.ndarray, gone: np.ndarray | None = None) -> Complex | None:
        """The best significant complex found by the beam search (None if there is none);
        ``gone``: the rows of the last search that ``rows`` no longer holds."""
        enc, params = self.enc, self.params
        prior_counts = enc.class_counts(rows)
        prior = prior_counts / prior_counts.sum()
        beam = [Complex((), rows, -np.inf, prior_counts)]
        best: Complex | None = None
        seen: set[frozenset[Condition]] = set()
        for depth in range(params.max_rule_length):
            parents, cands = [], []
            counted = [self._root_counts(rows, gone)] if depth == 0 else enc.count_classes([p.rows for p in beam])
            for parent, slot_counts in zip(beam, counted, strict=True):
                cand = selectors(enc, parent.conditions, slot_counts, _sizes)
                if cand.counts.shape[0]:
                    parents.append(parent)
                    cands.append(cand)
            if not cands:
                break
            level = Level.of(parents, cands)
            counts = level.counts
            support = across(counts, np.add)
            keep = self._kept(counts, support, level.owner, parents, level.families)
            if keep.size == 0:
                break
            quality = _quality(counts[keep], params.measure, self.target)
            significant = _lrs(counts[keep], prior) > self.critical
            if self.base_share is not None:
                significant &= counts[keep, self.target] > self.base_share * support[keep]
            beam, level_best = level.next_beam(enc, keep, quality, support, significant, params.beam_width, seen)
            if level_best is not None and (
                best is None
                or (level_best.quality, float(level_best.counts.sum())) > (best.quality, float(best.counts.sum()))
            ):
                best = level_best
            if not beam:
                break
        return best


def _learn_ordered(enc: Encoded, params: CN2Params, on_rule: Progress | None) -> tuple[list[Rule], str]:
    search = _Search(enc, params, None)
    rows = np.arange(enc.n_rows)
    rules: list[Rule] = []
    gone = None
    while rows.size and (params.max_rules is None or len(rules) < params.max_rules):
        if budget.ran_out(f"cn2: the list stopped after {len(rules)} rules"):
            break
        best = search.best_complex(rows, gone)
        if best is None:
            break
        rules.append(Rule(best.conditions, enc.classes[int(np.argmax(best.counts))]))
        if on_rule is not None:
            on_rule(len(rules))
        gone = best.rows
        rows = np.setdiff1d(rows, gone, assume_unique=True)
    remaining = rows if rows.size else np.arange(enc.n_rows)
    return rules, enc.classes[int(np.argmax(enc.class_counts(remaining)))]


def _learn_unordered(enc: Encoded, params: CN2Params, on_rule: Progress | None) -> list[Rule]:
    rules: list[Rule] = []
    for cls in range(enc.n_classes):
        search = _Search(enc, params, cls)
        rows = np.arange(enc.n_rows)
        gone = None
        while (enc.y[rows] == cls).any() and (params.max_rules is None or len(rules) < params.max_rules):
            if budget.ran_out(f"cn2: rules for class '{enc.classes[cls]}' stopped after {len(rules)} rules in all"):
                break
            best = search.best_complex(rows, gone)
            if best is None or best.counts[cls] == 0:
                break
            rules.append(Rule(best.conditions, enc.classes[cls]))
            if on_rule is not None:
                on_rule(len(rules))
            gone = best.rows[enc.y[best.rows] == cls]  # the covered positives
            rows = np.setdiff1d(rows, gone, assume_unique=True)
    return rules


ROWS_PER_COVERED = 5_000
# a numeric target's rules are searched for on at most this many rows (see _fit_numbers)
NUMBER_ROWS = 200_000


def min_covered_for(rows: float) -> int:
    """The default least rows a rule covers: 1 (Orange's) on small tables, then one row in
    5,000. On a long table each condition that raises its class's share is significant even
    for a handful of rows, and every such rule costs a pass over all rows: on planted rules
    at 1,000,000 rows the list had 380 rules, 42 % of them covering fewer than 63 rows (0.45 %
    of the rows between them), in 30 CPU s; with 200, 184 rules in 19 CPU s, accuracy 0.8999 ->
    0.8998."""
    return max(1, round(rows / ROWS_PER_COVERED))


def fit_cn2(
    ds: Dataset | EngineTable, params: CN2Params, *, progress: Progress | None = None
) -> DecisionList | RuleSet | RuleRegression:
    """Learn an ordered CN2 decision list, or an unordered CN2 rule set (of rules predicting
    a number, for a numeric target).

    Examples
    --------
    >>> import polars as pl
    >>> from rulecli.dataset import DataSpec, prepare_dataset
    >>> df = pl.DataFrame({"c": ["u", "u", "u", "v", "v", "v"] * 4, "y": ["a", "a", "a", "b", "b", "b"] * 4})
    >>> model = fit_cn2(prepare_dataset(df, DataSpec()), CN2Params())
    >>> [(r.conditions[0].value, r.prediction) for r in model.rules], model.default.prediction
    ([('u', 'a')], 'b')
    """
    refuse_monotone(params.monotone, CN2_MONOTONE)
    if ds.regression:
        return _fit_numbers(ds, params, progress)
    if params.min_support is None:
        params = dataclasses.replace(params, min_support=min_covered_for(float(ds.class_counts().sum())))
    enc = counting.covering_counts(ds)
    info = ModelInfo(algorithm="cn2", params=params.record(), schema=ds.schema)
    if params.ordered:
        raw, default = _learn_ordered(enc, params, progress)
        listed, default_rule = list_rule_stats(enc, raw, default)
        model: DecisionList | RuleSet = DecisionList(ds.target, ds.classes, tuple(listed), default_rule, info)
    else:
        raw = _learn_unordered(enc, params, progress)
        rules = set_rule_stats(enc, raw, laplace_weights=params.vote in (Vote.BEST, Vote.WEIGHTED))
        default = set_default_rule(enc, rules)
        model = RuleSet(ds.target, ds.classes, tuple(rules), default, Vote(params.vote), info)
    model = simplify(model)
    training = {**training_summary(ds, model.rules), "quality": params.measure}
    return dataclasses.replace(model, info=dataclasses.replace(info, training=training))


def _fit_numbers(ds: Dataset | EngineTable, params: CN2Params, progress: Progress | None) -> RuleRegression:
    """CN2 on a numeric target: each rule the best significant complex of a beam search over
    the rows no rule covers yet (:func:`rulecli.search.number_rules.beam_rule`), on at most
    ``NUMBER_ROWS`` of them. Every rule costs passes over the rows left, and the rules a
    table of numbers supports grow with its rows: at 100,000 rows of the synthetic table of
    BENCHMARKS.md 438 rules took 15.9 s (the whole process), a million would take several
    minutes; on a million rows a sample of 100,000 scored test R² 0.943 in 17.9 s, of 200,000
    0.954 in 31.7 s (whole processes)."""
    if params.quality is not None:
        raise ParamError(
            "measures rules for classes; a numeric target's rules are measured by their variance", param="quality"
        )
    assert isinstance(ds, Dataset)  # engines learn classes only
    if params.min_support is None:
        learned_on = float(ds.total_weight) * min(1.0, NUMBER_ROWS / max(ds.n_rows, 1))
        params = dataclasses.replace(params, min_support=min_covered_for(learned_on))

    def learn(moments: Moments) -> list[tuple[Condition, ...]]:
        search = RuleSearch(moments, params.min_support or 1, params.max_rule_length, alpha=params.alpha)
        rows = np.arange(moments.enc.n_rows)
        raw: list[tuple[Condition, ...]] = []
        while rows.size and (params.max_rules is None or len(raw) < params.max_rules):
            if budget.ran_out(f"cn2: the rules stopped after {len(raw)}"):
                break
            conditions = beam_rule(search, rows, params.beam_width)
            if conditions is None:
                break
            raw.append(conditions)
            if progress is not None:
                progress(len(raw))
            rows = rows[~moments.enc.rule_mask(conditions, rows)]
        return raw

    info = ModelInfo(algorithm="cn2", params=params.record(), schema=ds.schema, training={"quality": "variance"})
    return learned_model(
        ds, learn, learn_rows=NUMBER_ROWS, seed=params.seed, ordered=params.ordered, average=params.average, info=info
    )


LEARNER = Learner(
    name="cn2",
    params=CN2Params,
    fit=fit_cn2,
    summary=rules_summary("cn2"),
    help="Learn CN2 rules (Clark & Niblett 1989; Clark & Boswell 1991) by beam search; for a number, "
    "rules of constants.",
    examples=(
        "rulecli cn2 sample_data/penguins.csv -y species --unordered -o penguins.cn2.json",
        "rulecli cn2 sample_data/labor.csv --beam-width 5 --alpha 1 --cv 5",
    ),
    numeric_target=True,
    engines=("memory", "duckdb", "spark"),
)
