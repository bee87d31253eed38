"""Models as PMML 4.4 documents that other engines (JPMML, PMML4S, …) score as rulecli does.

- A decision list is a ``RuleSetModel`` with ``firstHit``: its rules in order, the
  default rule as ``defaultScore``, each rule's class shares (BRL: posterior
  probabilities) as its ``ScoreDistribution``.
- A rule set is a ``RuleSetModel`` with ``weightedSum`` (votes ``one``, ``weighted``,
  ``distribution``: one rule per (rule, class) it votes for) or ``weightedMax`` (``best``).
  PMML leaves ties to the engine, so rulecli's tie order is written into the weights:
  with integer votes each weight is ``(vote * M + support) * (K + 1)`` (M above any sum of
  supports, K classes), and for ``weightedSum`` one rule per class that fires wherever any
  rule does adds ``K - rank`` of the class in the training prior — the class with the
  largest vote, then support, then prior wins in every engine. Fractional votes are
  written as they are (an exact tie is then the engine's to break). The engines'
  ``confidence`` of a rule set is a weight, not a probability.
- A tree is a ``TreeModel`` of binary splits: missing values (and categorical levels the
  split did not see) follow ``defaultChild``, the branch rulecli sends them down; every
  node carries its score and class counts.
- A forest is a ``MiningModel`` averaging its trees' class shares (or values).

Values travel as XML attribute values, which escape any character XML can carry; text
that XML 1.0 cannot carry at all (most control characters) is refused.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

import numpy as np

from rulecli.errors import ParamError
from rulecli.model.compile import class_prior, rule_shares
from rulecli.model.core import (
    Closed,
    Committee,
    Condition,
    DecisionList,
    Formula,
    Model,
    Neighbours,
    Op,
    Rule,
    RuleRegression,
    RuleSet,
    Vote,
)
from rulecli.model.export import formula_kinds
from rulecli.model.neighbours import MISSING, OFFSET, UNSEEN, fresh_prefix, levels_of, stored_arrays
from rulecli.model.ops import (
    OPS,
    Shape,
    class_votes,
    column_kinds,
    dated_kinds,
    ends,
    rule_support,
    tie_keys,
    tie_order,
)
from rulecli.model.tree import Forest, Predictor, Tree, TreeNodes, feature_kinds, leaf_shares, predicts_number
from rulecli.schema import Unit
from rulecli.version import __version__

NAMESPACE = "http://www.dmg.org/PMML-4_4"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# array members PMML could misread (quotes, spaces, backslashes) go into OR-ed equalities instead
_PLAIN_MEMBER = re.compile(r'[^\s"\\]+\Z')

_COMPARE = {
    Op.EQ: "equal",
    Op.NE: "notEqual",
    Op.LT: "lessThan",
    Op.LE: "lessOrEqual",
    Op.GT: "greaterThan",
    Op.GE: "greaterOrEqual",
}


def to_pmml(model: Predictor) -> str:
    """The model as one PMML 4.4 document."""
    root = ET.Element("PMML", {"xmlns": NAMESPACE, "version": "4.4"})
    header = ET.SubElement(root, "Header", {"description": f"rulecli model of '{model.target}'"})
    ET.SubElement(header, "Application", {"name": "rulecli", "version": __version__})
    if isinstance(model, Tree | Forest):
        used = feature_kinds(model)
        fields = dated_kinds({name: used[name] for name in model.features if name in used}, model)
    elif isinstance(model, RuleRegression | Committee):
        fields = formula_kinds(model)
    else:
        fields = dated_kinds(column_kinds(c for r in model.rules for c in r.conditions), model)
    _data_dictionary(root, model, fields)
    if isinstance(model, Forest):
        _forest(root, model, fields)
    elif isinstance(model, RuleRegression):
        _formula_rules(root, model, fields)
    elif isinstance(model, Committee):
        _committee(root, model, fields)
    elif isinstance(model, Tree):
        _tree_model(root, model.nodes, model, fields, top=True)
    else:
        _rule_set_model(root, model, fields)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _text(value: str, what: str) -> str:
    if _NOT_XML.search(value):
        raise ParamError(f"{what} {value!r} holds a control character that PMML (XML 1.0) cannot carry")
    return value


def _number(value: float) -> str:
    return repr(float(value))


def _regression(model: Predictor) -> bool:
    return predicts_number(model)


# ------------------------------------------------------------------------ schema


def _data_dictionary(root: ET.Element, model: Model | Tree | Forest, fields: dict[str, bool]) -> None:
    dictionary = ET.SubElement(root, "DataDictionary", {"numberOfFields": str(len(fields) + 1)})
    schema = model.info.schema
    known = {f.name: f.levels for f in schema.features} if schema is not None else {}
    for name, numeric in fields.items():
        field = ET.SubElement(dictionary, "DataField", _field_type(_text(name, "column name"), numeric))
        for level in () if numeric else known.get(name, ()):
            ET.SubElement(field, "Value", {"value": _text(level, "value")})
    target = ET.SubElement(dictionary, "DataField", _field_type(_text(model.target, "target"), _regression(model)))
    for cls in model.classes:
        ET.SubElement(target, "Value", {"value": _text(cls, "class")})


# PMML's own counts of days (seconds) since 1970: an evaluator reads the date given and
# compares its count with the rules' numbers
_DATE_TYPES = {Unit.DATE: "dateDaysSince[1970]", Unit.DATETIME: "dateTimeSecondsSince[1970]"}


def _field_type(name: str, numeric: bool | Unit) -> dict[str, str]:
    if isinstance(numeric, Unit):
        return {"name": name, "optype": "continuous", "dataType": _DATE_TYPES[numeric]}
    if numeric:
        return {"name": name, "optype": "continuous", "dataType": "double"}
    return {"name": name, "optype": "categorical", "dataType": "string"}


def _mining_schema(parent: ET.Element, model: Model | Tree | Forest, fields: Iterable[str]) -> None:
    schema = ET.SubElement(parent, "MiningSchema")
    ET.SubElement(schema, "MiningField", {"name": model.target, "usageType": "target"})
    for name in fields:
        # a level training never saw is "invalid" in PMML: compared as it is, so it meets no
        # rule's test, and the trees' predicates send it down the branch that takes missing
        # values, as rulecli does
        ET.SubElement(schema, "MiningField", {"name": name, "invalidValueTreatment": "asIs"})


def _output(parent: ET.Element, model: Model | Tree | Forest, probabilities: bool) -> None:
    output = ET.SubElement(parent, "Output")
    kind = _field_type("prediction", _regression(model))
    ET.SubElement(output, "OutputField", {**kind, "feature": "predictedValue"})
    if probabilities:
        for cls in model.classes:
            ET.SubElement(
                output,
                "OutputField",
                {
                    "name": f"proba_{cls}",
                    "optype": "continuous",
                    "dataType": "double",
                    "feature": "probability",
                    "value": cls,
                },
            )


# --------------------------------------------------------------------- predicates


def _predicate(parent: ET.Element, conditions: tuple[Condition, ...], kinds: dict[str, bool]) -> None:
    if not conditions:
        ET.SubElement(parent, "True")
    elif len(conditions) == 1:
        _condition(parent, conditions[0], kinds.get(conditions[0].column, False))
    else:
        both = ET.SubElement(parent, "CompoundPredicate", {"booleanOperator": "and"})
        for cond in conditions:
            _condition(both, cond, kinds.get(cond.column, False))


def _condition(parent: ET.Element, cond: Condition, numeric: bool) -> None:
    if cond.or_missing:
        parent = ET.SubElement(parent, "CompoundPredicate", {"booleanOperator": "or"})
    spec = OPS[cond.op]
    name = cond.column
    if spec.shape == Shape.MISSING:
        _simple(parent, name, "isNotMissing" if spec.negated else "isMissing")
    elif spec.shape == Shape.COMPARE:
        _simple(parent, name, _COMPARE[cond.op], cond.value, numeric)
    elif spec.shape == Shape.SET:
        assert isinstance(cond.value, tuple)
        _members(parent, name, cond.value, numeric, negated=spec.negated)
    else:
        _interval(parent, name, cond.value, cond.closed)  # type: ignore[arg-type]
    if cond.or_missing:
        _simple(parent, name, "isMissing")


def _simple(parent: ET.Element, name: str, operator: str, value: object = None, numeric: bool = False) -> None:
    attributes = {"field": name, "operator": operator}
    if value is not None:
        attributes["value"] = _number(value) if numeric else _text(str(value), "value")  # type: ignore[arg-type]
    ET.SubElement(parent, "SimplePredicate", attributes)


def _members(parent: ET.Element, name: str, values: tuple, numeric: bool, *, negated: bool) -> None:
    shown = [_number(v) if numeric else _text(str(v), "value") for v in values]
    if len(shown) == 1:
        _simple(parent, name, "notEqual" if negated else "equal", values[0], numeric)
    elif numeric or all(_PLAIN_MEMBER.match(v) for v in shown):
        element = ET.SubElement(
            parent, "SimpleSetPredicate", {"field": name, "booleanOperator": "isNotIn" if negated else "isIn"}
        )
        array = ET.SubElement(element, "Array", {"n": str(len(shown)), "type": "real" if numeric else "string"})
        array.text = " ".join(shown)
    else:
        group = ET.SubElement(parent, "CompoundPredicate", {"booleanOperator": "and" if negated else "or"})
        for value in values:
            _simple(group, name, "notEqual" if negated else "equal", value, numeric)


def _interval(parent: ET.Element, name: str, value: tuple[float, float], closed: Closed) -> None:
    low, high = value
    with_low, with_high = ends(closed)
    parts = []
    if low != float("-inf"):
        parts.append(("greaterOrEqual" if with_low else "greaterThan", low))
    if high != float("inf"):
        parts.append(("lessOrEqual" if with_high else "lessThan", high))
    if not parts:
        _simple(parent, name, "isNotMissing")
        return
    group = ET.SubElement(parent, "CompoundPredicate", {"booleanOperator": "and"}) if len(parts) > 1 else parent
    for operator, bound in parts:
        _simple(group, name, operator, bound, numeric=True)


# --------------------------------------------------------------------- rule models


def _rule_set_model(root: ET.Element, model: Model, fields: dict[str, bool]) -> None:
    element = ET.SubElement(
        root, "RuleSetModel", {"functionName": "classification", "algorithmName": model.info.algorithm or "rules"}
    )
    _mining_schema(element, model, fields)
    prior = class_prior(model)
    # rule set models have no class probabilities in PMML engines: their confidence is the
    # deciding rule's share (first hit) or the winning weight (votes)
    _output(element, model, probabilities=False)
    ET.SubElement(
        element.find("Output"),
        "OutputField",
        {"name": "confidence", "optype": "continuous", "dataType": "double", "feature": "confidence"},
    )
    attributes = {}
    if model.default is not None:
        attributes["defaultScore"] = _text(model.default.prediction, "class")
        # JPMML requires a confidence beside a default score; without statistics there is none to give but 1
        shares = rule_shares(model.default, prior) if prior is not None else None
        confidence = shares[model.classes.index(model.default.prediction)] if shares else 1.0
        attributes["defaultConfidence"] = _number(confidence)
    rule_set = ET.SubElement(element, "RuleSet", attributes)
    if isinstance(model, DecisionList):
        ET.SubElement(rule_set, "RuleSelectionMethod", {"criterion": "firstHit"})
        for i, rule in enumerate(model.rules):
            _simple_rule(rule_set, rule, str(i + 1), rule.prediction, 1.0, fields, model, prior)
    else:
        _voting_rules(rule_set, model, fields)


def _simple_rule(
    parent: ET.Element,
    rule: Rule,
    rule_id: str,
    score: str,
    weight: float,
    kinds: dict[str, bool],
    model: Model,
    prior: list[float] | None,
    confidence: float | None = None,
) -> None:
    attributes = {"id": rule_id, "score": _text(score, "class"), "weight": _number(weight)}
    shares = rule_shares(rule, prior) if prior is not None else None
    if rule.stats is not None:
        attributes["recordCount"] = str(rule.stats.covered)
        attributes["nbCorrect"] = str(rule.stats.correct)
    if shares is not None:
        confidence = shares[model.classes.index(rule.prediction)]
    if confidence is not None:
        attributes["confidence"] = _number(confidence)
    element = ET.SubElement(parent, "SimpleRule", attributes)
    _predicate(element, rule.conditions, kinds)
    if shares is not None and rule.stats is not None and rule.stats.class_counts is not None:
        for cls, count, share in zip(model.classes, rule.stats.class_counts, shares, strict=True):
            ET.SubElement(
                element,
                "ScoreDistribution",
                {"value": cls, "recordCount": str(count), "probability": _number(share)},
            )


def _voting_rules(rule_set: ET.Element, model: RuleSet, kinds: dict[str, bool]) -> None:
    best = model.vote == Vote.BEST
    ET.SubElement(rule_set, "RuleSelectionMethod", {"criterion": "weightedMax" if best else "weightedSum"})
    k = len(model.classes)
    votes = [class_votes(r, model.classes, model.vote) for r in model.rules]
    supports = [rule_support(r) for r in model.rules]
    keys = tie_keys(votes, supports, tie_order(model.classes, model.info.training))
    exact = keys is not None
    scale, prefer = keys if keys is not None else (1.0, [0.0] * k)

    def weight(vote: float, support: float, cls: int) -> float:
        if not exact:
            return vote
        return (vote * scale + support) * (k + 1) + (prefer[cls] if best else 0)

    for i, (rule, row) in enumerate(zip(model.rules, votes, strict=True)):
        own = model.classes.index(rule.prediction)
        for cls, vote in enumerate(row):
            support = supports[i] if cls == own else 0.0
            if vote or (exact and support):
                rule_id = str(i + 1) if sum(1 for v in row if v) <= 1 else f"{i + 1}:{model.classes[cls]}"
                w = weight(vote, support, cls)
                # JPMML ranks weightedMax's classes by the winning rule's confidence, PMML4S by its weight
                _simple_rule(rule_set, rule, rule_id, model.classes[cls], w, kinds, model, None, w if best else None)
    if exact and not best and model.rules:
        # the training prior breaks the remaining ties, among rows some rule matches
        for cls in range(k):
            element = ET.SubElement(
                rule_set,
                "SimpleRule",
                {"id": f"prior:{model.classes[cls]}", "score": model.classes[cls], "weight": _number(prefer[cls])},
            )
            anyone = (
                ET.SubElement(element, "CompoundPredicate", {"booleanOperator": "or"})
                if len(model.rules) > 1
                else element
            )
            for rule in model.rules:
                _predicate(anyone, rule.conditions, kinds)


# ---------------------------------------------------------------------------- trees


def _tree_model(
    parent: ET.Element, nodes: TreeNodes, model: Tree | Forest, fields: dict[str, bool], *, top: bool
) -> None:
    regression = _regression(model)
    element = ET.SubElement(
        parent,
        "TreeModel",
        {
            "functionName": "regression" if regression else "classification",
            "algorithmName": "rulecli-cart",
            "splitCharacteristic": "binarySplit",
            "missingValueStrategy": "defaultChild",
            "noTrueChildStrategy": "returnLastPrediction",
        },
    )
    _mining_schema(element, model, fields)
    if top:
        _output(element, model, probabilities=not regression)
    shares = leaf_shares(nodes)
    names = model.features
    # node elements are made parent first with an explicit stack: deep trees stay off the recursion limit
    root = ET.SubElement(element, "Node", {"id": "0"})
    ET.SubElement(root, "True")
    stack = [(0, root)]
    while stack:
        index, node = stack.pop()
        _node_score(node, nodes, shares, index, model)
        j = int(nodes.feature[index])
        if j < 0:
            continue
        left, right = int(nodes.left[index]), int(nodes.right[index])
        missing_child = left if nodes.missing_left[index] else right
        node.set("defaultChild", str(missing_child))
        children = []
        for child, goes_left in ((left, True), (right, False)):
            element_child = ET.SubElement(node, "Node", {"id": str(child)})
            _split_predicate(element_child, nodes, index, names[j], goes_left, child == missing_child)
            children.append((child, element_child))
        stack.extend(reversed(children))


def _split_predicate(
    parent: ET.Element, nodes: TreeNodes, index: int, name: str, goes_left: bool, takes_missing: bool
) -> None:
    threshold = float(nodes.threshold[index])
    if threshold == np.inf:  # present values left, missing ones right
        _simple(parent, name, "isNotMissing" if goes_left else "isMissing")
        return
    if not np.isnan(threshold):
        _simple(parent, name, "lessThan" if goes_left else "greaterOrEqual", threshold, numeric=True)
        return
    mine = nodes.left_levels[index] if goes_left else nodes.right_levels[index]
    other = nodes.right_levels[index] if goes_left else nodes.left_levels[index]
    if takes_missing:
        # every level the other branch does not take comes here: levels this node did not
        # see and unseen ones, as rulecli routes them (missing values follow defaultChild)
        if other:
            _members(parent, name, tuple(other), False, negated=True)
        else:
            ET.SubElement(parent, "True")
    elif mine:
        _members(parent, name, tuple(mine), False, negated=False)
    else:
        ET.SubElement(parent, "False")


def _node_score(node: ET.Element, nodes: TreeNodes, shares: np.ndarray, index: int, model: Tree | Forest) -> None:
    count = float(nodes.n_samples[index]) if nodes.n_samples[index] else float(nodes.value[index].sum())
    node.set("recordCount", _number(count))
    if model.regression:
        node.set("score", _number(nodes.value[index, 0]))
        return
    node.set("score", _text(model.classes[int(np.argmax(shares[index]))], "class"))
    # called once the node holds its predicate and before its children: PMML's element order
    for k, cls in enumerate(model.classes):
        ET.SubElement(
            node,
            "ScoreDistribution",
            {"value": cls, "recordCount": _number(nodes.value[index, k]), "probability": _number(shares[index, k])},
        )


def _committee(root: ET.Element, model: Committee, fields: dict[str, bool]) -> None:
    """A mining model that averages its members' predictions, each member a segment that
    always holds, holding the member's rules as :func:`_formula_rules` writes them. With a
    neighbour correction, a mining model that sums that one and a nearest-neighbour model
    of the stored rows' residuals, its target kept within the bounds."""
    if model.neighbours is not None:
        top = ET.SubElement(root, "MiningModel", {"functionName": "regression", "algorithmName": model.info.algorithm})
        _mining_schema(top, model, fields)
        _output(top, model, probabilities=False)
        low, high = model.neighbours.bounds
        targets = ET.SubElement(top, "Targets")
        ET.SubElement(targets, "Target", {"field": model.target, "min": _number(low), "max": _number(high)})
        both = ET.SubElement(top, "Segmentation", {"multipleModelMethod": "sum"})
        root = ET.SubElement(both, "Segment", {"id": "rules"})
        ET.SubElement(root, "True")
        nearest = ET.SubElement(both, "Segment", {"id": "neighbours"})
        ET.SubElement(nearest, "True")
        _nearest_neighbours(nearest, model, model.neighbours, fields)
    element = ET.SubElement(root, "MiningModel", {"functionName": "regression", "algorithmName": model.info.algorithm})
    _mining_schema(element, model, fields)
    _output(element, model, probabilities=False)
    segmentation = ET.SubElement(element, "Segmentation", {"multipleModelMethod": "average"})
    for m, member in enumerate(model.members, 1):
        segment = ET.SubElement(segmentation, "Segment", {"id": f"list{m}"})
        ET.SubElement(segment, "True")
        _formula_rules(segment, member, fields)


def _nearest_neighbours(parent: ET.Element, model: Committee, nb: Neighbours, fields: dict[str, bool]) -> None:
    """The stored rows' residuals as a nearest-neighbour model: derived fields that read a
    row as rulecli's distance does (a number kept within its range, missing as its fill,
    and its missing flag; a text as its stored code, -1 missing, -2 never stored), a
    city-block distance weighing them as rulecli does, and the residuals averaged with
    weights 1 / (distance + 0.5) over the k nearest."""
    knn = ET.SubElement(
        parent,
        "NearestNeighborModel",
        {
            "functionName": "regression",
            "numberOfNeighbors": str(nb.k),
            "continuousScoringMethod": "weightedAverage",
            "threshold": _number(OFFSET),
        },
    )
    schema = ET.SubElement(knn, "MiningSchema")
    ET.SubElement(schema, "MiningField", {"name": model.target, "usageType": "target"})
    for column in nb.columns:
        ET.SubElement(schema, "MiningField", {"name": column.name, "invalidValueTreatment": "asIs"})
    local = ET.SubElement(knn, "LocalTransformations")
    inputs = _distance_fields(local, nb, fresh_prefix("nb", fields))
    stored = stored_arrays(nb)
    instances = ET.SubElement(
        knn,
        "TrainingInstances",
        {"recordCount": str(len(nb.residuals)), "fieldCount": str(len(inputs) + 1), "isTransformed": "true"},
    )
    names = ET.SubElement(instances, "InstanceFields")
    for k, (name, _, _) in enumerate(inputs):
        ET.SubElement(names, "InstanceField", {"field": name, "column": f"c{k}"})
    ET.SubElement(names, "InstanceField", {"field": model.target, "column": "residual"})
    table = ET.SubElement(instances, "InlineTable")
    columns = [a for values, missing in stored for a in ((values,) if missing is None else (values, missing))]
    for i, residual in enumerate(nb.residuals):
        row = ET.SubElement(table, "row")
        for k, array in enumerate(columns):
            ET.SubElement(row, f"c{k}").text = _number(float(array[i]))
        ET.SubElement(row, "residual").text = _number(residual)
    measure = ET.SubElement(knn, "ComparisonMeasure", {"kind": "distance"})
    ET.SubElement(measure, "cityBlock")
    knn_inputs = ET.SubElement(knn, "KNNInputs")
    for name, weight, compare in inputs:
        ET.SubElement(
            knn_inputs, "KNNInput", {"field": name, "fieldWeight": _number(weight), "compareFunction": compare}
        )


def _distance_fields(local: ET.Element, nb: Neighbours, prefix: str) -> list[tuple[str, float, str]]:
    """The derived fields a row is compared by, as rulecli's distance reads it: a number kept
    within its range (missing as its fill) and its missing flag, a text as its stored code;
    each with its weight and compare function, in the order the distance adds them."""
    inputs: list[tuple[str, float, str]] = []
    for j, (column, (_, missing)) in enumerate(zip(nb.columns, stored_arrays(nb), strict=True)):
        value = ET.SubElement(
            local, "DerivedField", {"name": f"{prefix}v{j}", "optype": "continuous", "dataType": "double"}
        )
        if missing is None:
            attributes = {"outputColumn": "code", "dataType": "double"}
            codes = ET.SubElement(
                value, "MapValues", {**attributes, "defaultValue": _number(UNSEEN), "mapMissingTo": _number(MISSING)}
            )
            ET.SubElement(codes, "FieldColumnPair", {"field": column.name, "column": "level"})
            table = ET.SubElement(codes, "InlineTable")
            for level, n in levels_of(nb.values[j]).items():
                row = ET.SubElement(table, "row")
                ET.SubElement(row, "level").text = _text(str(level), "value")
                ET.SubElement(row, "code").text = _number(n)
            inputs.append((f"{prefix}v{j}", column.weight, "delta"))
            continue
        high = ET.SubElement(value, "Apply", {"function": "min"})
        low = ET.SubElement(high, "Apply", {"function": "max"})
        _if_missing(low, column.name, column.fill)
        ET.SubElement(low, "Constant", {"dataType": "double"}).text = _number(column.low)
        ET.SubElement(high, "Constant", {"dataType": "double"}).text = _number(column.high)
        flag = ET.SubElement(
            local, "DerivedField", {"name": f"{prefix}m{j}", "optype": "continuous", "dataType": "double"}
        )
        _if_missing(flag, column.name, 1.0, 0.0)
        inputs += [(f"{prefix}v{j}", column.weight, "absDiff"), (f"{prefix}m{j}", 1.0, "absDiff")]
    return inputs


def _if_missing(parent: ET.Element, name: str, missing: float, present: float | None = None) -> None:
    """``missing`` where the column is missing; else ``present``, or the column's value."""
    choose = ET.SubElement(parent, "Apply", {"function": "if"})
    ET.SubElement(ET.SubElement(choose, "Apply", {"function": "isMissing"}), "FieldRef", {"field": name})
    ET.SubElement(choose, "Constant", {"dataType": "double"}).text = _number(missing)
    if present is None:
        ET.SubElement(choose, "FieldRef", {"field": name})
    else:
        ET.SubElement(choose, "Constant", {"dataType": "double"}).text = _number(present)


def _formula_rules(root: ET.Element, model: RuleRegression, fields: dict[str, bool]) -> None:
    """Rules with formulas as a mining model that selects the first segment whose predicate
    holds, each segment a regression model: its terms as derived fields (a missing value
    as the term's fill, a level set as 1 or 0), its bounds as the target's min and max.
    Unordered rules: a first segment where any rule matches, holding a mining model that
    averages the segments (rules) whose predicates hold; then the default's."""
    element = ET.SubElement(root, "MiningModel", {"functionName": "regression", "algorithmName": model.info.algorithm})
    _mining_schema(element, model, fields)
    _output(element, model, probabilities=False)
    segmentation = ET.SubElement(element, "Segmentation", {"multipleModelMethod": "selectFirst"})
    if model.ordered or not model.rules:
        for i, rule in enumerate((*model.rules, model.default), 1):
            segment = ET.SubElement(segmentation, "Segment", {"id": str(i)})
            _predicate(segment, rule.conditions, fields)
            _regression_model(segment, model.target, rule.formula, fields)
        return
    matched = ET.SubElement(segmentation, "Segment", {"id": "matched"})
    either = ET.SubElement(matched, "CompoundPredicate", {"booleanOperator": "or"}) if len(model.rules) > 1 else matched
    for rule in model.rules:
        _predicate(either, rule.conditions, fields)
    averaged = ET.SubElement(matched, "MiningModel", {"functionName": "regression"})
    _mining_schema(averaged, model, fields)
    _output(averaged, model, probabilities=False)  # PMML4S returns the selected segment's outputs
    rules = ET.SubElement(averaged, "Segmentation", {"multipleModelMethod": "average"})
    for i, rule in enumerate(model.rules, 1):
        segment = ET.SubElement(rules, "Segment", {"id": str(i)})
        _predicate(segment, rule.conditions, fields)
        _regression_model(segment, model.target, rule.formula, fields)
    default = ET.SubElement(segmentation, "Segment", {"id": "default"})
    ET.SubElement(default, "True")
    _regression_model(default, model.target, model.default.formula, fields)


def _regression_model(parent: ET.Element, target: str, formula: Formula, fields: dict[str, bool]) -> None:
    regression = ET.SubElement(parent, "RegressionModel", {"functionName": "regression"})
    schema = ET.SubElement(regression, "MiningSchema")
    ET.SubElement(schema, "MiningField", {"name": target, "usageType": "target"})
    for name in dict.fromkeys(t.column for t in formula.terms):
        ET.SubElement(schema, "MiningField", {"name": name, "invalidValueTreatment": "asIs"})
    # PMML4S returns the selected segment's outputs, not the mining model's: each names its prediction
    output = ET.SubElement(regression, "Output")
    ET.SubElement(output, "OutputField", {**_field_type("prediction", True), "feature": "predictedValue"})
    if formula.bounds is not None:
        targets = ET.SubElement(regression, "Targets")
        low, high = formula.bounds
        ET.SubElement(targets, "Target", {"field": target, "min": _number(low), "max": _number(high)})
    local = ET.SubElement(regression, "LocalTransformations")
    table = ET.SubElement(regression, "RegressionTable", {"intercept": _number(formula.intercept)})
    for k, term in enumerate(formula.terms):
        name = f"term{k}"
        derived = ET.SubElement(local, "DerivedField", {"name": name, "optype": "continuous", "dataType": "double"})
        choose = ET.SubElement(derived, "Apply", {"function": "if"})
        ET.SubElement(ET.SubElement(choose, "Apply", {"function": "isMissing"}), "FieldRef", {"field": term.column})
        ET.SubElement(choose, "Constant", {"dataType": "double"}).text = _number(term.fill)
        if term.levels is None:
            ET.SubElement(choose, "FieldRef", {"field": term.column})
        else:
            member = ET.SubElement(choose, "Apply", {"function": "if"})
            among = ET.SubElement(member, "Apply", {"function": "isIn"})
            ET.SubElement(among, "FieldRef", {"field": term.column})
            for level in term.levels:
                ET.SubElement(among, "Constant", {"dataType": "string"}).text = _text(level, "value")
            ET.SubElement(member, "Constant", {"dataType": "double"}).text = "1.0"
            ET.SubElement(member, "Constant", {"dataType": "double"}).text = "0.0"
        ET.SubElement(table, "NumericPredictor", {"name": name, "coefficient": _number(term.coefficient)})


def _forest(root: ET.Element, model: Forest, fields: dict[str, bool]) -> None:
    regression = model.regression
    element = ET.SubElement(
        root,
        "MiningModel",
        {"functionName": "regression" if regression else "classification", "algorithmName": "rulecli-forest"},
    )
    _mining_schema(element, model, fields)
    _output(element, model, probabilities=not regression)
    segmentation = ET.SubElement(element, "Segmentation", {"multipleModelMethod": "average"})
    for i, nodes in enumerate(model.trees):
        segment = ET.SubElement(segmentation, "Segment", {"id": str(i + 1)})
        ET.SubElement(segment, "True")
        _tree_model(segment, nodes, model, fields, top=False)
