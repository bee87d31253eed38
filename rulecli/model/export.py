"""Models as source text for other engines: SQL, dependency-free Python, a Polars expression.

Every form keeps rulecli's semantics: a missing value (NULL, None, NaN) satisfies no test
except ``is missing`` and tests marked ``or missing``; a numeric column is compared as a
double with NaN read as missing; a categorical column is compared as text. A decision list
(and a tree, through its leaf rules) becomes one ``CASE WHEN … END``; a rule set sums its
votes per class and takes the first class with the largest score, or the default (NULL
without one) where no rule matches. A forest walks each tree's node arrays (nested CASEs,
when/then, or a node table in Python), sums the leaf shares tree by tree as rulecli does and
takes the first class with the largest mean (SQL: a query whose ``proba_<class>`` columns
hold the means). PMML is written by :mod:`rulecli.model.pmml`.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rulecli.errors import ParamError
from rulecli.model.compile import FAN_IN, runs_of
from rulecli.model.core import (
    Closed,
    Committee,
    Condition,
    DecisionList,
    Formula,
    Model,
    Neighbours,
    Op,
    RuleRegression,
    Vote,
)
from rulecli.model.languages import SqlText, condition_source, sql_rule
from rulecli.model.neighbours import MISSING, OFFSET, UNSEEN, fresh_prefix, levels_of, stored_arrays
from rulecli.model.ops import (
    OPS,
    Kinds,
    class_votes,
    column_kinds,
    dated_kinds,
    ends,
    rule_kinds,
    rule_support,
    tie_keys,
    tie_order,
)
from rulecli.model.tree import (
    Forest,
    Predictor,
    Tree,
    TreeNodes,
    decision_list,
    feature_kinds,
    leaf_rules,
    leaf_shares,
)
from rulecli.schema import Unit, is_pattern, temporal_source

DIALECTS = ("duckdb", "postgres", "spark", "sqlite")
TARGETS = ("sql", "python", "polars", "pmml")


@dataclass(frozen=True)
class _Plan:
    """What every form needs: ordered (conditions, value) pairs, or a vote, and the kinds."""

    rules: list[tuple[tuple[Condition, ...], str | float]]
    default: str | float | None
    vote: Vote | None  # None: a decision list
    classes: tuple[str, ...]
    weights: list[list[float]]  # rule sets: per rule, its score for each class
    numeric: Kinds
    supports: list[float] = field(default_factory=list)  # rule sets: per rule, its training support
    order: list[int] = field(default_factory=list)  # rule sets: classes by preference on a tie


def plan(model: Model | Tree) -> _Plan:
    """Rule models and single trees as rules; forests are exported from their node arrays."""
    if isinstance(model, Tree):
        if not model.regression:
            return plan(decision_list(model))
        pairs = [(c, float(model.nodes.value[leaf, 0])) for leaf, c in leaf_rules(model.nodes, model.features)]
        kinds = dated_kinds(column_kinds(c for conds, _ in pairs for c in conds), model)
        return _Plan(pairs, None, None, (), [], kinds)
    kinds = dated_kinds(column_kinds(c for r in model.rules for c in r.conditions), model)
    default = model.default.prediction if model.default is not None else None
    if isinstance(model, DecisionList):
        return _Plan([(r.conditions, r.prediction) for r in model.rules], default, None, model.classes, [], kinds)
    weights = [class_votes(r, model.classes, model.vote) for r in model.rules]
    pairs = [(r.conditions, r.prediction) for r in model.rules]
    supports = [rule_support(r) for r in model.rules]
    order = tie_order(model.classes, model.info.training)
    return _Plan(pairs, default, model.vote, model.classes, weights, kinds, supports, order)


def _class_parts(p: _Plan, k: int, rules: list[str]) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """For class ``k``: the (rule, vote) and (rule, support) terms of its score and support."""
    votes = [(r, w[k]) for r, w in zip(rules, p.weights, strict=True) if w[k]]
    own = [p.classes.index(str(value)) == k for _, value in p.rules]
    support = [(r, u) for r, u, mine in zip(rules, p.supports, own, strict=True) if mine and u]
    return votes, support


def to_sql(model: Predictor, dialect: str = "duckdb", table: str | None = None) -> str:
    """One ``CASE WHEN … END`` expression, or a ``SELECT *, … AS prediction FROM table``."""
    if dialect not in DIALECTS:
        raise ParamError(f"`dialect` must be one of {', '.join(DIALECTS)}, got '{dialect}'")
    sql = SqlText(dialect)
    if isinstance(model, Forest):
        return _sql_forest(sql, model, table)
    if isinstance(model, RuleRegression | Committee):
        expr = _sql_numbers(sql, model) if isinstance(model, RuleRegression) else _sql_committee(sql, model)
        return expr + "\n" if table is None else f"SELECT *, {expr} AS prediction\nFROM {table}\n"
    p = plan(model)
    default = "NULL" if p.default is None else sql.literal(p.default)
    rules = [sql_rule(sql, conds, p.numeric) for conds, _ in p.rules]
    if p.vote is None:
        whens = [f"  WHEN {r} THEN {sql.literal(v)}" for r, (_, v) in zip(rules, p.rules, strict=True)]
        expr = "CASE\n" + "\n".join(whens) + f"\n  ELSE {default}\nEND" if whens else default
    else:
        expr = _sql_vote(sql, p, rules, default)
    if table is None:
        return expr + "\n"
    return f"SELECT *, {expr} AS prediction\nFROM {table}\n"


def formula_kinds(model: RuleRegression | Committee) -> Kinds:
    """Each column the rules read: compared as numbers (or dates), or as text."""
    return dated_kinds(rule_kinds(model), model)


def _sql_formula(sql: SqlText, formula: Formula, kinds: Kinds) -> str:
    parts = [sql.literal(formula.intercept)]
    for term in formula.terms:
        x = sql.column(term.column, kinds[term.column])
        if term.levels is None:
            value = f"COALESCE({x}, {sql.literal(term.fill)})"
        else:
            value = (
                f"CASE WHEN {x} IS NULL THEN {sql.literal(term.fill)} "
                f"WHEN {sql.members(x, 'IN', term.levels, False)} THEN 1.0e0 ELSE 0.0e0 END"
            )
        parts.append(f"{sql.literal(term.coefficient)} * {value}")
    total = " + ".join(parts)
    if formula.bounds is None:
        return f"({total})"
    low, high = (sql.literal(b) for b in formula.bounds)
    return sql.least([sql.greatest([total, low]), high])


def rule_formulas(model: RuleRegression, dialect: str) -> tuple[list[str], str]:
    """Each rule's formula, and the default's, as SQL of ``dialect``: what an engine
    recounts a model's statistics with."""
    sql, kinds = SqlText(dialect), formula_kinds(model)
    return [_sql_formula(sql, r.formula, kinds) for r in model.rules], _sql_formula(sql, model.default.formula, kinds)


def _sql_numbers(sql: SqlText, model: RuleRegression) -> str:
    """The first matching rule's formula (ordered), or the mean of the matching rules'."""
    kinds = formula_kinds(model)
    tests = [sql_rule(sql, r.conditions, kinds) for r in model.rules]
    formulas = [_sql_formula(sql, r.formula, kinds) for r in model.rules]
    default = _sql_formula(sql, model.default.formula, kinds)
    if not tests:
        return default
    if model.ordered:
        whens = [f"  WHEN {t} THEN {f}" for t, f in zip(tests, formulas, strict=True)]
        return "CASE\n" + "\n".join(whens) + f"\n  ELSE {default}\nEND"
    total = " + ".join(f"CASE WHEN {t} THEN {f} ELSE 0.0e0 END" for t, f in zip(tests, formulas, strict=True))
    matched = " + ".join(f"CASE WHEN {t} THEN 1.0e0 ELSE 0.0e0 END" for t in tests)
    any_rule = " OR ".join(f"({t})" for t in tests)
    return f"CASE WHEN {any_rule} THEN ({total}) / ({matched}) ELSE {default} END"


def _sql_committee(sql: SqlText, model: Committee) -> str:
    """The mean of the members' predictions, corrected by the nearest stored rows."""
    total = "\n+ ".join(f"({_sql_numbers(sql, member)})" for member in model.members)
    mean = f"(\n{total}\n) / {sql.literal(float(len(model.members)))}"
    return mean if model.neighbours is None else _sql_neighbours(sql, model.neighbours, formula_kinds(model), mean)


def _sql_neighbours(sql: SqlText, nb: Neighbours, kinds: Kinds, base: str) -> str:
    """``base`` plus the weighted mean residual of the k nearest stored rows: a subquery
    over the stored rows (a CTE of VALUES) ordered by their distance to the row, then by
    their number, the distance added in the order rulecli adds it."""
    prefix = fresh_prefix("nb_", kinds)
    i, r, d, n = (sql.ident(f"{prefix}{what}") for what in ("i", "r", "d", "n"))
    names, terms = [sql.ident(f"{prefix}i"), sql.ident(f"{prefix}r")], []
    stored = stored_arrays(nb)
    for j, (column, (_, missing)) in enumerate(zip(nb.columns, stored, strict=True)):
        x = sql.column(column.name, kinds[column.name])
        value = sql.ident(f"{prefix}v{j}")
        names.append(value)
        weight = sql.literal(column.weight)
        if missing is None:
            code = _sql_code(sql, x, nb.values[j])
            terms.append(f"{weight} * CASE WHEN {code} = s.{value} THEN 0.0e0 ELSE 1.0e0 END")
            continue
        flag = sql.ident(f"{prefix}m{j}")
        names.append(flag)
        filled = sql.greatest([f"COALESCE({x}, {sql.literal(column.fill)})", sql.literal(column.low)])
        kept = sql.least([filled, sql.literal(column.high)])
        terms.append(f"{weight} * ABS({kept} - s.{value})")
        terms.append(f"ABS(CASE WHEN {x} IS NULL THEN 1.0e0 ELSE 0.0e0 END - s.{flag})")
    rows = []
    for row, residual in enumerate(nb.residuals):
        cells = [str(row), sql.literal(residual)]
        for values, missing in stored:
            cells.append(sql.literal(float(values[row])))
            if missing is not None:
                cells.append(sql.literal(float(missing[row])))
        rows.append("(" + ", ".join(cells) + ")")
    distance = " + ".join(terms)
    nearest = (
        f"(WITH s({', '.join(names)}) AS (VALUES\n    " + ",\n    ".join(rows) + "\n  )\n"
        f"  SELECT SUM(nn.{r} / (nn.{d} + {sql.literal(OFFSET)})) / SUM(1.0e0 / (nn.{d} + {sql.literal(OFFSET)}))\n"
        f"  FROM (SELECT a.{r}, a.{d}, ROW_NUMBER() OVER (ORDER BY a.{d}, a.{i}) AS {n}\n"
        f"    FROM (SELECT s.{i}, s.{r}, {distance} AS {d} FROM s) AS a) AS nn WHERE nn.{n} <= {nb.k})"
    )
    low, high = (sql.literal(b) for b in nb.bounds)
    return sql.least([sql.greatest([f"({base}) + {nearest}", low]), high])


def _sql_code(sql: SqlText, x: str, stored: Sequence[float | str | None]) -> str:
    """A text value as the number the stored rows hold for it: its order of first
    appearance among them, -1 where missing, -2 where never stored."""
    whens = " ".join(
        f"WHEN {x} = {sql.literal(str(v))} THEN {sql.literal(float(n))}" for v, n in levels_of(stored).items()
    )
    return f"(CASE WHEN {x} IS NULL THEN {sql.literal(float(MISSING))} {whens} ELSE {sql.literal(float(UNSEEN))} END)"


def _sql_vote(sql: SqlText, p: _Plan, rules: list[str], default: str) -> str:
    if not rules:
        return default

    def total(terms: list[tuple[str, float]], greatest: bool) -> str:
        parts = [f"CASE WHEN {r} THEN {w!r} ELSE 0.0 END" for r, w in terms]
        if not parts:
            return "0.0"
        if greatest:
            return sql.greatest(parts) if len(parts) > 1 else parts[0]
        return "(" + " + ".join(parts) + ")"

    scores, supports = [], []
    for k in range(len(p.classes)):
        votes, support = _class_parts(p, k, rules)
        scores.append(total(votes, p.vote == Vote.BEST))
        supports.append(total(support, False))
    any_rule = " OR ".join(f"({r})" for r in rules)
    keys = tie_keys(p.weights, p.supports, p.order)
    if keys is not None:
        scale, ranks = keys
        n = len(p.classes) + 1
        key = [
            f"(({s}) * {sql.literal(scale)} + {u}) * {sql.literal(float(n))} + {sql.literal(r)}"
            for s, u, r in zip(scores, supports, ranks, strict=True)
        ]
        if len(key) == 1:
            return f"CASE WHEN {any_rule} THEN {sql.literal(p.classes[0])} ELSE {default} END"
        whens = "\n".join(f"    WHEN {k} THEN {sql.literal(c)}" for k, c in zip(key, p.classes, strict=True))
        winner = f"CASE {sql.greatest(key)}\n{whens}\n  END"
        return f"CASE WHEN {any_rule} THEN\n  {winner}\nELSE {default}\nEND"
    # classes in tie order: the first whose (score, support) no later class beats
    order = p.order
    whens = []
    for i, k in enumerate(order[:-1]):
        beats = " AND ".join(
            f"({scores[k]} > {scores[j]} OR ({scores[k]} = {scores[j]} AND {supports[k]} >= {supports[j]}))"
            for j in order[i + 1 :]
        )
        whens.append(f"    WHEN {beats} THEN {sql.literal(p.classes[k])}")
    last = sql.literal(p.classes[order[-1]])
    winner = "CASE\n" + "\n".join(whens) + f"\n    ELSE {last}\n  END" if whens else last
    return f"CASE WHEN {any_rule} THEN\n  {winner}\nELSE {default}\nEND"


def _sql_forest(sql: SqlText, model: Forest, table: str | None) -> str:
    """The trees' leaf shares (or means) summed tree by tree as rulecli sums them, then the
    first class with the largest mean: a query, so each class's mean is written once."""
    if table is None:
        raise ParamError("a forest exports as a query over a table (its class means are columns): pass `table` TABLE")
    kinds = dated_kinds(feature_kinds(model), model)
    columns = {name: sql.column(name, kinds[name]) for name in kinds}
    outputs = [(0, "prediction")] if model.regression else list(enumerate(f"proba_{c}" for c in model.classes))
    means = []
    for k, name in outputs:
        total = " + ".join(
            _sql_node(sql, nodes, model.features, columns, leaf_shares(nodes)[:, k]) for nodes in model.trees
        )
        means.append(f"({total}) / {sql.literal(float(len(model.trees)))} AS {sql.ident(name)}")
    listed = ",\n".join(means)
    inner = f"SELECT *,\n{listed}\nFROM {table}"
    if model.regression:
        return inner + "\n"
    p = [sql.ident(name) for _, name in outputs]
    whens = []
    for k in range(len(p) - 1):
        # the first largest: above every earlier class, at least every later one
        beats = " AND ".join(
            [*(f"{p[k]} > {p[j]}" for j in range(k)), *(f"{p[k]} >= {p[j]}" for j in range(k + 1, len(p)))]
        )
        whens.append(f"  WHEN {beats} THEN {sql.literal(model.classes[k])}")
    winner = "CASE\n" + "\n".join(whens) + f"\n  ELSE {sql.literal(model.classes[-1])}\nEND"
    return f"SELECT *, {winner} AS prediction\nFROM (\n{inner}\n) AS forest\n"


def _sides(nodes: TreeNodes, i: int, left: str, right: str) -> tuple[tuple[str, ...], str, str]:
    """A categorical split as one membership test: the levels to test, the branch they take,
    and the branch everything else takes (missing values, levels the split did not see)."""
    if nodes.missing_left[i]:
        return nodes.right_levels[i], right, left
    return nodes.left_levels[i], left, right


def _sql_node(sql: SqlText, nodes: TreeNodes, names: tuple[str, ...], columns: dict[str, str], leaf: np.ndarray) -> str:
    """One tree as nested CASEs on its node arrays, rulecli's routing of missing values and
    of levels a split did not see included."""

    def walk(i: int) -> str:
        j = int(nodes.feature[i])
        if j < 0:
            return sql.literal(float(leaf[i]))
        x = columns[names[j]]
        left, right = walk(int(nodes.left[i])), walk(int(nodes.right[i]))
        # each branch written once: the test names the branch that does not take missing values
        if nodes.threshold[i] == np.inf:  # the split of present from missing values
            return f"CASE WHEN {x} IS NOT NULL THEN {left} ELSE {right} END"
        if not np.isnan(nodes.threshold[i]):
            below = f"{x} < {sql.literal(float(nodes.threshold[i]))}"
            if nodes.missing_left[i]:
                return f"CASE WHEN {x} IS NULL OR {below} THEN {left} ELSE {right} END"
            return f"CASE WHEN {below} THEN {left} ELSE {right} END"
        levels, chosen, rest = _sides(nodes, i, left, right)
        if not levels:
            return rest
        return f"CASE WHEN {sql.members(x, 'IN', levels, False)} THEN {chosen} ELSE {rest} END"

    return walk(0)


# -------------------------------------------------------------------------- Python


class _Python:
    name = "python"

    def members(self, x: str, word: str, values: tuple[str | float, ...], negated: bool) -> str:
        return f"{x} {word} {{" + ", ".join(repr(v) for v in values) + ("," if len(values) == 1 else "") + "}"

    def compare(self, x: str, word: str, value: str | float) -> str:
        return f"{x} {word} {value!r}"

    def interval(self, x: str, low: float, high: float, closed: Closed) -> str:
        with_low, with_high = ends(closed)
        after, before = OPS[Op.LE if with_low else Op.LT].python, OPS[Op.LE if with_high else Op.LT].python
        return f"{low!r} {after} {x} {before} {high!r}"

    def guard(self, x: str, test: str, or_missing: bool) -> str:
        if or_missing:
            return f"({x} {OPS[Op.MISSING].python} or {test})"
        return f"({x} {OPS[Op.PRESENT].python} and {test})"


PYTHON = _Python()


_PYTHON_READERS = [
    '    """Predict one row (a dict of column -> value; None or NaN is missing)."""',
    "",
    "    def number(value):",
    "        if value is None or value == '':",
    "            return None",
    "        value = float(value)",
    "        return None if value != value else value",
    "",
    "    def text(value):",
    "        if isinstance(value, bool):  # as the model learned it: lower case",
    "            return 'true' if value else 'false'",
    "        return None if value is None else str(value)",
    "",
]
# a date (text as 2022-07-15 or 2022-07-15 13:45:00, or a date object) as days since
# 1970-01-01, or seconds with ``per_day`` false (the civil-calendar count of H. Hinnant)
_PYTHON_MOMENT = [
    "    def moment(value, per_day):",
    "        if value is None or value == '':",
    "            return None",
    "        if hasattr(value, 'utcoffset') and value.utcoffset() is not None:",
    "            value = value - value.utcoffset()  # a zoned time counts as its UTC time",
    "        shift = 0",
    "        if hasattr(value, 'year'):",
    "            y, m, d = value.year, value.month, value.day",
    "            clock = [getattr(value, 'hour', 0), getattr(value, 'minute', 0), getattr(value, 'second', 0)]",
    "        else:",
    "            text = str(value).strip().removesuffix('Z')",
    "            if len(text) > 10 and text[10] not in ' T':",
    "                return None",
    "            if len(text) > 19 and text[-6] in '+-' and text[-3] == ':':  # an offset: +01:00",
    "                sign = 1 if text[-6] == '+' else -1",
    "                shift = sign * (int(text[-5:-3]) * 3600 + int(text[-2:]) * 60)",
    "                text = text[:-6]",
    "            try:",
    "                y, m, d = (int(part) for part in text[:10].replace('/', '-').split('-'))",
    "                clock = [float(part) for part in text[11:].split(':')] if len(text) > 10 else []",
    "            except ValueError:",
    "                return None",
    "        y -= m <= 2",
    "        era = y // 400",
    "        year = y - era * 400",
    "        day = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1",
    "        days = era * 146097 + year * 365 + year // 4 - year // 100 + day - 719468",
    "        seconds = int(sum(part * size for part, size in zip(clock, (3600, 60, 1)))) - shift",
    "        total = days * 86400 + seconds",
    "        return float(total // 86400) if per_day else float(total)",
    "",
]


def _python_reader(kind: bool | Unit) -> str:
    """The reader of one column in an exported function, called on ``row.get(...)``."""
    if isinstance(kind, Unit):
        return f"moment(%s, per_day={kind == Unit.DATE})"
    return "number(%s)" if kind else "text(%s)"


def _python_readers(kinds: Iterable[bool | Unit]) -> list[str]:
    return _PYTHON_READERS + (_PYTHON_MOMENT if any(isinstance(k, Unit) for k in kinds) else [])


def to_python(model: Predictor, name: str = "predict") -> str:
    """Source of ``predict(row: dict) -> str | float | None``: no imports, no dependencies."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ParamError(f"`name` must be a Python identifier that is not a keyword, got '{name}'")
    if isinstance(model, Forest):
        return _python_forest(model, name)
    if isinstance(model, RuleRegression):
        return _python_numbers(model, name)
    if isinstance(model, Committee):
        members = [_python_numbers(member, f"_{name}_list{m}") for m, member in enumerate(model.members, 1)]
        calls = " + ".join(f"_{name}_list{m}(row)" for m in range(1, len(members) + 1))
        mean = f"({calls}) / {float(len(members))!r}"
        if model.neighbours is not None:
            return "\n\n".join([*members, _python_neighbours(model.neighbours, formula_kinds(model), name, mean)])
        return "\n\n".join([*members, f"def {name}(row):\n    return {mean}\n"])
    p = plan(model)
    columns = sorted({c.column for conds, _ in p.rules for c in conds})
    var = {c: f"v{i}" for i, c in enumerate(columns)}
    lines = [f"def {name}(row):", *_python_readers(p.numeric.get(c, False) for c in columns)]
    for column in columns:
        reader = _python_reader(p.numeric.get(column, False))
        lines.append(f"    {var[column]} = {reader % f'row.get({column!r})'}")

    def test(conds: tuple[Condition, ...]) -> str:
        return " and ".join(condition_source(PYTHON, c, var[c.column]) for c in conds) if conds else "True"

    if p.vote is None:
        for conds, value in p.rules:
            lines.append(f"    if {test(conds)}:")
            lines.append(f"        return {value!r}")
        lines.append(f"    return {p.default!r}")
    else:
        lines.append(f"    scores = [0.0] * {len(p.classes)}")
        lines.append(f"    support = [0.0] * {len(p.classes)}")
        lines.append("    matched = False")
        for (conds, value), weights, rule_support in zip(p.rules, p.weights, p.supports, strict=True):
            lines.append(f"    if {test(conds)}:")
            lines.append("        matched = True")
            for k, w in enumerate(weights):
                if w:
                    update = f"max(scores[{k}], {w!r})" if p.vote == Vote.BEST else f"scores[{k}] + {w!r}"
                    lines.append(f"        scores[{k}] = {update}")
            if rule_support:
                own = p.classes.index(str(value))
                lines.append(f"        support[{own}] = support[{own}] + {rule_support!r}")
        lines.append("    if not matched:")
        lines.append(f"        return {p.default!r}")
        lines.append(f"    classes = {list(p.classes)!r}")
        lines.append("    best = max(scores)")
        lines.append("    top = max(u for s, u in zip(scores, support) if s == best)")
        lines.append("    # equal votes: the larger support, then the class more frequent in training")
        lines.append(f"    return next(classes[k] for k in {p.order!r} if scores[k] == best and support[k] == top)")
    return "\n".join(lines) + "\n"


def _python_numbers(model: RuleRegression, name: str) -> str:
    kinds = formula_kinds(model)
    columns = sorted(kinds)
    var = {c: f"v{i}" for i, c in enumerate(columns)}
    lines = [f"def {name}(row):", *_python_readers(kinds.values())]
    for column in columns:
        lines.append(f"    {var[column]} = {_python_reader(kinds[column]) % f'row.get({column!r})'}")

    def test(conds: tuple[Condition, ...]) -> str:
        return " and ".join(condition_source(PYTHON, c, var[c.column]) for c in conds) if conds else "True"

    def formula(f: Formula) -> str:
        parts = [repr(f.intercept)]
        for term in f.terms:
            x = var[term.column]
            if term.levels is None:
                value = x
            else:  # a set literal in the levels' order: a set's repr follows string hashes, which
                # differ from process to process, and an export must not
                value = f"1.0 if {x} in {{{', '.join(map(repr, term.levels))},}} else 0.0"
            parts.append(f"{term.coefficient!r} * ({term.fill!r} if {x} is None else {value})")
        total = " + ".join(parts)
        return total if f.bounds is None else f"min(max({total}, {f.bounds[0]!r}), {f.bounds[1]!r})"

    if model.ordered:
        for rule in model.rules:
            lines += [f"    if {test(rule.conditions)}:", f"        return {formula(rule.formula)}"]
        lines.append(f"    return {formula(model.default.formula)}")
    else:
        lines.append("    values = []")
        for rule in model.rules:
            lines += [f"    if {test(rule.conditions)}:", f"        values.append({formula(rule.formula)})"]
        lines.append(f"    return sum(values) / len(values) if values else {formula(model.default.formula)}")
    return "\n".join(lines) + "\n"


def _python_neighbours(nb: Neighbours, kinds: Kinds, name: str, base: str) -> str:
    """``predict(row)``: the lists' mean ``base`` plus the weighted mean residual of the k
    nearest stored rows (held in ``_{name}_stored``: per column its values, and a number's
    missing flags, then the residuals), the distance added as rulecli adds it."""
    stored = stored_arrays(nb)
    arrays: list[list[float]] = []
    lines = [f"def {name}(row):", *_python_readers(kinds[c.name] for c in nb.columns), f"    base = {base}"]
    terms = []
    for j, (column, (values, missing)) in enumerate(zip(nb.columns, stored, strict=True)):
        x = f"{_python_reader(kinds[column.name]) % f'row.get({column.name!r})'}"
        arrays.append(values.astype(np.float64).tolist())
        v = f"s[{len(arrays) - 1}][i]"
        if missing is None:
            levels = {level: float(n) for level, n in levels_of(nb.values[j]).items()}
            lines.append(f"    q{j} = {x}")
            lines.append(f"    q{j} = {float(MISSING)!r} if q{j} is None else {levels!r}.get(q{j}, {float(UNSEEN)!r})")
            terms.append(f"{column.weight!r} * (0.0 if q{j} == {v} else 1.0)")
            continue
        arrays.append(missing.tolist())
        flag = f"s[{len(arrays) - 1}][i]"
        lines.append(f"    q{j} = {x}")
        lines.append(f"    m{j} = 1.0 if q{j} is None else 0.0")
        lines.append(f"    q{j} = min(max({column.fill!r} if q{j} is None else q{j}, {column.low!r}), {column.high!r})")
        terms += [f"{column.weight!r} * abs(q{j} - {v})", f"abs(m{j} - {flag})"]
    lines += [
        f"    s = _{name}_stored",
        "    nearest = []",
        f"    for i, r in enumerate(s[{len(arrays)}]):",
        "        d = 0.0",
        *(f"        d += {t}" for t in terms),
        "        nearest.append((d, i, r))",
        "    nearest.sort()  # ties: the row stored first",
        f"    chosen = [(1.0 / (d + {OFFSET!r}), r) for d, i, r in nearest[:{nb.k}]]",
        "    value = base + sum(w * r for w, r in chosen) / sum(w for w, r in chosen)",
        f"    return min(max(value, {nb.bounds[0]!r}), {nb.bounds[1]!r})",
    ]
    data = f"_{name}_stored = {[*arrays, list(nb.residuals)]!r}"
    return data + "\n\n\n" + "\n".join(lines) + "\n"


# -------------------------------------------------------------------------- Polars


def _pl_column(name: str, numeric: bool | Unit) -> str:
    if isinstance(numeric, Unit):
        return temporal_source(_pl_col(name), numeric)
    if numeric:
        return f"{_pl_col(name)}.cast(pl.Float64).fill_nan(None)"
    return f"{_pl_col(name)}.cast(pl.String)"


def _pl_col(name: str) -> str:
    # pl.col reads '*' and '^…$' as patterns; a selector by name reads them literally
    return f"pl.selectors.by_name({name!r}).as_expr()" if is_pattern(name) else f"pl.col({name!r})"


class _Polars:
    name = "polars"

    def compare(self, x: str, word: str, value: str | float) -> str:
        return f"({x} {word} {value!r})"

    def members(self, x: str, word: str, values: tuple[str | float, ...], negated: bool) -> str:
        test = f"{x}.{word}({list(values)!r})"
        return f"~{test}" if negated else test

    def interval(self, x: str, low: float, high: float, closed: Closed) -> str:
        return f"{x}.{OPS[Op.INTERVAL].polars}({low!r}, {high!r}, closed={closed.value!r})"

    def guard(self, x: str, test: str, or_missing: bool) -> str:
        return f"({test}).fill_null({or_missing})"


POLARS = _Polars()


class _Source(str):
    """Text that ``repr`` writes as it is: a literal inside a ``repr``'d table."""

    def __repr__(self) -> str:
        return str(self)


# a present-vs-missing split's +inf threshold, as a Python literal (repr gives 'inf')
_INF = _Source("1e999")


def _python_forest(model: Forest, name: str) -> str:
    """The trees as node tables (module constants beside the function) walked row by row;
    leaf shares summed tree by tree as rulecli sums them, then the first largest mean."""
    kinds = dated_kinds(feature_kinds(model), model)
    trees = []
    for nodes in model.trees:
        shares = leaf_shares(nodes)
        numeric = ~np.isnan(nodes.threshold)
        table = (
            tuple(int(f) for f in nodes.feature),
            tuple(
                _INF if t == np.inf else float(t) if n else None for t, n in zip(nodes.threshold, numeric, strict=True)
            ),
            tuple(int(i) for i in nodes.left),
            tuple(int(i) for i in nodes.right),
            tuple(bool(m) for m in nodes.missing_left),
            tuple(frozenset(levels) for levels in nodes.left_levels),
            tuple(frozenset(levels) for levels in nodes.right_levels),
            tuple(tuple(float(v) for v in row) for row in shares),
        )
        trees.append(repr(table))
    constant = f"_{name.upper()}_TREES"
    readers = ", ".join(_python_reader(kinds[f]) % f"row.get({f!r})" if f in kinds else "None" for f in model.features)
    k = 1 if model.regression else len(model.classes)
    answer = "totals[0] / len(trees)" if model.regression else f"{model.classes!r}[means.index(max(means))]"
    lines = [
        f"{constant} = (",
        *(f"    {t}," for t in trees),
        ")",
        "",
        "",
        f"def {name}(row):",
        *_python_readers(kinds.values()),
        f"    x = ({readers},)",
        f"    trees = {constant}",
        f"    totals = [0.0] * {k}",
        "    for feature, threshold, left, right, missing_left, left_levels, right_levels, value in trees:",
        "        i = 0",
        "        while feature[i] >= 0:",
        "            v = x[feature[i]]",
        "            if v is None:",
        "                go_left = missing_left[i]",
        "            elif threshold[i] is not None:",
        "                go_left = v < threshold[i] or threshold[i] == 1e999  # +inf: every present value",
        "            elif v in left_levels[i] or v in right_levels[i]:",
        "                go_left = v in left_levels[i]",
        "            else:  # a level this split did not see goes where missing values go",
        "                go_left = missing_left[i]",
        "            i = left[i] if go_left else right[i]",
        f"        for k in range({k}):",
        "            totals[k] += value[i][k]",
        "    means = [t / len(trees) for t in totals]",
        f"    return {answer}",
    ]
    return "\n".join(lines) + "\n"


def to_polars(model: Predictor) -> str:
    """Source of one Polars expression (``import polars as pl`` in scope) for the prediction."""
    if isinstance(model, Forest):
        return _polars_forest(model)
    if isinstance(model, RuleRegression):
        return _polars_numbers(model)
    if isinstance(model, Committee):
        members = ",\n".join(_polars_numbers(member).rstrip("\n") for member in model.members)
        mean = f"pl.sum_horizontal([\n{members},\n]) / {float(len(model.members))!r}"
        if model.neighbours is not None:
            return _polars_neighbours(model.neighbours, formula_kinds(model), mean) + "\n"
        return mean + "\n"
    p = plan(model)

    def rule(conds: tuple[Condition, ...]) -> str:
        if not conds:
            return "pl.lit(True)"
        tests = (condition_source(POLARS, c, _pl_column(c.column, p.numeric.get(c.column, False))) for c in conds)
        return "pl.all_horizontal([" + ", ".join(tests) + "])"

    if p.vote is None:
        return _polars_first_match(p, rule)

    def total(terms: list[tuple[str, float]], combine: str) -> str:
        parts = [f"pl.when({r}).then({w!r}).otherwise(0.0)" for r, w in terms]
        return f"{combine}([{', '.join(parts)}])" if parts else "pl.lit(0.0)"

    rules = [rule(c) for c, _ in p.rules]
    scores, supports = [], []
    for k in range(len(p.classes)):
        votes, support = _class_parts(p, k, rules)
        scores.append(total(votes, "pl.max_horizontal" if p.vote == Vote.BEST else "pl.sum_horizontal"))
        supports.append(total(support, "pl.sum_horizontal"))
    any_rule = "pl.any_horizontal([" + ", ".join(rules) + "])" if p.rules else "pl.lit(False)"
    otherwise = f"pl.repeat({p.default!r}, pl.len(), dtype=pl.String)"
    keys = tie_keys(p.weights, p.supports, p.order)
    if keys is not None:
        scale, ranks = keys
        n = float(len(p.classes) + 1)
        key = [f"(({s}) * {scale!r} + {u}) * {n!r} + {r!r}" for s, u, r in zip(scores, supports, ranks, strict=True)]
        pick = (
            f"pl.concat_list([{', '.join(key)}]).list.arg_max()"
            f".replace_strict({list(range(len(p.classes)))!r}, {list(p.classes)!r}, return_dtype=pl.String)"
        )
        return f"pl.when({any_rule}).then({pick}).otherwise({otherwise})\n"
    best = f"pl.max_horizontal([{', '.join(scores)}])"
    tied = [f"({score} == {best})" for score in scores]
    top = (
        "pl.max_horizontal(["
        + ", ".join(f"pl.when({t}).then({u}).otherwise(-1.0)" for t, u in zip(tied, supports, strict=True))
        + "])"
    )
    # equal votes: the larger support, then the class more frequent in training
    winner = (
        "pl.coalesce(["
        + ", ".join(f"pl.when({tied[k]} & ({supports[k]} == {top})).then(pl.lit({p.classes[k]!r}))" for k in p.order)
        + "])"
    )
    return f"pl.when({any_rule}).then({winner}).otherwise({otherwise})\n"


def _polars_first_match(p: _Plan, rule: Callable[[tuple[Condition, ...]], str]) -> str:
    """A decision list's (or a tree's leaves') prediction as ``predict`` computes it: the
    value of the first run of rules of one value with a matching rule (which of a run's rules
    matched first does not change it), a run that ends the list with the default's value
    left to the default; past FAN_IN runs, the first matching rule's number, then its value.
    A coalesce of every rule's value as a column took 3.6 s and 1.2 GB on 10M rows of a
    38-rule list where predict took 1.6 s and 0.4 GB."""
    dtype = "pl.Float64" if p.rules and isinstance(p.rules[0][1], float) else "pl.String"
    # repeat, not lit: one value per row even in a select
    default = f"pl.repeat({p.default!r}, pl.len(), dtype={dtype})"
    runs = runs_of([(rule(conds), value) for conds, value in p.rules], p.default)
    if not runs:
        return default + "\n"
    if len(runs) <= FAN_IN:
        whens = [
            f"when(pl.any_horizontal([{', '.join(tests)}])).then(pl.lit({v!r}, dtype={dtype}))" for v, tests in runs
        ]
        # a literal, not repeat: the chain is as long as its tests, and pl.len() would hold
        # a streaming query's rows until it knew their number
        otherwise = f"pl.lit({p.default!r}, dtype={dtype})"
        return "(\n    pl." + "\n    .".join(whens) + f"\n    .otherwise({otherwise})\n)\n"
    values = [v for _, v in p.rules]
    firsts = [f"pl.when({rule(c)}).then(pl.lit({i}, dtype=pl.UInt32))" for i, (c, _) in enumerate(p.rules)]
    last = f"pl.repeat({len(values)}, pl.len(), dtype=pl.UInt32)"
    index = "pl.coalesce([\n    " + ",\n    ".join([*firsts, last]) + ",\n])"
    mapping = f"{list(range(len(values) + 1))!r}, {[*values, p.default]!r}, return_dtype={dtype}"
    return f"{index}.replace_strict({mapping})\n"


def _polars_numbers(model: RuleRegression) -> str:
    kinds = formula_kinds(model)

    def rule(conds: tuple[Condition, ...]) -> str:
        if not conds:
            return "pl.lit(True)"
        tests = (condition_source(POLARS, c, _pl_column(c.column, kinds[c.column])) for c in conds)
        return "pl.all_horizontal([" + ", ".join(tests) + "])"

    def formula(f: Formula) -> str:
        # repeat, not lit: one value per row even in a select
        parts = [f"pl.repeat({f.intercept!r}, pl.len(), dtype=pl.Float64)"]
        for term in f.terms:
            x = _pl_column(term.column, kinds[term.column])
            if term.levels is not None:
                x = f"{x}.is_in({list(term.levels)!r}).cast(pl.Float64)"
            parts.append(f"{term.coefficient!r} * {x}.fill_null({term.fill!r})")
        total = " + ".join(parts)
        return f"({total})" if f.bounds is None else f"({total}).clip({f.bounds[0]!r}, {f.bounds[1]!r})"

    default = formula(model.default.formula)
    if not model.rules:
        return default + "\n"
    if model.ordered:
        whens = [f"pl.when({rule(r.conditions)}).then({formula(r.formula)})" for r in model.rules]
        return "pl.coalesce([\n    " + ",\n    ".join([*whens, default]) + ",\n])\n"
    tests = [rule(r.conditions) for r in model.rules]
    total = ", ".join(
        f"pl.when({t}).then({formula(r.formula)}).otherwise(0.0)" for t, r in zip(tests, model.rules, strict=True)
    )
    matched = ", ".join(f"{t}.cast(pl.Float64)" for t in tests)
    return (
        f"pl.when(pl.any_horizontal([{', '.join(tests)}]))"
        f".then(pl.sum_horizontal([{total}]) / pl.sum_horizontal([{matched}]))"
        f".otherwise({default})\n"
    )


def _polars_neighbours(nb: Neighbours, kinds: Kinds, base: str) -> str:
    """``base`` plus the weighted mean residual of the k nearest stored rows, with list
    arithmetic: each row's distances to the stored rows as a list (added in rulecli's
    order), its k nearest by ordinal rank (ties: the row stored first). Each row holds a
    list as long as the stored rows: memory grows with both."""

    def stored_list(values: Iterable[float]) -> str:
        return f"pl.lit(pl.Series([{list(values)!r}], dtype=pl.List(pl.Float64))).first()"

    terms = []
    for j, (column, (values, missing)) in enumerate(zip(nb.columns, stored_arrays(nb), strict=True)):
        x = _pl_column(column.name, kinds[column.name])
        if missing is None:
            levels = levels_of(nb.values[j])
            code = (
                f"pl.when({x}.is_null()).then({float(MISSING)!r})"
                f".otherwise({x}.replace_strict({list(levels)!r}, {[float(n) for n in levels.values()]!r}, "
                f"default={float(UNSEEN)!r}, return_dtype=pl.Float64))"
            )
            other = "(pl.element() != 0.0).cast(pl.Float64)"
            terms.append(
                f"({stored_list(values.astype(np.float64).tolist())} - {code}).list.eval({other}) * {column.weight!r}"
            )
            continue
        kept = f"{x}.fill_null({column.fill!r}).clip({column.low!r}, {column.high!r})"
        flag = f"{x}.is_null().cast(pl.Float64)"
        terms.append(f"({stored_list(values.tolist())} - {kept}).list.eval(pl.element().abs()) * {column.weight!r}")
        terms.append(f"({stored_list(missing.tolist())} - {flag}).list.eval(pl.element().abs())")
    distance = "(\n    " + "\n    + ".join(terms) + "\n)"
    # each stored row's weight: 1 / (d + 0.5) among the k nearest, 0 beyond; the expression
    # is written once and read twice (a lambda's argument), not written out again
    nearest = f"(pl.element().rank('ordinal') <= {nb.k})"
    weight = f"{distance}.list.eval(pl.when({nearest}).then(1.0 / (pl.element() + {OFFSET!r})).otherwise(0.0))"
    residuals = stored_list(nb.residuals)
    corrected = f"({base}) + (w * {residuals}).list.sum() / w.list.sum()"
    return f"(lambda w: ({corrected}).clip({nb.bounds[0]!r}, {nb.bounds[1]!r}))(\n{weight}\n)"


def _polars_forest(model: Forest) -> str:
    """Each class's mean share as a sum of nested when/then per tree, then the first
    largest (``list.arg_max``); a regression forest's mean of leaf means."""
    kinds = dated_kinds(feature_kinds(model), model)
    columns = {f: _pl_column(f, kinds[f]) for f in kinds}

    def walk(nodes: TreeNodes, leaf: np.ndarray, i: int) -> str:
        j = int(nodes.feature[i])
        if j < 0:
            return f"pl.lit({float(leaf[i])!r})"
        x = columns[model.features[j]]
        left, right = walk(nodes, leaf, int(nodes.left[i])), walk(nodes, leaf, int(nodes.right[i]))
        if nodes.threshold[i] == np.inf:  # the split of present from missing values
            return f"pl.when({x}.is_not_null()).then({left}).otherwise({right})"
        if not np.isnan(nodes.threshold[i]):
            below = f"({x} < {float(nodes.threshold[i])!r})"
            test = f"({x}.is_null() | {below})" if nodes.missing_left[i] else f"{below}.fill_null(False)"
            return f"pl.when({test}).then({left}).otherwise({right})"
        levels, chosen, rest = _sides(nodes, i, left, right)
        if not levels:
            return rest
        return f"pl.when({x}.is_in({list(levels)!r}).fill_null(False)).then({chosen}).otherwise({rest})"

    k = 1 if model.regression else len(model.classes)
    means = []
    for c in range(k):
        total = " + ".join(walk(nodes, leaf_shares(nodes)[:, c], 0) for nodes in model.trees)
        # Polars divides a column by a scalar as a product with its reciprocal (1 ulp off
        # rulecli's mean); dividing by a column of the tree count is exact
        means.append(f"(({total}) / (pl.int_range(pl.len()) * 0.0 + {float(len(model.trees))!r}))")
    if model.regression:
        return means[0] + "\n"
    classes = list(model.classes)
    return (
        "pl.concat_list([\n    " + ",\n    ".join(means) + ",\n]).list.arg_max()"
        f".replace_strict({list(range(k))!r}, {classes!r}, return_dtype=pl.String)\n"
    )
