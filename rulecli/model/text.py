"""The text rule format: rendered for people, parsed back for ``predict``/``evaluate``.

Grammar (one rule per line; ``#`` starts a comment)::

    RULESET VOTE one|weighted|distribution|best optional; without it the file is a decision list
    CLASSES 'a', 'b', 'c'                      optional; the class order
    PRIOR 120, 40, 8                           optional (rule sets); training rows per class, in
                                               class order: equal votes go to the more frequent
    TARGET column                              optional; needed only by a file without rules
    IF cond [AND cond]... THEN target = value  [(covers N, correct N[, counts [N, ...]][, weight W])]
    ELSE target = value                        [(covers N, correct N)]

    cond  := column = value | column != value | column < number | <= | > | >=
           | column in {value, ...} | column not in {value, ...}
           | column in (low, high]   (brackets say which ends belong)
           | column is missing | column is not missing | TRUE
           | (any of the comparisons and sets above, then "or missing")
    value := 'single-quoted text' ('' for a quote) | number | date
    date  := 2022-07-15 | 2022-07-15T13:45:00   (a date column's value; compared as the
                                               days, or seconds, since 1970-01-01)
    column:= name of letters, digits, _ . - (not starting with a digit) | `any name`

Strings are compared with categorical columns, numbers with numeric ones.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass

from rulecli.display import UNSEEN, counted, escape_unseen
from rulecli.errors import ModelFormatError, ParamError
from rulecli.model.core import (
    NUMERIC_OPS,
    Closed,
    Committee,
    Condition,
    DecisionList,
    Formula,
    Model,
    ModelInfo,
    Moment,
    NumberRule,
    Op,
    Rule,
    RuleRegression,
    RuleSet,
    RuleStats,
    Scalar,
    Vote,
    schema_units,
)
from rulecli.model.ops import MAX_EXACT, OPS, Shape, ends
from rulecli.model.tree import Forest, Tree, leaf_rules, single_test
from rulecli.schema import EPOCH, Unit, render_moment
from rulecli.stats import tally

_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
KEYWORDS = frozenset(
    {"if", "then", "and", "or", "else", "in", "not", "is", "missing", "true", "ruleset", "vote", "classes"}
)
_COMPARISONS = {spec.text: op for op, spec in OPS.items() if spec.shape == Shape.COMPARE}
_OPEN = {Closed.RIGHT: "(", Closed.LEFT: "[", Closed.BOTH: "[", Closed.NONE: "("}
_CLOSE = {Closed.RIGHT: "]", Closed.LEFT: ")", Closed.BOTH: "]", Closed.NONE: ")"}


def _escape(text: str, quote: str) -> str:
    """Backslash-escape what would break a line or act on a terminal; double the quote character."""
    return quote + one_line(text).replace(quote, quote + quote) + quote


def one_line(text: str) -> str:
    """Text for a comment or a drawing: line breaks and backslashes escaped as in values, so
    no name or label can end the line it stands on (and start a rule of its own), and every
    other control or bidirectional character as ``\\x1b`` or ``\\u202e``, so none acts on the
    terminal, pager or ``git diff`` that shows the model."""
    escaped = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return UNSEEN.sub(escape_unseen, escaped)


def render_name(name: str) -> str:
    """A column name, backquoted unless it is a plain identifier."""
    if _BARE.match(name) and name.lower() not in KEYWORDS:
        return name
    return _escape(name, "`")


def render_number(value: float) -> str:
    """Shortest text that parses back to the same float."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def render_count(value: int | float) -> str:
    """A row count, or a weighted one (rows counted by fractional weights) as a number."""
    return str(value) if isinstance(value, int) else render_number(value)


class Verbatim(str):
    """A number a rule predicts, as text written as it is (not quoted as a class is): a
    formula, a regression leaf's mean, where rules of numbers are compared as rules."""


def render_value(value: Scalar, up: bool = False) -> str:
    """A value as written in rules; a moment as its date (rounded ``up`` to the next whole
    day or second, else down: a date column's values are whole, so ``< 19188.5`` is
    ``< 2022-07-16`` and ``<= 19188.5`` is ``<= 2022-07-15``)."""
    if isinstance(value, Moment):
        whole = math.ceil(value) if up else math.floor(value)
        return render_moment(whole, value.unit)
    if isinstance(value, float):
        return render_number(value)
    if isinstance(value, Verbatim):
        return str(value)
    return _escape(value, "'")


def render_condition(cond: Condition) -> str:
    """Examples
    --------
    >>> render_condition(Condition("age", Op.INTERVAL, (27.2, 41.4)))
    'age in (27.2, 41.4]'
    >>> render_condition(Condition("age", Op.LT, 30.5, or_missing=True))
    '(age < 30.5 or missing)'
    """
    text = _render_test(cond)
    # parenthesised: "a or missing AND b" would read as if AND bound tighter than or
    return f"({text} or missing)" if cond.or_missing else text


def _render_test(cond: Condition) -> str:
    name = render_name(cond.column)
    spec = OPS[cond.op]
    if spec.shape == Shape.MISSING:
        return f"{name} {spec.text}"
    if spec.shape == Shape.SET:
        assert isinstance(cond.value, tuple)
        members = ", ".join(render_value(v) for v in cond.value)
        return f"{name} {spec.text} {{{members}}}"
    if spec.shape == Shape.INTERVAL:
        assert isinstance(cond.value, tuple)
        low, high = cond.value
        assert isinstance(low, float) and isinstance(high, float)
        closed = Closed(cond.closed)
        with_low, with_high = ends(closed)
        bounds = f"{render_value(low, up=with_low)}, {render_value(high, up=not with_high)}"
        return f"{name} {spec.text} {_OPEN[closed]}{bounds}{_CLOSE[closed]}"
    assert isinstance(cond.value, str | float)
    return f"{name} {spec.text} {render_value(cond.value, up=cond.op in (Op.LT, Op.GE))}"


def render_conditions(conditions: tuple[Condition, ...]) -> str:
    return " AND ".join(render_condition(c) for c in conditions) if conditions else "TRUE"


def _render_stats(rule: Rule, with_counts: bool = False) -> str:
    parts = []
    if rule.stats is not None:
        parts += [f"covers {render_count(rule.stats.covered)}", f"correct {render_count(rule.stats.correct)}"]
        if with_counts and rule.stats.class_counts is not None:
            parts.append(f"counts [{', '.join(render_count(c) for c in rule.stats.class_counts)}]")
    if rule.weight is not None:
        parts.append(f"weight {render_number(rule.weight)}")
    return f"  ({', '.join(parts)})" if parts else ""


def render_rule(rule: Rule, target: str, with_counts: bool = False) -> str:
    then = f"{render_name(target)} = {render_value(rule.prediction)}"
    return f"IF {render_conditions(rule.conditions)} THEN {then}{_render_stats(rule, with_counts)}"


def render_text(model: Model) -> str:
    """Render a model in the text rule format (ends with a newline).

    Examples
    --------
    >>> rule = Rule((Condition("size", Op.EQ, "big"),), "high", RuleStats(2, 2))
    >>> default = Rule((), "low", RuleStats(0, 0))
    >>> print(render_text(DecisionList("value", ("high", "low"), (rule,), default)), end="")
    IF size = 'big' THEN value = 'high'  (covers 2, correct 2)
    ELSE value = 'low'  (covers 0, correct 0)
    """
    lines = []
    if isinstance(model, RuleSet):
        lines.append(f"RULESET VOTE {model.vote.value}")
    if list(model.classes) != _classes_from_rules(model):
        lines.append("CLASSES " + ", ".join(render_value(c) for c in model.classes))
    prior = model.info.training.get("class_counts")
    if isinstance(model, RuleSet) and isinstance(prior, list) and len(prior) == len(model.classes):
        lines.append("PRIOR " + ", ".join(render_number(float(c)) for c in prior))
    if not model.rules and model.default is None:
        lines.append(f"TARGET {render_name(model.target)}")
    # a distribution vote sums the rules' class counts: the text form must carry them
    counts = isinstance(model, RuleSet) and model.vote == Vote.DISTRIBUTION
    lines += [render_rule(r, model.target, counts) + _probabilities(r, model.classes) for r in model.rules]
    if model.default is not None:
        then = f"{render_name(model.target)} = {render_value(model.default.prediction)}"
        stats = _render_stats(model.default, counts)
        lines.append(f"ELSE {then}{stats}{_probabilities(model.default, model.classes)}")
    return "\n".join(lines) + "\n"


def render_formula(formula: Formula) -> str:
    """A formula for people, four significant digits a number: ``12.5 + 0.699 * a - 1.86 *
    [c in {'r'}]``, its bounds after it (JSON keeps every digit)."""
    text = f"{formula.intercept:.4g}"
    for term in formula.terms:
        sign = "-" if term.coefficient < 0 else "+"
        x = render_name(term.column)
        if term.levels is not None:
            x = f"[{x} in {{{', '.join(render_value(v) for v in term.levels)}}}]"
        text += f" {sign} {abs(term.coefficient):.4g} * {x}"
    if formula.bounds is not None:
        text += f", within [{formula.bounds[0]:.4g}, {formula.bounds[1]:.4g}]"
    return text


def render_number_rules(model: RuleRegression, with_stats: bool = True) -> str:
    """Rules that predict a number, one line each, as comments: no rule file holds formulas
    (such a model is saved as JSON)."""
    decides = "the first matching rule's formula" if model.ordered else "the mean of the matching rules' formulas"
    lines = [f"# {render_name(model.target)} is a number: {decides} predicts it", *_neighbours_left_out(model)]

    def stats(rule: NumberRule) -> str:
        s = rule.stats
        if s is None or not with_stats:
            return ""
        return f"  (covers {render_count(s.covered)}, mean {s.mean:.4g}, sd {s.sd:.4g}, rmse {s.rmse:.4g})"

    target = render_name(model.target)
    for rule in model.rules:
        then = f"{target} = {render_formula(rule.formula)}"
        lines.append(f"# IF {render_conditions(rule.conditions)} THEN {then}{stats(rule)}")
    lines.append(f"# ELSE {target} = {render_formula(model.default.formula)}{stats(model.default)}")
    return "\n".join(lines) + "\n"


def _neighbours_left_out(model: RuleRegression | Committee) -> list[str]:
    """The line that says a neighbour correction was asked for and left out, and why."""
    check = model.info.training.get("neighbours_check")
    if not isinstance(check, dict) or check.get("kept", True):
        return []
    return [
        f"# no neighbour correction: on {check['rows']:,} training rows each left out of its own neighbours it "
        f"raised the mean squared error from {check['rules_mse']:.4g} to {check['corrected_mse']:.4g}"
    ]


def render_committee(model: Committee, with_stats: bool = True) -> str:
    """A committee's lists one after the other, as comments, under the line that says
    their predictions are averaged."""
    lists = len(model.members)
    what = "the prediction of one list" if lists == 1 else f"the mean of {lists} lists' predictions"
    head = f"# {render_name(model.target)} is a number: {what}"
    nb = model.neighbours
    if nb is not None:
        head += (
            f", plus the weighted mean error of the {nb.k} nearest of {len(nb.residuals):,} stored training rows "
            f"(by {len(nb.columns)} columns), within [{nb.bounds[0]:.4g}, {nb.bounds[1]:.4g}]"
        )
    if model.neighbours is None:
        head += "".join(f"\n{line}" for line in _neighbours_left_out(model))
    if lists == 1:
        return head + "\n" + render_number_rules(model.members[0], with_stats)
    return (
        head
        + "\n"
        + "".join(
            f"#\n# list {m} of {lists}\n" + render_number_rules(member, with_stats)
            for m, member in enumerate(model.members, 1)
        )
    )


def _probabilities(rule: Rule, classes: tuple[str, ...]) -> str:
    """A rule's class probabilities, as a comment (for people; the grammar ignores it)."""
    if rule.probabilities is None:
        return ""
    shown = ", ".join(f"P({one_line(c)}) = {p:.3f}" for c, p in zip(classes, rule.probabilities, strict=True))
    return f"  # {shown}"


def _classes_from_rules(model: Model) -> list[str]:
    predictions = {r.prediction for r in model.rules}
    if model.default is not None:
        predictions.add(model.default.prediction)
    return sorted(predictions)


# ---------------------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#.*)
  | (?P<string>'(?:[^'\\]|''|\\(?:[\\nr]|x[0-9a-f]{2}|u[0-9a-f]{4}))*')
  | (?P<quoted>`(?:[^`\\]|``|\\(?:[\\nr]|x[0-9a-f]{2}|u[0-9a-f]{4}))*`)
  | (?P<moment>\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2})?(?![\w:.\-]))
  | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![A-Za-z_]))
  | (?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)
  | (?P<op><=|>=|!=|=|<|>)
  | (?P<punct>[{}()\[\],])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    column: int

    @property
    def keyword(self) -> str:
        return self.text.lower() if self.kind == "name" else ""


class _Line:
    """A cursor over the tokens of one line, raising errors with line and column."""

    def __init__(self, source: str, number: int, text: str) -> None:
        self.source, self.number, self.text = source, number, text
        self.tokens = self._tokenize(text)
        self.pos = 0

    def _tokenize(self, text: str) -> list[_Token]:
        tokens, at = [], 0
        while at < len(text):
            match = _TOKEN.match(text, at)
            if match is None:
                if text[at] in "'`":
                    self.fail(at, f"unterminated quoted text (no closing {text[at]})")
                self.fail(at, f"unexpected character {text[at]!r}")
            assert match is not None and match.lastgroup is not None
            if match.lastgroup not in ("ws", "comment"):
                tokens.append(_Token(match.lastgroup, match.group(), at))
            at = match.end()
        return tokens

    def fail(self, column: int, message: str) -> None:
        raise ModelFormatError(f"{self.source}:{self.number}:{column + 1}: {message}")

    def peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self, expected: str) -> _Token:
        token = self.peek()
        if token is None:
            self.fail(len(self.text), f"expected {expected}, found end of line")
        assert token is not None
        self.pos += 1
        return token

    def expect_keyword(self, word: str) -> None:
        token = self.next(word.upper())
        if token.keyword != word:
            self.fail(token.column, f"expected {word.upper()}, found {token.text!r}")

    def expect_punct(self, char: str) -> None:
        token = self.next(repr(char))
        if token.text != char:
            self.fail(token.column, f"expected {char!r}, found {token.text!r}")

    def at_keyword(self, word: str) -> bool:
        token = self.peek()
        return token is not None and token.keyword == word

    def at_punct(self, char: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "punct" and token.text == char

    def done(self) -> None:
        token = self.peek()
        if token is not None:
            self.fail(token.column, f"unexpected {token.text!r} at end of rule")


_UNESCAPE = {"\\\\": "\\", "\\n": "\n", "\\r": "\r", "''": "'", "``": "`"}


def _unquote(token: _Token) -> str:
    doubled = "''" if token.kind == "string" else "``"
    return re.sub(rf"\\[\\nr]|\\x[0-9a-f]{{2}}|\\u[0-9a-f]{{4}}|{doubled}", _unescape, token.text[1:-1])


def _unescape(match: re.Match[str]) -> str:
    found = match.group()
    return _UNESCAPE[found] if found in _UNESCAPE else chr(int(found[2:], 16))


def _parse_name(line: _Line) -> str:
    token = line.next("a column name")
    if token.kind == "quoted":
        return _unquote(token)
    if token.kind != "name" or token.keyword in KEYWORDS:
        line.fail(token.column, f"expected a column name, found {token.text!r}")
    return token.text


def _parse_value(line: _Line) -> Scalar:
    token = line.next("a value ('text' or a number)")
    if token.kind == "string":
        return _unquote(token)
    if token.kind == "number":
        return float(token.text)
    if token.kind == "moment":
        return _moment(line, token)
    line.fail(token.column, f"expected a value ('text' or a number), found {token.text!r}")
    raise AssertionError


def _moment(line: _Line, token: _Token) -> Moment:
    """A date (days since 1970-01-01) or a date and time (seconds since then)."""
    try:
        if "T" in token.text:
            return Moment((dt.datetime.fromisoformat(token.text) - EPOCH).total_seconds(), Unit.DATETIME)
        return Moment(float((dt.date.fromisoformat(token.text) - EPOCH.date()).days), Unit.DATE)
    except ValueError:
        line.fail(token.column, f"{token.text!r} is no date")
        raise AssertionError from None


def _parse_number(line: _Line) -> float:
    token = line.next("a number")
    if token.kind == "moment":
        return _moment(line, token)
    if token.kind != "number":
        line.fail(token.column, f"expected a number, found {token.text!r}")
    return float(token.text)


def _parse_count(line: _Line, what: str) -> int | float:
    """A row count; a fractional one is a weighted count (rows counted by their weights)."""
    token = line.peek()
    number = _parse_number(line)
    if not (math.isfinite(number) and 0 <= number <= MAX_EXACT):
        line.fail(
            token.column if token else 0,
            f"{what} are numbers from 0 to 2^53, found {token.text[:20] if token else number!r}",
        )
    return tally(number)


def _parse_values(line: _Line) -> tuple[Scalar, ...]:
    """One or more comma-separated values."""
    values = [_parse_value(line)]
    while line.at_punct(","):
        line.pos += 1
        values.append(_parse_value(line))
    return tuple(values)


def _parse_set(line: _Line) -> tuple[Scalar, ...]:
    line.expect_punct("{")
    values = _parse_values(line)
    line.expect_punct("}")
    return values


def _parse_interval(line: _Line, column: str) -> Condition:
    opening = line.next("'(' or '['")
    low = _parse_number(line)
    line.expect_punct(",")
    high = _parse_number(line)
    closing = line.next("')' or ']'")
    if closing.text not in (")", "]"):
        line.fail(closing.column, f"expected ')' or ']', found {closing.text!r}")
    closed = {
        ("(", "]"): Closed.RIGHT,
        ("[", ")"): Closed.LEFT,
        ("[", "]"): Closed.BOTH,
        ("(", ")"): Closed.NONE,
    }[(opening.text, closing.text)]
    if low > high:
        line.fail(opening.column, f"interval low end {low} is above its high end {high}")
    return Condition(column, Op.INTERVAL, (low, high), closed)


def _parse_condition(line: _Line) -> Condition | None:
    """One condition, or None for ``TRUE`` (the condition that always holds)."""
    if line.at_keyword("true"):
        line.pos += 1
        return None
    start = line.peek()
    grouped = line.at_punct("(")  # "(test or missing)"; files from before it was written so read too
    if grouped:
        line.pos += 1
    column = _parse_name(line)
    try:
        cond = _parse_condition_tail(line, column)
        if line.at_keyword("or"):
            line.pos += 1
            line.expect_keyword("missing")
            cond = Condition(cond.column, cond.op, cond.value, cond.closed, or_missing=True)
        if grouped:
            line.expect_punct(")")
        return cond
    except ParamError as exc:
        assert start is not None
        line.fail(start.column, str(exc))
        raise AssertionError from exc


def _parse_condition_tail(line: _Line, column: str) -> Condition:
    token = line.next("an operator")
    if token.kind == "op":
        op = _COMPARISONS[token.text]
        value = _parse_value(line)
        if op in NUMERIC_OPS and not isinstance(value, float):
            line.fail(token.column, f"'{op.value}' compares with a number, found a text value")
        return Condition(column, op, value)
    if token.keyword == "is":
        negated = line.at_keyword("not")
        if negated:
            line.pos += 1
        line.expect_keyword("missing")
        return Condition(column, Op.PRESENT if negated else Op.MISSING)
    if token.keyword == "not":
        line.expect_keyword("in")
        return Condition(column, Op.NOT_IN, _parse_set(line))
    if token.keyword == "in":
        if line.at_punct("{"):
            return Condition(column, Op.IN, _parse_set(line))
        if line.at_punct("(") or line.at_punct("["):
            return _parse_interval(line, column)
        nxt = line.peek()
        line.fail(nxt.column if nxt else len(line.text), "expected '{', '(' or '[' after 'in'")
    line.fail(token.column, f"expected an operator (=, !=, <, <=, >, >=, in, is), found {token.text!r}")
    raise AssertionError


def _parse_then(line: _Line) -> tuple[str, str, RuleStats | None, float | None]:
    target = _parse_name(line)
    token = line.next("'='")
    if token.text != "=":
        line.fail(token.column, f"expected '=', found {token.text!r}")
    value_token = line.peek()
    value = _parse_value(line)
    if isinstance(value, float):
        assert value_token is not None
        value = value_token.text
    stats, weight = None, None
    if line.at_punct("("):
        stats, weight = _parse_stats(line)
    line.done()
    return target, value, stats, weight


def _parse_stats(line: _Line) -> tuple[RuleStats | None, float | None]:
    line.expect_punct("(")
    fields: dict[str, float] = {}
    counts: tuple[int | float, ...] | None = None
    while True:
        key = line.next("covers, correct, counts or weight")
        if key.keyword not in ("covers", "correct", "counts", "weight") or key.keyword in fields:
            line.fail(key.column, f"expected covers, correct, counts or weight, found {key.text!r}")
        if key.keyword == "counts":
            counts = _parse_counts(line)
            fields["counts"] = 0.0
        elif key.keyword == "weight":
            token = line.peek()
            fields["weight"] = _parse_number(line)
            if not math.isfinite(fields["weight"]):
                line.fail(token.column if token else 0, "a rule's weight must be a finite number")
        else:
            fields[key.keyword] = _parse_count(line, "row counts")
        if line.at_punct(","):
            line.pos += 1
            continue
        line.expect_punct(")")
        break
    stats = None
    if "covers" in fields or "correct" in fields:
        if not ("covers" in fields and "correct" in fields):
            line.fail(0, "statistics need both covers and correct")
        stats = RuleStats(tally(fields["covers"]), tally(fields["correct"]), counts)
    elif counts is not None:
        line.fail(0, "class counts need covers and correct")
    return stats, fields.get("weight")


def _parse_counts(line: _Line) -> tuple[int | float, ...]:
    """``[n, n, …]``: the training rows of each class a rule covers, in class order."""
    line.expect_punct("[")
    counts = []
    while True:
        counts.append(_parse_count(line, "class counts"))
        if line.at_punct(","):
            line.pos += 1
            continue
        line.expect_punct("]")
        return tuple(counts)


@dataclass
class _Draft:
    vote: Vote | None = None
    classes: tuple[str, ...] | None = None
    target: str | None = None
    rules: list[Rule] | None = None
    default: Rule | None = None
    prior: tuple[float, ...] | None = None


def parse_text(text: str, source: str = "<rules>") -> Model:
    """Parse the text rule format into a model (never evaluates anything)."""
    draft = _Draft(rules=[])
    assert draft.rules is not None
    for number, raw in enumerate(text.split("\n"), 1):
        raw = raw.removesuffix("\r")
        line = _Line(source, number, raw)
        if not line.tokens:
            continue
        if draft.default is not None:
            line.fail(line.tokens[0].column, "nothing may follow the ELSE line")
        head = line.tokens[0].keyword
        line.pos = 1
        if head == "ruleset":
            if draft.rules or draft.vote is not None:
                line.fail(0, "RULESET must come before the rules")
            line.expect_keyword("vote")
            mode = line.next("one, weighted, distribution or best")
            if mode.keyword not in {v.value for v in Vote}:
                line.fail(mode.column, f"unknown vote {mode.text!r} (one, weighted, distribution, best)")
            draft.vote = Vote(mode.keyword)
            line.done()
        elif head == "classes":
            values = _parse_values(line)
            line.done()
            draft.classes = tuple(str(v) for v in values)
        elif head == "prior":
            values = _parse_values(line)
            line.done()
            if not all(isinstance(v, float) and v >= 0 for v in values):
                line.fail(0, "PRIOR lists the training rows of each class: numbers, 0 or more")
            draft.prior = tuple(float(v) for v in values)
        elif head == "target":
            _set_target(draft, line, _parse_name(line))
            line.done()
        elif head == "if":
            conditions = [_parse_condition(line)]
            while line.at_keyword("and"):
                line.pos += 1
                conditions.append(_parse_condition(line))
            line.expect_keyword("then")
            target, prediction, stats, weight = _parse_then(line)
            _set_target(draft, line, target)
            kept = tuple(c for c in conditions if c is not None)
            draft.rules.append(Rule(kept, prediction, stats, weight))
        elif head == "else":
            target, prediction, stats, _ = _parse_then(line)
            _set_target(draft, line, target)
            draft.default = Rule((), prediction, stats)
        else:
            line.fail(
                line.tokens[0].column,
                f"expected IF, ELSE, RULESET, CLASSES, PRIOR or TARGET, found {line.tokens[0].text!r}",
            )
    return _finish(draft, source)


def _set_target(draft: _Draft, line: _Line, target: str) -> None:
    if draft.target is None:
        draft.target = target
    elif draft.target != target:
        line.fail(0, f"every rule must predict the same column: '{draft.target}', not '{target}'")


def _finish(draft: _Draft, source: str) -> Model:
    assert draft.rules is not None
    if draft.target is None:
        raise ModelFormatError(f"{source}: no rules found")
    predictions = {r.prediction for r in draft.rules}
    if draft.default is not None:
        predictions.add(draft.default.prediction)
    classes = draft.classes if draft.classes is not None else tuple(sorted(predictions))
    unknown = sorted(predictions - set(classes))
    if unknown:
        raise ModelFormatError(f"{source}: class {unknown[0]!r} is not listed in CLASSES")
    info = ModelInfo()
    for rule in (*draft.rules, *([draft.default] if draft.default else [])):
        if (
            rule.stats is not None
            and rule.stats.class_counts is not None
            and len(rule.stats.class_counts) != len(classes)
        ):
            raise ModelFormatError(
                f"{source}: a rule lists {len(rule.stats.class_counts)} class counts for {len(classes)} classes"
            )
    if draft.prior is not None:
        if len(draft.prior) != len(classes):
            raise ModelFormatError(f"{source}: PRIOR has {len(draft.prior)} counts for {len(classes)} classes")
        info = ModelInfo(training={"class_counts": [int(c) if c.is_integer() else c for c in draft.prior]})
    if draft.vote is not None:
        return RuleSet(draft.target, classes, tuple(draft.rules), draft.default, draft.vote, info)
    if draft.default is None:
        raise ModelFormatError(f"{source}: a decision list must end with an ELSE line (or start with RULESET VOTE one)")
    return DecisionList(draft.target, classes, tuple(draft.rules), draft.default, info)


def _leaf_text(tree: Tree, leaf: int) -> str:
    nodes = tree.nodes
    rows = nodes.n_samples[leaf]
    rows_text = counted(int(rows), "row") if float(rows).is_integer() else f"{rows:.1f} rows"
    if tree.regression:
        return f"{render_name(tree.target)} = {float(nodes.value[leaf, 0]):.6g}  ({rows_text})"
    counts = nodes.value[leaf]
    total = counts.sum()
    shares = " / ".join(f"{c / total:.2f}" for c in counts) if total else "-"
    label = tree.classes[int(counts.argmax())]
    return f"{render_name(tree.target)} = {render_value(label)}  ({rows_text}, P = {shares})"


def render_tree(tree: Tree, prefix: str = "") -> str:
    """The tree as indented text, one line per branch, each leaf with its rule number.

    Every line starts with ``prefix`` (``"# "`` makes it a comment of the rule format).
    """
    nodes = tree.nodes
    units = schema_units(tree.info.schema)
    rule_of = {leaf: i for i, (leaf, _) in enumerate(leaf_rules(nodes, tree.features), 1)}
    classes = f"P over {', '.join(one_line(c) for c in tree.classes)}" if tree.classes else "leaf means"
    lines = [
        f"{prefix}tree for {one_line(tree.target)}: {counted(len(rule_of), 'leaf')}, depth {nodes.depth()} ({classes})",
    ]
    stack: list[tuple[int, int, str | None]] = [(0, 0, None)]
    while stack:
        node, depth, test = stack.pop()
        indent = "|   " * max(depth - 1, 0)
        if test is not None:
            lines.append(f"{prefix}{indent}|--- {test}")
        if nodes.feature[node] < 0:
            inner = "|   " * depth
            lines.append(f"{prefix}{inner}|--- {_leaf_text(tree, node)}  [rule {rule_of[node]}]")
            continue
        column = tree.features[int(nodes.feature[node])]
        left = render_condition(single_test(nodes, node, column, to_left=True, units=units))
        right = render_condition(single_test(nodes, node, column, to_left=False, units=units))
        stack.append((int(nodes.right[node]), depth + 1, right))
        stack.append((int(nodes.left[node]), depth + 1, left))
    return "\n".join(lines) + "\n"


BAR_WIDTH = 40  # characters of the longest bar


def bars(values: dict[str, float], width: int = BAR_WIDTH) -> list[str]:
    """Ranked horizontal bars, largest first: ``name  value  ████``."""
    if not values:
        return []
    ranked = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    top = max(abs(v) for _, v in ranked) or 1.0
    name_width = max(len(k) for k, _ in ranked)
    return [f"{k:<{name_width}}  {v:10.6f}  {'█' * round(width * max(v, 0.0) / top)}" for k, v in ranked]


def _counted(n: object, noun: str) -> str:
    """A count a model file holds (hand-edited files may hold anything)."""
    return counted(n, noun) if isinstance(n, int) else f"{one_line(str(n))} {counted(2, noun).split(' ', 1)[1]}"


def forest_summary(model: Forest) -> list[str]:
    """Lines describing a forest: size, OOB estimate, importances as bars."""
    t = model.info.training
    kind = "mean squared error" if model.regression else "error rate"
    oob = t.get("oob_mse" if model.regression else "oob_error")
    lines = [
        f"random forest for {one_line(model.target)}: {counted(len(model.trees), 'tree')}, "
        f"{_counted(t.get('max_features'), 'feature')} tried per node, {_counted(t.get('leaves'), 'leaf')}",
        f"OOB {kind}: {oob:.4f} (over {t.get('oob_rows')} rows)"
        if isinstance(oob, float)
        else "OOB: no out-of-bag rows",
        "importance D_j (mean over trees of F_r at splits on j):",
    ]
    importance = t.get("importance")
    if isinstance(importance, dict):
        lines += [f"  {line}" for line in bars({one_line(str(k)): float(v) for k, v in importance.items()})]
    permutation = t.get("permutation_importance")
    if isinstance(permutation, dict):
        lines.append("permutation importance (rise of the OOB error when shuffled):")
        lines += [f"  {line}" for line in bars({one_line(str(k)): float(v) for k, v in permutation.items()})]
    return lines
