"""Bayesian Rule Lists (Letham, Rudin, McCormick & Madigan 2015), with the bit-vector
coverage of Scalable BRL (Yang, Rudin & Seltzer 2017).

1. Pre-mining: numeric features are discretised (cuts stored), every feature = value
   (and "is missing") is an item, and :func:`rulecli.search.patterns.mine` finds every
   conjunction with support >= ``min_support`` and length <= ``max_length``, without
   looking at the class. These are the candidate rules A.
2. Model of a decision list d = (a_1 .. a_m, default):
   prior  p(m) ∝ λ^m / m! truncated to 0..|A|; each rule's cardinality
          p(c_j) ∝ η^c / c! over the cardinalities that still have unused rules; the rule
          uniform among the unused rules of that cardinality;
   likelihood: the rows each rule captures (matched by it, by no earlier rule) are
          Dirichlet-multinomial with pseudo-counts α per class:
          Σ_j [lnΓ(Kα) − lnΓ(Kα + N_j) + Σ_k (lnΓ(α + N_jk) − lnΓ(α))].
3. Search: Metropolis–Hastings with the moves add (an unused rule at a position),
   remove (a rule) and swap (two positions), each chosen uniformly among those possible;
   the Hastings ratio counts the choices. ``chains`` independent chains from the empty
   list, each with its own seed; the first ``burn_in`` iterations of each are not used for
   the convergence diagnostic (Gelman–Rubin R-hat of the log posterior across chains).
   The result is the maximum a-posteriori list seen in any chain.

Coverage is bit vectors: a list's "captured by rule j" rows are cover_j AND NOT (the union
of the earlier covers); a chain keeps those prefix unions and the class counts per
position, so a move recomputes only the positions from the first one it changed.
Each rule's class probabilities are the posterior means (α + N_jk) / (Kα + N_j).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rulecli import budget
from rulecli.counting import bits
from rulecli.counting.cells import feature_cells
from rulecli.dataset import Dataset
from rulecli.discretize import WEKA_MIN_BUCKET
from rulecli.display import counted
from rulecli.errors import ParamError
from rulecli.learners import Learner, Progress
from rulecli.model.core import Condition, DecisionList, ModelInfo, Rule, RuleStats
from rulecli.params import Params, bins_param, discretize_param, monotone_param, param, seed_param
from rulecli.schema import Schema
from rulecli.search.monotone import refuse_monotone
from rulecli.search.patterns import Items, Patterns, mine
from rulecli.stats import is_whole, tally

PROGRESS_EVERY = 250


BRL_MONOTONE = (
    "brl samples lists of mined intervals that bound a column from both sides (ripper, tree and forest take it)"
)


@dataclass(frozen=True, kw_only=True)
class BRLParams(Params):
    min_support: float = param(0.1, "Mine patterns held by at least this share of rows.", gt=0.0, le=1.0)
    max_length: int = param(2, "At most this many conditions per rule.", ge=1, flag="max-rule-length")
    lam: float = param(3.0, "Prior expected list length (truncated Poisson).", flag="lambda", gt=0)
    eta: float = param(1.0, "Prior expected conditions per rule (truncated Poisson).", gt=0)
    alpha: float = param(1.0, "Dirichlet pseudo-count per class.", gt=0, flag="pseudo-count")
    chains: int = param(3, "Independent Metropolis-Hastings chains.", ge=1)
    iterations: int = param(10_000, "Iterations per chain.", ge=1)
    burn_in: int | None = param(None, "Iterations per chain left out of R-hat (default: half).", ge=0)
    discretize: str = discretize_param("equal-frequency")
    bins: int = bins_param(3)
    monotone: str | None = monotone_param(BRL_MONOTONE)
    seed: int = seed_param()

    def check(self) -> None:
        if self.burn_in is not None and self.burn_in >= self.iterations:
            raise ParamError(
                f"must be less than the iterations ({self.iterations}), got {self.burn_in}", param="burn_in"
            )

    @property
    def burn(self) -> int:
        return self.iterations // 2 if self.burn_in is None else self.burn_in


# ------------------------------------------------------------------------- the items


@dataclass(frozen=True)
class _ItemTable:
    items: Items
    conditions: tuple[Condition, ...]
    schema: Schema


def _items(ds: Dataset, params: BRLParams) -> _ItemTable:
    bins = WEKA_MIN_BUCKET if params.discretize == "min-bucket" else params.bins
    masks, feature_of, conditions = [], [], []
    cells = feature_cells(ds, params.discretize, bins)
    for j, cell in enumerate(cells):
        for code, condition in enumerate(cell.conditions):
            mask = cell.codes == code
            if mask.any():
                masks.append(bits.pack(mask))
                feature_of.append(j)
                conditions.append(condition)
    words = -(-ds.n_rows // 64)
    matrix = np.stack(masks) if masks else np.zeros((0, words), dtype=np.uint64)
    items = Items(np.array(feature_of, dtype=np.int64), matrix)
    return _ItemTable(items, tuple(conditions), Schema(tuple(c.feature for c in cells), ds.schema.target))


# --------------------------------------------------------------------- the posterior


class Posterior:
    """Log prior and log likelihood of decision lists over the mined rules."""

    def __init__(
        self, patterns: Patterns, y: np.ndarray, n_classes: int, params: BRLParams, weights: np.ndarray | None = None
    ) -> None:
        self.patterns = patterns
        self.n_rules = patterns.size
        self.k = n_classes
        self.class_bits = np.stack([bits.pack(y == c) for c in range(n_classes)])
        self.all_rows = bits.pack(np.ones(y.size, dtype=bool))
        # weighted rows: each class's weights per row; whole weights keep counts integers
        self.class_weights = (
            None if weights is None else np.stack([np.where(y == c, weights, 0.0) for c in range(n_classes)])
        )
        self.whole = weights is None or is_whole(weights)
        if weights is None:
            self.class_totals = np.bincount(y, minlength=n_classes).astype(np.int64)
        else:
            totals = np.bincount(y, weights=weights, minlength=n_classes)
            self.class_totals = totals.astype(np.int64) if self.whole else totals
        n = int(self.class_totals.sum()) if self.whole else 0
        self.cardinality = patterns.cardinality
        self.max_card = int(self.cardinality.max()) if self.n_rules else 0
        self.per_card = np.bincount(self.cardinality, minlength=self.max_card + 1)
        self.log_lam = math.log(params.lam)
        self.log_eta = math.log(params.eta)
        terms = [k * self.log_lam - math.lgamma(k + 1) for k in range(self.n_rules + 1)]
        self.log_z_lam = float(np.logaddexp.reduce(terms))
        self.eta_list = [c * self.log_eta - math.lgamma(c + 1) for c in range(self.max_card + 1)]
        self.per_card_list = [int(v) for v in self.per_card]
        self.cardinality_list = [int(v) for v in self.cardinality]
        # lnΓ(α + c) and lnΓ(Kα + c) for every count c, by cumulative sums of logs (fractional
        # weighted counts call lgamma instead)
        alpha, total = params.alpha, params.alpha * n_classes
        steps = np.arange(n + 1, dtype=np.float64)
        self.lg_alpha = math.lgamma(alpha) + np.concatenate(([0.0], np.cumsum(np.log(alpha + steps[:-1]))))
        self.lg_total = math.lgamma(total) + np.concatenate(([0.0], np.cumsum(np.log(total + steps[:-1]))))
        self.alpha, self.total_alpha = alpha, total

    def log_prior(self, rules: list[int]) -> float:
        # plain Python: lists are short and cardinalities few, and NumPy's per-call cost dominates
        m = len(rules)
        out = m * self.log_lam - math.lgamma(m + 1) - self.log_z_lam
        left = list(self.per_card_list)
        eta = self.eta_list
        for r in rules:
            c = self.cardinality_list[r]
            out += eta[c] - math.log(sum(math.exp(eta[k]) for k in range(1, len(left)) if left[k] > 0))
            out -= math.log(left[c])
            left[c] -= 1
        return out

    def captured_counts(self, cover: np.ndarray, taken: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class counts of the rows ``cover`` captures after ``taken``, and the new union."""
        captured = cover & ~taken
        if self.class_weights is None:
            counts = np.bitwise_count(self.class_bits & captured).sum(axis=1, dtype=np.int64)
        else:
            counts = bits.weighted_counts(captured, self.class_weights)
            counts = np.rint(counts).astype(np.int64) if self.whole else counts
        return counts, taken | cover

    def log_likelihood_of(self, counts: np.ndarray) -> float:
        """Dirichlet-multinomial marginal of rows per position ((m+1, K) counts)."""
        totals = counts.sum(axis=1)
        if not self.whole:
            lg = np.vectorize(math.lgamma, otypes=[np.float64])
            return float(
                (lg(self.total_alpha) - lg(self.total_alpha + totals)).sum()
                + (lg(self.alpha + counts) - lg(self.alpha)).sum()
            )
        return float(
            (self.lg_total[0] - self.lg_total[totals]).sum() + (self.lg_alpha[counts] - self.lg_alpha[0]).sum()
        )


@dataclass
class _State:
    rules: list[int]
    unions: list[np.ndarray]  # unions[j]: rows covered by rules[:j]  (len m + 1)
    counts: np.ndarray  # (m + 1, K): captured class counts per rule, then the default
    log_prior: float
    log_likelihood: float

    @property
    def log_posterior(self) -> float:
        return self.log_prior + self.log_likelihood


def evaluate(post: Posterior, rules: list[int], base: _State | None = None, start: int = 0) -> _State:
    """The state of a list, reusing ``base``'s prefix unions and counts before ``start``."""
    unions = [np.zeros_like(post.all_rows)] if base is None or start == 0 else base.unions[: start + 1]
    rows = [] if base is None or start == 0 else [base.counts[j] for j in range(start)]
    taken = unions[-1]
    for r in rules[start:]:
        counts, taken = post.captured_counts(post.patterns.bits[r], taken)
        rows.append(counts)
        unions.append(taken)
    matrix = np.empty((len(rules) + 1, post.k), dtype=post.class_totals.dtype)
    if rows:
        matrix[:-1] = rows
    if post.whole:
        matrix[-1] = post.class_totals - matrix[:-1].sum(axis=0)  # the default takes every row left
    else:  # counted, not subtracted: fractional sums would leave rounding residue (even below 0)
        matrix[-1] = bits.weighted_counts(post.all_rows & ~taken, post.class_weights)
    return _State(list(rules), unions, matrix, post.log_prior(rules), post.log_likelihood_of(matrix))


# -------------------------------------------------------------------------- sampling


def _moves(m: int, n_rules: int) -> list[str]:
    return [name for name, ok in (("add", m < n_rules), ("remove", m >= 1), ("swap", m >= 2)) if ok]


@dataclass(frozen=True)
class ChainResult:
    best: _State
    trace: np.ndarray  # log posterior after each iteration
    accepted: int


def run_chain(
    post: Posterior, iterations: int, rng: np.random.Generator, on_iteration: Callable[[], None]
) -> ChainResult:
    state = evaluate(post, [])
    best = state
    trace = np.empty(iterations)
    accepted = 0
    for it in range(iterations):
        if budget.ran_out(f"brl: a chain stopped after {it:,} of {iterations:,} iterations"):
            trace = trace[:it]
            break
        m = len(state.rules)
        moves = _moves(m, post.n_rules)
        if not moves:
            trace[it] = state.log_posterior
            on_iteration()
            continue
        move = moves[int(rng.integers(len(moves)))]
        rules = list(state.rules)
        if move == "add":
            r = int(rng.integers(post.n_rules))
            while r in rules:
                r = int(rng.integers(post.n_rules))
            position = int(rng.integers(m + 1))
            rules.insert(position, r)
            start = position
            # reverse: remove it (1 of m + 1); forward: this rule (1 of |A| − m) at this place (1 of m + 1)
            log_q = math.log(len(moves)) - math.log(len(_moves(m + 1, post.n_rules))) + math.log(post.n_rules - m)
        elif move == "remove":
            position = int(rng.integers(m))
            del rules[position]
            start = position
            # reverse: add it back (1 of |A| − m + 1 rules, 1 of m places); forward: 1 of m rules
            log_q = math.log(len(moves)) - math.log(len(_moves(m - 1, post.n_rules))) - math.log(post.n_rules - m + 1)
        else:
            i = int(rng.integers(m))
            j = int(rng.integers(m - 1))
            i, j = sorted((i, j if j < i else j + 1))
            rules[i], rules[j] = rules[j], rules[i]
            start = i
            log_q = 0.0
        proposal = evaluate(post, rules, state, start)
        if math.log(rng.random() + 1e-300) < proposal.log_posterior - state.log_posterior + log_q:
            state = proposal
            accepted += 1
            if state.log_posterior > best.log_posterior:
                best = state
        trace[it] = state.log_posterior
        on_iteration()
    return ChainResult(best, trace, accepted)


def gelman_rubin(traces: list[np.ndarray]) -> float | None:
    """R-hat of equally long chains (None with one chain or no spread at all)."""
    if len(traces) < 2 or traces[0].size < 2:
        return None
    chains = np.stack(traces)
    n = chains.shape[1]
    means = chains.mean(axis=1)
    within = chains.var(axis=1, ddof=1).mean()
    between = n * means.var(ddof=1)
    if within == 0:
        return 1.0 if between == 0 else None
    pooled = (n - 1) / n * within + between / n
    return float(math.sqrt(pooled / within))


# ------------------------------------------------------------------------------- fit


def fit_brl(ds: Dataset, params: BRLParams, *, progress: Progress | None = None) -> DecisionList:
    refuse_monotone(params.monotone, BRL_MONOTONE)
    table = _items(ds, params)
    min_count = max(1, math.ceil(params.min_support * ds.total_weight))
    patterns = mine(table.items, min_count, params.max_length, ds.weights)
    post = Posterior(patterns, ds.y, len(ds.classes), params, ds.weights)
    seeds = np.random.SeedSequence(params.seed).spawn(params.chains)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None and done[0] % PROGRESS_EVERY == 0:
            progress(done[0])

    results = [run_chain(post, params.iterations, np.random.default_rng(s), tick) for s in seeds]
    best = max((r.best for r in results), key=lambda s: s.log_posterior)  # first chain wins ties
    # chains a time budget cut short are as long as the shortest
    shortest = min(r.trace.size for r in results)
    kept = [r.trace[params.burn : shortest] for r in results]
    training = {
        "rows": ds.total_weight,
        "patterns": patterns.size,
        "min_support_rows": min_count,
        "log_posterior": best.log_posterior,
        "log_prior": best.log_prior,
        "log_likelihood": best.log_likelihood,
        "rhat": gelman_rubin(kept),
        "acceptance": [round(r.accepted / max(1, r.trace.size), 4) for r in results],
        "chain_best_log_posterior": [r.best.log_posterior for r in results],
    }
    info = ModelInfo(
        algorithm="brl",
        params=params.record(),
        schema=table.schema,
        training=training,
    )
    return _decision_list(ds, table, patterns, best, params.alpha, info)


def _rule(conditions: tuple[Condition, ...], counts: np.ndarray, classes: tuple[str, ...], alpha: float) -> Rule:
    probabilities = (counts + alpha) / (counts.sum() + alpha * len(classes))
    k = int(np.argmax(probabilities))
    stats = RuleStats(tally(counts.sum()), tally(counts[k]), tuple(tally(c) for c in counts))
    return Rule(conditions, classes[k], stats, probabilities=tuple(float(p) for p in probabilities))


def _decision_list(
    ds: Dataset, table: _ItemTable, patterns: Patterns, state: _State, alpha: float, info: ModelInfo
) -> DecisionList:
    rules = []
    for position, r in enumerate(state.rules):
        conditions = tuple(table.conditions[i] for i in patterns.items[r])
        rules.append(_rule(conditions, state.counts[position], ds.classes, alpha))
    default = _rule((), state.counts[-1], ds.classes, alpha)
    return DecisionList(ds.target, ds.classes, tuple(rules), default, info)


def _summary(model: DecisionList) -> str:
    t = model.info.training
    rhat = t["rhat"]
    rhat_text = f"{rhat:.3f}" if isinstance(rhat, float) else "n/a"
    return (
        f"brl: {counted(len(model.rules), 'rule')} from {counted(t['patterns'], 'mined pattern')}; "
        f"log posterior {t['log_posterior']:.2f}; R-hat {rhat_text}"
    )


def _warnings(model: DecisionList) -> list[str]:
    rhat = model.info.training["rhat"]
    if isinstance(rhat, float) and rhat > 1.1:
        return [f"chains disagree (R-hat {rhat:.2f} > 1.1): raise `iterations` or check the list is stable"]
    return []


LEARNER = Learner(
    name="brl",
    params=BRLParams,
    fit=fit_brl,
    summary=_summary,
    warnings=_warnings,
    help="Learn a Bayesian Rule List (Letham et al. 2015) from pre-mined frequent patterns by "
    "Metropolis-Hastings; each rule carries its posterior class probabilities.",
    examples=(
        "rulecli brl sample_data/labor.csv --min-support 0.1 --seed 1 -o labor.brl.json",
        "rulecli brl sample_data/penguins.csv -y species --max-rule-length 1 --iterations 2000",
    ),
    steps=lambda params: params.chains * params.iterations,
    unit="iterations",
)
