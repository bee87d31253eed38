"""Two models compared rule by rule, for review of a retrained model.

A decision list's rules are matched by position (the first match decides, so rule 3 is
rule 3 whatever it says); a rule set's rules by what they say: the same conditions (in any
order) and class are the same rule; a rule left on one side is paired with one on the other
that tests the same columns, as a *changed* rule, and the conditions that moved are listed
by column (``age >= 42`` -> ``age >= 45``). Two trees are walked side by side: where both
split on the same column the split is the same one (its threshold or levels may have
moved: a *split change*, listed once), so each leaf pairs with the leaf that holds the same
rows' path, and is the same when it predicts the same; where one splits and the other does
not, or on another column, the leaves below are removed and added. Forests have no rules to
pair: they are the same when every tree is; otherwise the diff says how many trees differ,
and how the out-of-bag error and the features' importance moved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulecli.model.core import Committee, Condition, DecisionList, NumberRule, Rule, RuleRegression, column_units
from rulecli.model.text import Verbatim, render_formula, render_number
from rulecli.model.tree import Forest, Predictor, Tree, TreeNodes, decision_list, leaf_rules, single_test


@dataclass(frozen=True)
class Moved:
    """The conditions one column had before and has after (an empty side: none)."""

    column: str
    old: tuple[Condition, ...]
    new: tuple[Condition, ...]


@dataclass(frozen=True)
class RuleChange:
    status: str  # "same", "changed", "added" or "removed"
    old_number: int | None  # 1-based position in its model
    new_number: int | None
    old: Rule | None
    new: Rule | None
    moved: tuple[Moved, ...] = ()


@dataclass(frozen=True)
class SplitChange:
    """A split two trees make on the same column at the same place, moved: its test (the
    left branch's) before and after."""

    column: str
    old: Condition
    new: Condition


@dataclass(frozen=True)
class ModelDiff:
    target: str
    old_kind: str
    new_kind: str
    ordered: bool  # rules matched by position
    rules: tuple[RuleChange, ...]
    old_default: Rule | None
    new_default: Rule | None
    notes: tuple[str, ...]  # what else differs: classes, vote, learner
    splits: tuple[SplitChange, ...] = ()  # two trees: the splits that moved

    @property
    def default_changed(self) -> bool:
        return _key(self.old_default) != _key(self.new_default)

    @property
    def identical(self) -> bool:
        """Equal in rules (statistics may differ): the models predict alike."""
        return (
            not self.notes
            and not self.splits
            and not self.default_changed
            and all(c.status == "same" for c in self.rules)
        )


def kind_of(model: Predictor) -> str:
    if isinstance(model, Forest | Tree):
        return model.kind
    algorithm = model.info.algorithm
    if isinstance(model, RuleRegression):
        return f"{algorithm} rules with formulas"
    if isinstance(model, Committee):
        nearest = "" if model.neighbours is None else f", corrected by {model.neighbours.k} nearest rows"
        return f"{algorithm} committee of {len(model.members)} lists with formulas{nearest}"
    return f"{algorithm} {'decision list' if isinstance(model, DecisionList) else 'rule set'}"


def rules_of(model: Predictor) -> tuple[list[Rule], Rule | None, bool]:
    """A model's rules, its default, and whether position matters (a decision list)."""
    if isinstance(model, Tree):
        if model.regression:
            rules = [
                Rule(conds, Verbatim(render_number(float(model.nodes.value[leaf, 0]))))
                for leaf, conds in leaf_rules(model.nodes, model.features, column_units(model))
            ]
            return rules, None, False
        return list(decision_list(model).rules), None, False
    if isinstance(model, Forest):
        return [], None, False
    if isinstance(model, RuleRegression):  # a rule's formula, as its text, is what it predicts

        def as_rule(rule: NumberRule) -> Rule:
            return Rule(rule.conditions, Verbatim(render_formula(rule.formula)))

        return [as_rule(r) for r in model.rules], as_rule(model.default), model.ordered
    if isinstance(model, Committee):  # the lists one after another, each ending in its default
        listed = [
            Rule(r.conditions, Verbatim(f"list {m}: {render_formula(r.formula)}"))
            for m, member in enumerate(model.members, 1)
            for r in (*member.rules, member.default)
        ]
        return listed, None, True
    return list(model.rules), model.default, isinstance(model, DecisionList)


def _key(rule: Rule | None) -> tuple[frozenset[Condition], str] | None:
    return None if rule is None else (frozenset(rule.conditions), rule.prediction)


def _columns(rule: Rule) -> set[str]:
    return {c.column for c in rule.conditions}


def moved(old: Rule, new: Rule) -> tuple[Moved, ...]:
    """Per column (in the order the rules name them), conditions that differ."""
    order = list(dict.fromkeys([c.column for c in old.conditions] + [c.column for c in new.conditions]))
    out = []
    for column in order:
        before = tuple(c for c in old.conditions if c.column == column)
        after = tuple(c for c in new.conditions if c.column == column)
        if set(before) != set(after):
            out.append(Moved(column, before, after))
    return tuple(out)


def _by_position(old: list[Rule], new: list[Rule]) -> list[RuleChange]:
    out = []
    for i in range(max(len(old), len(new))):
        a, b = (old[i] if i < len(old) else None), (new[i] if i < len(new) else None)
        if a is None:
            out.append(RuleChange("added", None, i + 1, None, b))
        elif b is None:
            out.append(RuleChange("removed", i + 1, None, a, None))
        elif _key(a) == _key(b):
            out.append(RuleChange("same", i + 1, i + 1, a, b))
        else:
            out.append(RuleChange("changed", i + 1, i + 1, a, b, moved(a, b)))
    return out


def _by_content(old: list[Rule], new: list[Rule]) -> list[RuleChange]:
    """Same conditions and class first; then each rule left pairs with the most similar rule
    of its class left on the other side that tests a column it tests (shared conditions,
    then shared columns), best pairs first."""
    waiting: dict[tuple[frozenset[Condition], str], list[int]] = {}
    for j, rule in enumerate(new):
        waiting.setdefault(_key(rule), []).append(j)  # type: ignore[arg-type]
    matched: dict[int, int] = {}
    for i, rule in enumerate(old):
        slots = waiting.get(_key(rule))  # type: ignore[arg-type]
        if slots:
            matched[i] = slots.pop(0)
    old_left = [i for i in range(len(old)) if i not in matched]
    taken = set(matched.values())
    new_left = [j for j in range(len(new)) if j not in taken]
    pairs = []
    for i in old_left:
        for j in new_left:
            shared_columns = len(_columns(old[i]) & _columns(new[j]))
            if shared_columns and old[i].prediction == new[j].prediction:
                shared = len(set(old[i].conditions) & set(new[j].conditions))
                pairs.append(((-shared, -shared_columns, i, j), i, j))
    changed: dict[int, int] = {}
    used: set[int] = set()
    for _, i, j in sorted(pairs):
        if i not in changed and j not in used:
            changed[i] = j
            used.add(j)
    out = []
    for i, rule in enumerate(old):
        if i in matched:
            out.append(RuleChange("same", i + 1, matched[i] + 1, rule, new[matched[i]]))
        elif i in changed:
            j = changed[i]
            out.append(RuleChange("changed", i + 1, j + 1, rule, new[j], moved(rule, new[j])))
        else:
            out.append(RuleChange("removed", i + 1, None, rule, None))
    out += [RuleChange("added", None, j + 1, None, new[j]) for j in range(len(new)) if j not in taken and j not in used]
    return out


def _same_tree(a: TreeNodes, b: TreeNodes) -> bool:
    arrays = ("feature", "left", "right", "missing_left", "value")
    if a.n_nodes != b.n_nodes or any(not np.array_equal(getattr(a, name), getattr(b, name)) for name in arrays):
        return False
    if not np.array_equal(a.threshold, b.threshold, equal_nan=True):
        return False
    return a.left_levels == b.left_levels and a.right_levels == b.right_levels


IMPORTANCE_SHOWN = 5  # the largest importance changes a forest diff lists


def _forest_notes(old: Forest, new: Forest) -> list[str]:
    """What differs between two forests: their trees (tree by tree), out-of-bag error, and
    the features whose importance moved most; nothing when every tree is the same."""
    same = [old.features == new.features and _same_tree(a, b) for a, b in zip(old.trees, new.trees, strict=False)]
    if len(old.trees) == len(new.trees) and all(same):
        return []
    differing = len(old.trees) - sum(same) if len(old.trees) == len(new.trees) else None
    trees = f"{len(old.trees)} trees -> {len(new.trees)} trees"
    notes = [f"forest: {trees}" + (f", {differing} of them not the same" if differing is not None else "")]
    errors = [m.info.training.get("oob_mse" if m.regression else "oob_error") for m in (old, new)]
    if all(isinstance(e, int | float) for e in errors) and errors[0] != errors[1]:
        what = "mean squared error" if old.regression else "error"
        notes.append(f"out-of-bag {what}: {errors[0]:.4f} -> {errors[1]:.4f}")
    before, after = (m.info.training.get("importance") or {} for m in (old, new))
    if isinstance(before, dict) and isinstance(after, dict) and (before or after):
        names = sorted(set(before) | set(after))
        moved = sorted(names, key=lambda n: -abs(float(after.get(n, 0.0)) - float(before.get(n, 0.0))))
        shown = [
            f"{n} {float(before.get(n, 0.0)):.3f} -> {float(after.get(n, 0.0)):.3f}"
            for n in moved[:IMPORTANCE_SHOWN]
            if float(before.get(n, 0.0)) != float(after.get(n, 0.0))
        ]
        if shown:
            notes.append("importance: " + ", ".join(shown))
    return notes


def _tree_changes(old: Tree, new: Tree) -> tuple[list[RuleChange], list[SplitChange]]:
    """The two trees walked side by side from the root (see the module's docstring)."""
    old_rules, new_rules = rules_of(old)[0], rules_of(new)[0]
    old_number = {leaf: i for i, (leaf, _) in enumerate(leaf_rules(old.nodes, old.features), 1)}
    new_number = {leaf: i for i, (leaf, _) in enumerate(leaf_rules(new.nodes, new.features), 1)}
    a_nodes, b_nodes = old.nodes, new.nodes
    units = column_units(old) | column_units(new)
    changes: list[RuleChange] = []
    splits: list[SplitChange] = []

    def leaves(nodes: TreeNodes, node: int) -> list[int]:
        out, stack = [], [node]
        while stack:
            i = stack.pop()
            if nodes.feature[i] < 0:
                out.append(i)
            else:
                stack += [int(nodes.right[i]), int(nodes.left[i])]
        return out

    stack = [(0, 0)]
    while stack:
        a, b = stack.pop()
        fa, fb = int(a_nodes.feature[a]), int(b_nodes.feature[b])
        if fa < 0 and fb < 0:
            i, j = old_number[a], new_number[b]
            before, after = old_rules[i - 1], new_rules[j - 1]
            status = "same" if before.prediction == after.prediction else "changed"
            changes.append(RuleChange(status, i, j, before, after, () if status == "same" else moved(before, after)))
            continue
        if fa >= 0 and fb >= 0 and old.features[fa] == new.features[fb]:
            column = old.features[fa]
            test_a = single_test(a_nodes, a, column, to_left=True, units=units)
            test_b = single_test(b_nodes, b, column, to_left=True, units=units)
            if test_a != test_b:
                splits.append(SplitChange(column, test_a, test_b))
            stack += [(int(a_nodes.right[a]), int(b_nodes.right[b])), (int(a_nodes.left[a]), int(b_nodes.left[b]))]
            continue
        changes += [
            RuleChange("removed", old_number[x], None, old_rules[old_number[x] - 1], None) for x in leaves(a_nodes, a)
        ]
        changes += [
            RuleChange("added", None, new_number[y], None, new_rules[new_number[y] - 1]) for y in leaves(b_nodes, b)
        ]
    return changes, splits


def diff(old: Predictor, new: Predictor) -> ModelDiff:
    """``old`` against ``new``; the caller checks that both predict the same target."""
    old_rules, old_default, old_ordered = rules_of(old)
    new_rules, new_default, new_ordered = rules_of(new)
    ordered = old_ordered and new_ordered
    notes = []
    if kind_of(old) != kind_of(new):
        notes.append(f"model: {kind_of(old)} -> {kind_of(new)}")
    if old.classes != new.classes:
        notes.append(f"classes: {', '.join(old.classes)} -> {', '.join(new.classes)}")
    old_vote, new_vote = (getattr(m, "vote", None) for m in (old, new))
    if old_vote != new_vote and old_vote is not None and new_vote is not None:
        notes.append(f"vote: {old_vote.value} -> {new_vote.value}")
    if isinstance(old, Forest) and isinstance(new, Forest):
        notes += _forest_notes(old, new)
    nearest = [m.neighbours if isinstance(m, Committee) else None for m in (old, new)]
    if nearest[0] is not None and nearest[1] is not None and nearest[0] != nearest[1]:
        rows = [len(nb.residuals) for nb in nearest if nb is not None]
        notes.append(f"neighbours: the stored rows, their columns or errors differ ({rows[0]:,} -> {rows[1]:,} rows)")
    splits: list[SplitChange] = []
    if isinstance(old, Tree) and isinstance(new, Tree) and old.regression == new.regression:
        changes, splits = _tree_changes(old, new)
    else:
        changes = _by_position(old_rules, new_rules) if ordered else _by_content(old_rules, new_rules)
    return ModelDiff(
        old.target,
        kind_of(old),
        kind_of(new),
        ordered,
        tuple(changes),
        old_default,
        new_default,
        tuple(notes),
        tuple(splits),
    )
