"""Rough-set reducts and the rules they give (Pawlak 1982, 1991).

Numeric attributes are discretised first (``--discretize``, cuts stored in the model);
a missing value is one more value. :mod:`rulecli.search.roughset` computes γ, the core,
the approximations and the reducts, at a precision β (Ziarko's variable precision rough
sets; β = 1 is Pawlak's model, which fits clean tables: on noisy ones every
granule holds a few rows of another decision, γ is 0 for every attribute set and the
reduct is empty). Rules follow Pawlak: the distinct object descriptions restricted to
a reduct, each a rule; a description whose objects share one decision (below β = 1, whose
majority decision holds at least β of them) is a *certain* rule for it (from a lower
approximation), any other gives a *possible* rule per decision present (from the upper
approximations, accuracy = that decision's share). Certain rules are made more general by
dropping descriptors, in reduct order, while their accuracy on the training table stays at
least β and ``--min-rule-accuracy`` (1 by default). Duplicates merge; with several
reducts the rules pool. The rule set votes (one rule one vote, or weighted by the training
rows a rule gets right); rows no rule matches take the training majority or stay
unclassified.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from rulecli import budget, counting
from rulecli.dataset import Dataset
from rulecli.discretize import WEKA_MIN_BUCKET
from rulecli.display import counted
from rulecli.engines import EngineTable, is_engine_table
from rulecli.errors import ResourceLimitError
from rulecli.learners import Learner, Progress
from rulecli.model.core import Condition, ModelInfo, Rule, RuleSet, RuleStats, Vote
from rulecli.params import (
    TUNING_PANEL,
    Params,
    bins_param,
    discretize_param,
    learn_rows_param,
    majority_rules_param,
    max_rules_param,
    min_share_param,
    param,
    rules_per_class_param,
    seed_param,
)
from rulecli.schema import Schema
from rulecli.search.roughset import DecisionTable, RoughSets, positive_granules
from rulecli.search.rule_stats import counted_on_every_row, learning_sample
from rulecli.search.tuning import (
    CHOSEN_BY,
    Cut,
    cuts,
    one_se_choice,
    pruning_splits,
    truncated,
    truncation_scores,
)
from rulecli.stats import is_whole, tally

METHOD_CHOICES = ("elimination", "quick")
PRECISION_GRID = (1.0, 0.9, 0.8, 0.7)  # tried by the settings' cross-validation
ORDERS = ("given", "random", "significance")
# Shortening costs rules x descriptors x 64-row words of distinct descriptions; beyond this
# it is skipped (the rules keep every descriptor).
SHORTEN_BUDGET = 500_000_000
# Conditions a rule set may hold: scoring evaluates each one as a column, and a couple of
# hundred thousand need gigabytes (supermarket.arff: 4,527 rules of 45 conditions aborted
# out of memory when its cross-validation scored them)
CONDITION_BUDGET = 100_000
# rows a reduct is learned from (with as many more to choose its settings on); on the
# bench's 20-feature table, 100,000 rows scored 0.8246 and a million 0.8265 in 12 times the time
LEARN_ROWS = 100_000


PRINTS = ("rules", "reducts", "core", "gamma", "approximations")


@dataclass(frozen=True, kw_only=True)
class ReductParams(Params):
    method: str = param(
        "elimination",
        "elimination (drop attributes while γ holds) or quick (greedy forward by γ).",
        choices=METHOD_CHOICES,
    )
    order: str = param("given", "Attribute order: given, random (seeded) or significance.", choices=ORDERS)
    n_reducts: int = param(1, "Reducts from this many orders (the first as --order says).", ge=1)
    all_reducts: bool = param(False, "Every reduct (discernibility matrix; small attribute counts only).", flag="all")
    discretize: str = discretize_param("mdlp")
    bins: int = bins_param(5)
    min_accuracy: float = param(
        1.0, "Shorten certain rules while their accuracy stays this high.", gt=0, le=1.0, flag="min-rule-accuracy"
    )
    vote: str = param(
        "one",
        "one (rule, vote) or support (weighted by the training rows a rule gets right).",
        choices=("one", "support"),
    )
    default: str = param(
        "majority", "Rows no rule matches: majority class, or none (unclassified).", choices=("majority", "none")
    )
    precision: float | None = param(
        None,
        "Variable precision β: the share of one decision that makes a description certain (1: Pawlak's).",
        gt=0.5,
        le=1.0,
        panel=TUNING_PANEL,
    )
    min_share: float | None = min_share_param()
    majority_rules: str | None = majority_rules_param()
    rules_per_class: int | None = rules_per_class_param()
    max_rules: int | None = max_rules_param(
        10_000,
        "Rules a reduct may give; beyond, fewer attributes are chosen (the model says which).",
        ge=1,
    )
    show: str = param(
        "rules",
        "What stdout gets: rules (the model), reducts (one per line), core, gamma, or approximations (CSV).",
        flag="print",
        choices=PRINTS,
        record=False,
    )
    # a reduct's rules describe its rows, and that many rows show the descriptions a longer table would
    learn_rows: int = learn_rows_param(LEARN_ROWS)
    seed: int = seed_param()

    @property
    def rules(self) -> bool:
        return self.show == "rules"

    @property
    def analysis(self) -> bool:
        """The core and the approximations (d + 1 more group-bys) are wanted."""
        return self.show in ("rules", "core", "approximations")

    def record(self) -> dict[str, object]:
        return super().record() | {"rules": self.rules, "analysis": self.analysis}


@dataclass(frozen=True)
class _Encoded:
    table: DecisionTable
    values: tuple[tuple[Condition, ...], ...]  # per attribute: the condition of each code
    schema: Schema


def _encode(ds: Dataset | EngineTable, params: ReductParams) -> _Encoded:
    bins = WEKA_MIN_BUCKET if params.discretize == "min-bucket" and params.bins == 5 else params.bins
    cells, codes, y, w = counting.decision_table(ds, params.discretize, bins)
    schema = Schema(tuple(c.feature for c in cells), ds.schema.target)
    table = DecisionTable(ds.schema.feature_names, codes, y, len(ds.classes), w)
    return _Encoded(table, tuple(c.conditions for c in cells), schema)


def _orders(rs: RoughSets, params: ReductParams) -> list[list[int]]:
    d = rs.table.n_attributes
    rng = np.random.default_rng(params.seed)
    if params.order == "given":
        first = list(range(d))
    elif params.order == "significance":
        # the least significant attributes are tried first, so the significant ones stay
        sigma = rs.significance()
        first = sorted(range(d), key=lambda j: (sigma[j], j))
    else:
        first = rng.permutation(d).tolist()
    return [first, *(rng.permutation(d).tolist() for _ in range(params.n_reducts - 1))]


def find_reducts(rs: RoughSets, params: ReductParams) -> list[list[int]]:
    if params.all_reducts:
        return rs.all_reducts()
    found: list[list[int]] = []
    for order in _orders(rs, params):
        reduct = rs.eliminate(order) if params.method == "elimination" else rs.quick_reduct(order)
        if reduct not in found:
            found.append(reduct)
    return found


def _rule_bound(reduct: list[int], params: ReductParams) -> int:
    """How many distinct descriptions (each a rule) a reduct may have: the rule bound, and
    no more conditions than can be scored."""
    limit = CONDITION_BUDGET // max(1, len(reduct))
    return limit if params.max_rules is None else min(limit, params.max_rules)


def bounded(rs: RoughSets, reduct: list[int], params: ReductParams) -> list[int]:
    """The reduct, or where its distinct descriptions (each a rule) pass the rule bound, the
    attributes chosen forward by the granules' leave-one-out agreement
    (:meth:`RoughSets.held_out_agreement`) while that rises and the bound holds. On long
    tables of numeric attributes nearly every row has a description of its own on any
    attribute set that keeps γ, and each would be a one-row rule (which attributes such a
    reduct keeps says little: any that keep the rows apart will do); the attributes chosen
    make an approximate reduct (Ślęzak 2000) whose granules hold many rows."""
    if rs.granule_count(reduct) <= _rule_bound(reduct, params):
        return reduct
    chosen: list[int] = []
    best = rs.held_out_agreement(chosen)
    while len(chosen) < rs.table.n_attributes:
        scores = {a: rs.held_out_agreement([*chosen, a]) for a in sorted(rs.all_attributes) if a not in chosen}
        top = max(scores, key=lambda a: (scores[a], -a))  # ties: the first attribute
        if scores[top] <= best or rs.granule_count([*chosen, top]) > _rule_bound([*chosen, top], params):
            break
        chosen.append(top)
        best = scores[top]
    return sorted(chosen)


@dataclass
class _Granules:
    """The training table compressed to distinct descriptions (on some attributes) with class counts."""

    attributes: list[int]
    descriptions: np.ndarray  # (m, len(attributes))
    counts: np.ndarray  # (m, K)

    @classmethod
    def of(cls, table: DecisionTable, attributes: list[int]) -> _Granules:
        if not attributes:
            counts = table.class_counts(np.zeros(table.n_rows, dtype=np.int64), 1)
            return cls([], np.zeros((1, 0), dtype=np.int32), counts)
        descriptions, inverse = np.unique(table.codes[:, attributes], axis=0, return_inverse=True)
        return cls(attributes, descriptions, table.class_counts(inverse.ravel(), descriptions.shape[0]))

    def shortened(self, g: int, cls: int, min_accuracy: float) -> tuple[list[int], np.ndarray]:
        """Granule ``g``'s certain rule with descriptors dropped in order while its accuracy
        stays at least ``min_accuracy``: the positions kept and the rule's class counts.

        The descriptions that agree with ``g`` on each position are bit sets; trying to drop
        position j needs the AND over the positions kept before j (a running AND) and all
        after j (not tried yet, so all kept: one suffix AND each), so every trial is one AND
        of two bit sets and one weighted count."""
        m, width = self.descriptions.shape
        agree = self.descriptions == self.descriptions[g]  # (m, positions)
        bits = np.packbits(agree, axis=0, bitorder="little")  # (bytes, positions)
        words = -(-bits.shape[0] // 8)
        bits = np.pad(bits, ((0, words * 8 - bits.shape[0]), (0, 0))).T.copy().view(np.uint64)  # (positions, words)
        suffix = np.empty((width + 1, words), dtype=np.uint64)
        suffix[width] = ~np.uint64(0)
        for j in range(width - 1, -1, -1):
            suffix[j] = suffix[j + 1] & bits[j]
        before = np.full(words, ~np.uint64(0), dtype=np.uint64)
        kept, counts = [], self.counts[g]
        for j in range(width):
            trial = before & suffix[j + 1]
            mask = np.unpackbits(trial.view(np.uint8), count=m, bitorder="little")
            trial_counts = mask @ self.counts
            if trial_counts[cls] >= min_accuracy * trial_counts.sum() - 1e-9:
                counts = trial_counts
            else:
                kept.append(j)
                before &= bits[j]
        return kept, counts


RuleKey = tuple[tuple[tuple[int, int], ...], int]


def _reduct_rules(table: DecisionTable, reduct: list[int], params: ReductParams) -> dict[RuleKey, np.ndarray]:
    """Rules as ((attribute, code), ...) -> class, each with its training class counts:
    certain ones shortened, possible ones as found."""
    granules = _Granules.of(table, reduct)
    m = granules.descriptions.shape[0]
    rules: dict[RuleKey, np.ndarray] = {}
    assert params.precision is not None
    sure = positive_granules(granules.counts, params.precision)
    shorten = int(sure.sum()) * len(reduct) * -(-m // 64) <= SHORTEN_BUDGET
    least = min(params.precision, params.min_accuracy)  # a shortened rule stays certain
    for g in range(m):
        present = np.argmax(granules.counts[g], keepdims=True) if sure[g] else np.flatnonzero(granules.counts[g])
        description = granules.descriptions[g]
        kept = list(range(len(reduct)))
        counts = granules.counts[g]
        if present.size == 1 and shorten and reduct:
            kept, counts = granules.shortened(g, int(present[0]), least)
        for cls in present.tolist():
            rules[(tuple((reduct[p], int(description[p])) for p in kept), cls)] = counts
    conditions = sum(len(key) for key, _ in rules)
    if conditions > CONDITION_BUDGET:
        raise ResourceLimitError(
            f"the reduct's {len(rules):,} rules hold {conditions:,} conditions in all, more than can be scored "
            f"in memory ({CONDITION_BUDGET:,}); use fewer attributes (`features`), a coarser `discretize`, or "
            "`show=reducts`"
        )
    return rules


def fit_reduct(ds: Dataset | EngineTable, params: ReductParams, *, progress: Progress | None = None) -> RuleSet:
    if not params.rules:  # an analysis alone: nothing to choose β by
        return _fit(ds, dataclasses.replace(params, precision=params.precision or 1.0))
    precisions = PRECISION_GRID if params.precision is None else (params.precision,)
    settings = cuts(params.min_share, params.majority_rules, params.rules_per_class)
    drawn = None if is_engine_table(ds) else learning_sample(ds, params.learn_rows, params.seed)
    learn = ds if drawn is None else drawn[0]
    fits: dict[float, RuleSet] = {}
    chosen_by = CHOSEN_BY
    if len(settings) == 1 and len(precisions) == 1:
        precision, cut = precisions[0], settings[0]
    elif drawn is not None:
        # the sample learns and the rows it does not hold choose, so the model scored is the
        # model kept: a cut such as "five rules per class" chosen on one fit does not carry
        # over to another fit's rules
        held = drawn[1]
        precision, cut, fits = _chosen(params, precisions, settings, [(learn, held)], float(held.total_weight))
        chosen_by = HELD_OUT
    else:  # the folds are drawn from the copies whole weights stand for
        whole = learn.weights is not None and is_whole(learn.weights)
        split = pruning_splits(learn.as_copies("reduct") if whole else learn, params.seed)
        if split is None:
            precision, cut = precisions[0], settings[0]
        else:
            (splits, n), chosen_by = split
            precision, cut, _ = _chosen(params, precisions, settings, splits, n)
    model = fits.get(precision) or _fit(learn, dataclasses.replace(params, precision=precision))
    kept = truncated(model, learn, *cut)
    if drawn is not None:
        kept = counted_on_every_row(kept, learn, ds, params.seed)
    share, majority, per_class = cut[0], "drop" if cut[1] else "keep", cut[2]
    training = {**kept.info.training, "min_share": share, "majority_rules": majority, "rules_per_class": per_class}
    if params.precision is None:
        training["precision_chosen_by"] = chosen_by
    if params.min_share is None and params.rules_per_class is None:
        training["min_share_chosen_by"] = training["rules_per_class_chosen_by"] = chosen_by
    if params.majority_rules is None:
        training["majority_rules_chosen_by"] = chosen_by
    training["certain_rules"] = sum(1 for r in kept.rules if r.stats and r.stats.correct == r.stats.covered)
    chosen = dataclasses.replace(
        params, precision=precision, min_share=share, majority_rules=majority, rules_per_class=per_class
    )
    return dataclasses.replace(kept, info=dataclasses.replace(kept.info, params=chosen.record(), training=training))


HELD_OUT = "held-out rows of the table the sample does not hold"


def _chosen(
    params: ReductParams,
    precisions: tuple[float, ...],
    settings: tuple[Cut, ...],
    splits: list[tuple[Dataset, Dataset]],
    n: float,
) -> tuple[float, Cut, dict[float, RuleSet]]:
    """The precision and truncation chosen together on held-out rows (:mod:`rulecli.search.tuning`),
    and the first split's fit at each precision. How much noise a certain description may
    hold, and how light a rule may be, depend on the table (rules from reducts are object
    descriptions, and on noisy tables most describe a few rows each). The splits are the
    table's own rows (a CV on all of them, or a held-out quarter of a long table), not a
    2,000-row sample's: on a long table the reduct may be cut (:func:`bounded`), which a
    sample's would not be, and the rules it gives are other rules."""
    scores: dict[tuple[float, Cut], tuple[float, int]] = {}
    fits: dict[float, RuleSet] = {}
    for precision in precisions:
        if scores and budget.ran_out(f"reduct: β was chosen among {len(fits)} of {len(precisions)} precisions"):
            break
        trial = dataclasses.replace(params, precision=precision)
        for k, (train, test) in enumerate(splits):
            fitted = _fit(train, trial)
            if k == 0:
                fits[precision] = fitted
            for cut, right, size in truncation_scores(fitted, train, test, settings):
                total, rules = scores.get((precision, cut), (0.0, 0))
                scores[(precision, cut)] = (total + right, rules + size)
    precision, cut = one_se_choice(scores, n)  # type: ignore[misc]
    return precision, cut, fits


def _fit(ds: Dataset | EngineTable, params: ReductParams) -> RuleSet:
    """Reducts, the analysis and every rule from the reducts (before truncation), at the
    given precision."""
    assert params.precision is not None
    encoded = _encode(ds, params)
    table = encoded.table
    rs = RoughSets(table, params.precision)
    full = rs.all_attributes
    gamma = rs.gamma(full)
    reducts, cut = [], []
    for reduct in find_reducts(rs, params):
        kept = bounded(rs, reduct, params)
        if kept != reduct:
            cut.append(reduct)
        if kept not in reducts:
            reducts.append(kept)
    names = table.names
    positive = rs.positive_count(full, precision=1.0)  # Pawlak's: whether the table is consistent
    training: dict[str, object] = {
        "rows": tally(table.size),
        "gamma": gamma,
        "consistent": positive == table.size,
        "inconsistent_rows": tally(table.size - positive),
        "reducts": [[names[j] for j in r] for r in reducts],
        "class_counts": [tally(c) for c in ds.class_counts()],
    }
    if cut:
        training["search_cut"] = (
            f"the reduct {{{', '.join(names[j] for j in cut[0])}}} gives more distinct descriptions (each a rule) "
            f"than {params.max_rules:,} rules or the conditions that can be scored allow; the attributes "
            f"{{{', '.join(names[j] for j in reducts[0])}}} were chosen instead, forward by leave-one-out agreement "
            f"(γ = {rs.gamma(frozenset(reducts[0])):.4f} on them)"
        )
    if params.analysis:
        training["core"] = [names[j] for j in rs.core()]
        training["approximations"] = {ds.classes[c]: a for c, a in rs.approximations().items()}
    rules: list[Rule] = []
    if params.rules:
        pooled: dict[RuleKey, np.ndarray] = {}
        for reduct in reducts:
            pooled |= _reduct_rules(table, reduct, params)
        rules = _as_rules(pooled, encoded, ds, params)
        training["certain_rules"] = sum(1 for r in rules if r.stats and r.stats.correct == r.stats.covered)
    majority = int(np.argmax(ds.class_counts()))
    default = None
    if params.default == "majority":
        default = Rule((), ds.classes[majority], RuleStats(0, 0, tuple(0 for _ in ds.classes)))
    vote = Vote.ONE if params.vote == "one" else Vote.WEIGHTED
    info = ModelInfo(
        algorithm="reduct",
        params=params.record(),
        schema=encoded.schema,
        training=training,
    )
    return RuleSet(ds.target, ds.classes, tuple(rules), default, vote, info)


def _as_rules(
    pooled: dict[RuleKey, np.ndarray], encoded: _Encoded, ds: Dataset | EngineTable, params: ReductParams
) -> list[Rule]:
    """Rules with their training statistics, in a stable order (by class, then conditions)."""
    out = []
    for (descriptors, cls), counts in sorted(pooled.items(), key=lambda r: (r[0][1], len(r[0][0]), r[0][0])):
        conditions = tuple(encoded.values[a][v] for a, v in sorted(descriptors))
        covered, correct = tally(counts.sum()), tally(counts[cls])
        weight = float(correct) if params.vote == "support" else None
        out.append(
            Rule(conditions, ds.classes[cls], RuleStats(covered, correct, tuple(tally(c) for c in counts)), weight)
        )
    return out


def analysis_text(model: RuleSet, what: str) -> str:
    """What ``--print`` asks for, as text: reducts one per line, the core, γ, or the
    approximations as CSV (class, lower, upper, boundary, accuracy = lower/upper)."""
    t = model.info.training
    if what == "reducts":
        return "".join(",".join(r) + "\n" for r in t["reducts"])  # type: ignore[union-attr]
    if what == "core":
        return ",".join(t["core"]) + "\n"  # type: ignore[arg-type]
    if what == "gamma":
        return f"{t['gamma']!r}\n"
    lines = ["class,lower,upper,boundary,accuracy"]
    for cls, a in t["approximations"].items():  # type: ignore[union-attr]
        accuracy = a["lower"] / a["upper"] if a["upper"] else 0.0
        lines.append(f"{cls},{a['lower']},{a['upper']},{a['boundary']},{accuracy!r}")
    return "\n".join(lines) + "\n"


def _precision(model: RuleSet) -> float:
    """β of a model (files written before it was a setting hold Pawlak's 1)."""
    value = model.info.params.get("precision")
    return 1.0 if value is None else float(value)  # type: ignore[arg-type]


def _summary(model: RuleSet) -> str:
    t = model.info.training
    reducts = t["reducts"]
    assert isinstance(reducts, list)
    core = f", core {{{', '.join(t['core'])}}}" if "core" in t else ""  # type: ignore[arg-type]
    beta = _precision(model)
    at = f" at β = {beta:g}" if beta < 1 else ""
    first = ", ".join(reducts[0])
    return (
        f"reduct: γ = {t['gamma']:.4f}{at}, {counted(len(reducts), 'reduct')}, first {{{first}}}{core}, "
        f"{counted(len(model.rules), 'rule')}"
    )


def _warnings(model: RuleSet) -> list[str]:
    t = model.info.training
    beta = _precision(model)
    out = []
    if not t["consistent"] and beta == 1:
        out.append(
            f"the table is inconsistent: {t['inconsistent_rows']} rows share their description with rows of "
            f"another decision, so γ = {t['gamma']:.4f} < 1; certain rules come from the lower approximations, "
            "possible rules (accuracy < 1) from the upper ones"
        )
    elif not t["consistent"]:
        out.append(
            f"the table is inconsistent: {t['inconsistent_rows']} rows share their description with rows of "
            f"another decision; at precision β = {beta:g} a description is certain when one decision holds at "
            f"least that share of its rows (γ = {t['gamma']:.4f})"
        )
    if "search_cut" in t:
        out.append(str(t["search_cut"]))
    if [] in t["reducts"]:  # type: ignore[operator]
        why = "γ = 0" if beta == 1 else f"at β = {beta:g} no attribute set does better than none"
        out.append(
            f"no attribute tells the decisions apart ({why}: the reduct is empty), so every row gets the "
            "majority class; a finer `discretize` (or `bins`) may find attributes that do"
        )
    return out


LEARNER = Learner(
    name="reduct",
    params=ReductParams,
    fit=fit_reduct,
    summary=_summary,
    warnings=_warnings,
    help="Rough-set reducts (Pawlak), the core, approximations and γ, and rules from reducts.",
    examples=(
        "rulecli reduct sample_data/house.csv -y value --all --print reducts",
        "rulecli reduct sample_data/penguins.csv -y species --vote support -o penguins.reduct.txt",
    ),
    engines=("memory", "duckdb", "spark"),
)
