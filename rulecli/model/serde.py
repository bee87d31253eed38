"""Versioned JSON model files: deterministic to write, validated to read, never executed."""

from __future__ import annotations

import gc
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import polars as pl

from rulecli.errors import ModelFormatError, ParamError
from rulecli.model import numbers
from rulecli.model.core import (
    Closed,
    Committee,
    Condition,
    DecisionList,
    Formula,
    Model,
    ModelInfo,
    NeighbourColumn,
    Neighbours,
    NumberRule,
    NumberStats,
    Op,
    Rule,
    RuleRegression,
    RuleSet,
    RuleStats,
    Scalar,
    Term,
    Vote,
    dated,
    dated_rule,
    schema_units,
)
from rulecli.model.ops import MAX_EXACT
from rulecli.model.tree import Forest, Predictor, Tree, TreeModel, TreeNodes
from rulecli.schema import Cuts, Feature, Kind, Schema, Target, Unit
from rulecli.version import __version__

FORMAT = "rulecli-model"
FORMAT_VERSION = 1
CUTS_FORMAT = "rulecli-cuts"


# ---------------------------------------------------------------------------- writing


@contextmanager
def _collector_paused() -> Iterator[None]:
    """A forest's file is millions of small lists and numbers, none of them in a cycle; the
    cyclic collector would walk them again and again as they are made (parsing a 79 MiB
    forest: 2.5 s with it, 1.1 s without)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _cuts_to_json(cuts: Cuts | None) -> dict[str, Any] | None:
    if cuts is None:
        return None
    return {
        "column": cuts.column,
        "edges": list(cuts.edges),
        "right_closed": cuts.right_closed,
        "low": cuts.low,
        "high": cuts.high,
        "method": cuts.method,
    }


def _schema_to_json(schema: Schema | None) -> dict[str, Any] | None:
    if schema is None:
        return None
    return {
        "features": [
            {
                "name": f.name,
                "kind": f.kind.value,
                "levels": list(f.levels),
                "cuts": _cuts_to_json(f.cuts),
            }
            | ({"unit": f.unit.value} if f.unit is not None else {})
            for f in schema.features
        ],
        "target": {
            "name": schema.target.name,
            "classes": list(schema.target.classes),
            "bins": _cuts_to_json(schema.target.bins),
        }
        | ({"reading": schema.target.reading} if schema.target.reading is not None else {}),
    } | ({"left_out": dict(schema.left_out)} if schema.left_out else {})


def _condition_to_json(cond: Condition) -> dict[str, Any]:
    out: dict[str, Any] = {"column": cond.column, "op": cond.op.value}
    if isinstance(cond.value, tuple):
        out["value"] = list(cond.value)
    elif cond.value is not None:
        out["value"] = cond.value
    if cond.op == Op.INTERVAL:
        out["closed"] = cond.closed.value
    if cond.or_missing:
        out["or_missing"] = True
    return out


def _rule_to_json(rule: Rule) -> dict[str, Any]:
    out: dict[str, Any] = {
        "conditions": [_condition_to_json(c) for c in rule.conditions],
        "prediction": rule.prediction,
    }
    if rule.stats is not None:
        out["stats"] = {"covered": rule.stats.covered, "correct": rule.stats.correct}
        if rule.stats.class_counts is not None:
            out["stats"]["class_counts"] = list(rule.stats.class_counts)
    if rule.weight is not None:
        out["weight"] = rule.weight
    if rule.probabilities is not None:
        out["probabilities"] = list(rule.probabilities)
    return out


def _number_rule_to_json(rule: NumberRule) -> dict[str, Any]:
    formula = rule.formula
    out: dict[str, Any] = {
        "conditions": [_condition_to_json(c) for c in rule.conditions],
        "formula": {
            "intercept": formula.intercept,
            "terms": [
                {"column": t.column, "coefficient": t.coefficient, "fill": t.fill}
                | ({"levels": list(t.levels)} if t.levels is not None else {})
                for t in formula.terms
            ],
        }
        | ({"bounds": list(formula.bounds)} if formula.bounds is not None else {}),
    }
    if rule.stats is not None:
        stats = rule.stats
        out["stats"] = {"covered": stats.covered, "mean": stats.mean, "sd": stats.sd, "rmse": stats.rmse}
    return out


def _header(model: Predictor) -> dict[str, Any]:
    """The fields every model file starts with."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rulecli_version": __version__,
        "kind": model.kind,
        "algorithm": model.info.algorithm,
        "params": model.info.params,
        "schema": _schema_to_json(model.info.schema),
        "training": model.info.training,
        "target": model.target,
        "classes": list(model.classes),
    }


def model_to_dict(model: Model) -> dict[str, Any]:
    out: dict[str, Any] = {
        **_header(model),
        "rules": [_rule_to_json(r) for r in model.rules],
        "default": _rule_to_json(model.default) if model.default is not None else None,
    }
    if isinstance(model, RuleSet):
        out["vote"] = model.vote.value
    return out


def nodes_json(trees: Sequence[TreeNodes]) -> list[dict[str, str]]:
    """Each tree's node arrays as JSON texts, one per key, every tree's numbers of a key
    written in one pass (:mod:`rulecli.model.numbers`)."""
    sizes = [t.feature.size for t in trees]

    def each(arrays: list[np.ndarray], texts: Callable[[np.ndarray], pl.Series]) -> list[str]:
        return numbers.arrays(texts(np.concatenate(arrays)), sizes)

    value = np.concatenate([t.value for t in trees])
    cell = numbers.float_texts if value.shape[1] == 1 else numbers.count_texts
    by_key = {
        "feature": each([t.feature for t in trees], numbers.int_texts),
        "threshold": each([t.threshold for t in trees], _threshold_texts),
        # tuples: JSON writes them as arrays, and a million nodes' copies as lists took a second
        "left_levels": [json.dumps(t.left_levels, separators=(",", ":")) for t in trees],
        "right_levels": [json.dumps(t.right_levels, separators=(",", ":")) for t in trees],
        "missing_left": each([t.missing_left for t in trees], numbers.bool_texts),
        "left": each([t.left for t in trees], numbers.int_texts),
        "right": each([t.right for t in trees], numbers.int_texts),
        "value": numbers.arrays(numbers.rows([cell(value[:, k]) for k in range(value.shape[1])]), sizes),
        "n_samples": each([t.n_samples for t in trees], numbers.count_texts),
        "impurity": each([t.impurity for t in trees], numbers.short_texts),
        "improvement": each([t.improvement for t in trees], numbers.short_texts),
    }
    return [{key: texts[k] for key, texts in by_key.items()} for k in range(len(trees))]


def _threshold_texts(values: np.ndarray) -> pl.Series:
    """NaN (no threshold) as null; JSON has no infinity: a present-vs-missing split's +inf
    threshold is written "+inf"."""
    absent, above = np.isnan(values), values == math.inf
    texts = numbers.float_texts(np.where(absent | above, 0.0, values))  # -inf raises
    return texts.scatter(np.flatnonzero(absent), "null").scatter(np.flatnonzero(above), '"+inf"')


def _tree_model_to_dict(model: TreeModel) -> dict[str, Any]:
    out: dict[str, Any] = {**_header(model), "features": list(model.features)}
    if isinstance(model, Tree):
        (out["tree"],) = nodes_json([model.nodes])
    else:
        out["trees"] = nodes_json(model.trees)
    return out


def dumps(model: Predictor) -> str:
    """Serialise a model: sorted keys, fixed indentation, trailing newline, no NaN.

    Tree node arrays are written one array per line: a forest has millions of numbers.
    """
    with _collector_paused():
        return _dumps(model)


def _dumps(model: Predictor) -> str:
    if isinstance(model, RuleRegression):
        body = {**_header(model), **_number_list_to_json(model)}
        return json.dumps(body, sort_keys=True, indent=2, allow_nan=False) + "\n"
    arrays: list[str] = []

    def compact(text: str) -> str:
        arrays.append(text)
        return f"@@array{len(arrays) - 1}@@"

    if isinstance(model, Committee):
        body = {**_header(model), "members": [_number_list_to_json(m) for m in model.members]}
        if model.neighbours is not None:
            body["neighbours"] = _neighbours_to_json(model.neighbours, compact)
    elif not isinstance(model, Tree | Forest):
        return json.dumps(model_to_dict(model), sort_keys=True, indent=2, allow_nan=False) + "\n"
    else:
        body = _tree_model_to_dict(model)
        if "tree" in body:
            body["tree"] = {key: compact(text) for key, text in body["tree"].items()}
        else:
            body["trees"] = [{key: compact(text) for key, text in t.items()} for t in body["trees"]]
    text = json.dumps(body, sort_keys=True, indent=2, allow_nan=False)
    pieces = text.split('"@@array')
    out = [pieces[0]]
    for piece in pieces[1:]:
        number, rest = piece.split('@@"', 1)
        out.append(arrays[int(number)] + rest)
    return "".join(out) + "\n"


def _neighbours_to_json(nb: Neighbours, compact: Callable[[str], str]) -> dict[str, Any]:
    """The stored rows one array per line (column by column), as a tree's nodes are."""

    def line(values: Sequence[object]) -> str:
        return compact(json.dumps(list(values), separators=(",", ":"), allow_nan=False))

    return {
        "k": nb.k,
        "bounds": list(nb.bounds),
        "columns": [
            {"name": c.name, "weight": c.weight, "numeric": c.numeric, "fill": c.fill, "low": c.low, "high": c.high}
            for c in nb.columns
        ],
        "values": [line(v) for v in nb.values],
        "residuals": line(nb.residuals),
    }


def dumps_cuts(cuts: list[Cuts], params: Mapping[str, object]) -> str:
    body = {
        "format": CUTS_FORMAT,
        "format_version": FORMAT_VERSION,
        "rulecli_version": __version__,
        "params": dict(params),
        "cuts": [_cuts_to_json(c) for c in cuts],
    }
    return json.dumps(body, sort_keys=True, indent=2, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------- reading


class _Reader:
    """Typed access into parsed JSON, with errors that name the offending path."""

    def __init__(self, source: str, arrays: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.source = source
        self.arrays = arrays or {}  # the node arrays set aside from the JSON (_set_aside)
        self.parsed = _parsed(self.arrays)

    def nodes(self, obj: Any, key: str, where: str, optional: bool = False) -> Any:
        """A node array: parsed by NumPy where it holds only what its key allows, else the
        JSON list, checked value by value."""
        value = self.get(obj, key, where, (list, str), optional)
        if not isinstance(value, str):
            return value
        if value in self.parsed:
            return self.parsed[value]
        if value not in self.arrays:
            raise self.fail(f"{where}.{key}", "expected a list")
        return _parse_json(self.arrays[value][1], self.source, f"a valid array at {where}.{key}")

    def fail(self, where: str, message: str) -> ModelFormatError:
        return ModelFormatError(f"{self.source}: {where}: {message}")

    def get(self, obj: Any, key: str, where: str, kinds: tuple[type, ...], optional: bool = False) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(where, "expected an object")
        if key not in obj:
            if optional:
                return None
            raise self.fail(where, f"missing field '{key}'")
        value = obj[key]
        if value is None and optional:
            return None
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(f"{where}.{key}", f"expected {_names(kinds)}, found {value!r}")
        if not isinstance(value, kinds):
            raise self.fail(f"{where}.{key}", f"expected {_names(kinds)}, found {type(value).__name__}")
        return value

    def number(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(where, f"expected a finite number, found {value!r}")
        return float(value)

    def scalar(self, value: Any, where: str) -> Scalar:
        if isinstance(value, str):
            return value
        return self.number(value, where)

    def count(self, value: Any, where: str) -> int | float:
        """A row count: an integer, or a weighted count (rows counted by their weights)."""
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or (isinstance(value, float) and not math.isfinite(value)) or not 0 <= value <= MAX_EXACT:
            shown = repr(value) if len(repr(value)) <= 24 else repr(value)[:20] + "..."
            raise self.fail(where, f"expected a count (integer from 0 to 2^53, or a weighted count), found {shown}")
        return value


def _names(kinds: tuple[type, ...]) -> str:
    words = {str: "text", int: "an integer", float: "a number", list: "a list", dict: "an object", bool: "true/false"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def _read_cuts(r: _Reader, obj: Any, where: str) -> Cuts | None:
    if obj is None:
        return None
    edges = [r.number(e, f"{where}.edges[{i}]") for i, e in enumerate(r.get(obj, "edges", where, (list,)))]
    if edges != sorted(edges):
        raise r.fail(f"{where}.edges", "cut points must be sorted")
    low = r.get(obj, "low", where, (int, float), optional=True)
    high = r.get(obj, "high", where, (int, float), optional=True)
    return Cuts(
        column=r.get(obj, "column", where, (str,)),
        edges=tuple(edges),
        right_closed=r.get(obj, "right_closed", where, (bool,)),
        low=None if low is None else r.number(low, f"{where}.low"),
        high=None if high is None else r.number(high, f"{where}.high"),
        method=r.get(obj, "method", where, (str,), optional=True) or "",
    )


def _read_schema(r: _Reader, obj: Any) -> Schema | None:
    if obj is None:
        return None
    features = []
    for i, f in enumerate(r.get(obj, "features", "schema", (list,))):
        where = f"schema.features[{i}]"
        kind = r.get(f, "kind", where, (str,))
        if kind not in {k.value for k in Kind}:
            raise r.fail(f"{where}.kind", f"unknown feature kind '{kind}'")
        levels = r.get(f, "levels", where, (list,))
        if not all(isinstance(v, str) for v in levels):
            raise r.fail(f"{where}.levels", "levels must be text")
        unit = r.get(f, "unit", where, (str,), optional=True)
        if unit is not None and (unit not in {u.value for u in Unit} or kind != Kind.NUMERIC.value):
            raise r.fail(f"{where}.unit", f"unknown unit '{unit}' (date or datetime, of a numeric feature)")
        features.append(
            Feature(
                r.get(f, "name", where, (str,)),
                Kind(kind),
                tuple(levels),
                _read_cuts(r, f.get("cuts"), f"{where}.cuts"),
                None if unit is None else Unit(unit),
            )
        )
    target_obj = r.get(obj, "target", "schema", (dict,))
    classes = r.get(target_obj, "classes", "schema.target", (list,))
    target = Target(
        r.get(target_obj, "name", "schema.target", (str,)),
        tuple(str(c) for c in classes),
        _read_cuts(r, target_obj.get("bins"), "schema.target.bins"),
        r.get(target_obj, "reading", "schema.target", (str,), optional=True),
    )
    left_out = r.get(obj, "left_out", "schema", (dict,), optional=True) or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in left_out.items()):
        raise r.fail("schema.left_out", "column names and reasons must be text")
    return Schema(tuple(features), target, tuple(left_out.items()))


def _read_condition(r: _Reader, obj: Any, where: str) -> Condition:
    column = r.get(obj, "column", where, (str,))
    op_text = r.get(obj, "op", where, (str,))
    try:
        op = Op(op_text)
    except ValueError:
        raise r.fail(f"{where}.op", f"unknown operator '{op_text}'") from None
    raw = obj.get("value")
    value: Any
    if isinstance(raw, list):
        value = tuple(r.scalar(v, f"{where}.value[{i}]") for i, v in enumerate(raw))
    elif raw is None:
        value = None
    else:
        value = r.scalar(raw, f"{where}.value")
    closed_text = r.get(obj, "closed", where, (str,), optional=True) or Closed.RIGHT.value
    if closed_text not in {c.value for c in Closed}:
        raise r.fail(f"{where}.closed", f"unknown interval closure '{closed_text}'")
    or_missing = r.get(obj, "or_missing", where, (bool,), optional=True) or False
    try:
        return Condition(column, op, value, Closed(closed_text), or_missing)
    except ParamError as exc:
        raise r.fail(where, str(exc)) from None


def _read_rule(r: _Reader, obj: Any, where: str, n_classes: int) -> Rule:
    conditions = tuple(
        _read_condition(r, c, f"{where}.conditions[{i}]")
        for i, c in enumerate(r.get(obj, "conditions", where, (list,)))
    )
    prediction = r.get(obj, "prediction", where, (str,))
    stats_obj = r.get(obj, "stats", where, (dict,), optional=True)
    stats = None
    if stats_obj is not None:
        counts_raw = r.get(stats_obj, "class_counts", f"{where}.stats", (list,), optional=True)
        counts = None
        if counts_raw is not None:
            counts = tuple(r.count(c, f"{where}.stats.class_counts[{i}]") for i, c in enumerate(counts_raw))
            if len(counts) != n_classes:
                raise r.fail(f"{where}.stats.class_counts", f"expected {n_classes} counts, one per class")
        stats = RuleStats(
            r.count(stats_obj.get("covered"), f"{where}.stats.covered"),
            r.count(stats_obj.get("correct"), f"{where}.stats.correct"),
            counts,
        )
    weight = r.get(obj, "weight", where, (int, float), optional=True)
    raw = r.get(obj, "probabilities", where, (list,), optional=True)
    probabilities = None
    if raw is not None:
        probabilities = tuple(r.number(p, f"{where}.probabilities[{i}]") for i, p in enumerate(raw))
        if len(probabilities) != n_classes or any(p < 0 for p in probabilities):
            raise r.fail(f"{where}.probabilities", f"expected {n_classes} probabilities, one per class")
    return Rule(
        conditions, prediction, stats, None if weight is None else r.number(weight, f"{where}.weight"), probabilities
    )


# A forest file holds millions of numbers, each node array written on a line of its own
# (_dumps). JSON's parser made a Python object of each: 441 MiB of forest took 20 s and
# 4.7 GiB to load. Those lines are set aside before parsing, and NumPy reads each array's
# text at once.
_NODE_ARRAY = re.compile(
    r'^(\s*)"(feature|threshold|missing_left|left|right|value|n_samples|impurity|improvement|left_levels|right_levels)"'
    r": (\[[^\n]*\])(,?)$",
    re.M,
)
_TOKEN = "\u0000array "  # no key or value of a model file holds a NUL character


_TREE_KIND = re.compile(r'^  "kind": "(?:tree|forest)",$', re.M)


def _set_aside(text: str) -> tuple[str, dict[str, tuple[str, str]]]:
    """The text of a tree or forest as rulecli writes it with each node array replaced by a
    token naming it, and each array's key and text (other files as they are: a rule's
    condition holds a "value" too)."""
    arrays: dict[str, tuple[str, str]] = {}
    if not _TREE_KIND.search(text):
        return text, arrays

    def aside(match: re.Match[str]) -> str:
        token = f"{_TOKEN}{len(arrays)}"
        arrays[token] = (match.group(2), match.group(3))
        return f'{match.group(1)}"{match.group(2)}": {json.dumps(token)}{match.group(4)}'

    return _NODE_ARRAY.sub(aside, text), arrays


_KINDS = {"threshold": "threshold", "missing_left": "bool", "value": "rows"}  # the others: int or float
_INTS = ("feature", "left", "right")


def _parsed(arrays: Mapping[str, tuple[str, str]]) -> dict[str, np.ndarray]:
    """Every node array NumPy can take at once, by token: the arrays of one key across
    every tree parsed in one Polars call (one per array took 2 ms each, a JSON parse made an
    object of each number). An array with anything else (a key of which does) is left out,
    for the JSON reading that names the first bad entry."""
    out: dict[str, Any] = {}
    by_key: dict[str, list[tuple[str, str]]] = {}
    for token, (key, text) in arrays.items():
        by_key.setdefault(key, []).append((token, text))
    for key, listed in by_key.items():
        if key.endswith("_levels"):  # numeric splits only: every node's level set empty
            out |= {token: _NoLevels(((),) * text.count("[]")) for token, text in listed if _NO_LEVELS.fullmatch(text)}
            continue
        kind = _KINDS.get(key, "int" if key in _INTS else "float")
        parts = _parse_arrays([text for _, text in listed], kind)
        if parts is not None:
            out |= {token: part for (token, _), part in zip(listed, parts, strict=True)}
    return out


_NO_LEVELS = re.compile(r"\[(\[\],)*\[\]\]")


class _NoLevels(tuple[tuple[str, ...], ...]):
    """A tree's level sets, every one empty (its splits all on numbers)."""


def _parse_arrays(texts: list[str], kind: str) -> list[np.ndarray] | None:
    """Arrays' texts of one ``kind`` (int, float, bool, threshold, or rows of floats) as
    NumPy arrays, or None where any entry is of another kind."""
    rows = [text.count("],[") + 1 for text in texts] if kind == "rows" else []
    if kind == "rows" and not all(t.startswith("[[") and t.endswith("]]") for t in texts):
        return None
    bodies = [t[2:-2].replace("],[", ",") if kind == "rows" else t[1:-1] for t in texts]
    if not all(bodies):
        return None
    body = ",".join(bodies)
    if kind == "bool":  # true and false, told apart by their first letters
        entries = body.count(",") + 1
        trues, falses = body.count("true"), body.count("false")
        if trues + falses != entries or len(body) != 4 * trues + 5 * falses + entries - 1:
            return None
        letters = np.frombuffer(body.encode(), np.uint8)
        values = letters[np.concatenate([[0], np.flatnonzero(letters == ord(",")) + 1])] == ord("t")
    else:
        # null: no threshold; "+inf": a present-vs-missing split; NaN or Infinity written
        # bare (Python's json takes them) are refused by the JSON reading, and so here
        plain = body.replace("null", "").replace('"+inf"', "") if kind == "threshold" else body
        if any(c in plain for c in 'nNiI"'):
            return None
        if kind == "threshold":
            body = body.replace("null", "nan").replace('"+inf"', "inf")
        try:
            values = (
                pl.Series([body]).str.split(",").explode().cast(pl.Int64 if kind == "int" else pl.Float64, strict=True)
            )
        except pl.exceptions.PolarsError:
            return None
        values = values.to_numpy()
    if kind in ("float", "rows") and not np.isfinite(values).all():
        return None
    parts = np.split(values, np.cumsum([b.count(",") + 1 for b in bodies])[:-1])
    if kind != "rows":
        return parts
    if any(part.size % n for part, n in zip(parts, rows, strict=True)):
        return None
    return [part.reshape(n, -1) for part, n in zip(parts, rows, strict=True)]


def _parse_json(text: str, source: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFormatError(
            f"{source}: not {what} (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "the file may be truncated or corrupt"
        ) from None
    except RecursionError:
        raise ModelFormatError(f"{source}: not {what} (nested too deeply to be a rulecli file)") from None
    except ValueError:  # an integer of thousands of digits
        raise ModelFormatError(f"{source}: not {what} (a number of more than 4,300 digits)") from None


def loads(text: str, source: str = "<model>") -> Model | TreeModel:
    """Parse and validate a JSON model file."""
    with _collector_paused():
        return _loads(text, source)


def _loads(text: str, source: str) -> Model | TreeModel:
    text, arrays = _set_aside(text)
    obj = _parse_json(text, source, "a valid JSON model")
    r = _Reader(source, arrays)
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise ModelFormatError(f'{source}: not a rulecli model (expected "format": "{FORMAT}")')
    version = obj.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise r.fail("format_version", "missing or not an integer")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"{source}: model format version {version} is newer than this rulecli reads "
            f"({FORMAT_VERSION}); upgrade rulecli"
        )
    if version < 1:
        raise r.fail("format_version", f"unknown version {version}")
    kind = r.get(obj, "kind", "model", (str,))
    if kind in (Tree.kind, Forest.kind):
        return _read_tree_model(r, obj, kind)
    if kind == RuleRegression.kind:
        return _read_rule_regression(r, obj)
    if kind == Committee.kind:
        return _read_committee(r, obj)
    classes = r.get(obj, "classes", "model", (list,))
    if not classes or not all(isinstance(c, str) for c in classes):
        raise r.fail("classes", "expected a non-empty list of text labels")
    n = len(classes)
    rules = tuple(_read_rule(r, x, f"rules[{i}]", n) for i, x in enumerate(r.get(obj, "rules", "model", (list,))))
    default_obj = r.get(obj, "default", "model", (dict,), optional=True)
    default = _read_rule(r, default_obj, "default", n) if default_obj is not None else None
    for i, rule in enumerate((*rules, *((default,) if default else ()))):
        if rule.prediction not in classes:
            where = f"rules[{i}]" if i < len(rules) else "default"
            raise r.fail(f"{where}.prediction", f"'{rule.prediction}' is not one of the classes")
    params = r.get(obj, "params", "model", (dict,), optional=True) or {}
    training = r.get(obj, "training", "model", (dict,), optional=True) or {}
    info = ModelInfo(
        algorithm=r.get(obj, "algorithm", "model", (str,)),
        params=params,
        schema=_read_schema(r, obj.get("schema")),
        training=training,
    )
    target = r.get(obj, "target", "model", (str,))
    # a date column's bounds are written as numbers: the schema says which are dates
    units = schema_units(info.schema)
    rules = tuple(dated_rule(rule, units) for rule in rules)
    if kind == DecisionList.kind:
        if default is None:
            raise r.fail("default", "a decision list needs a default rule")
        return DecisionList(target, tuple(classes), rules, default, info)
    if kind == RuleSet.kind:
        vote_text = r.get(obj, "vote", "model", (str,))
        if vote_text not in {v.value for v in Vote}:
            raise r.fail("vote", f"unknown vote '{vote_text}'")
        return RuleSet(target, tuple(classes), rules, default, Vote(vote_text), info)
    raise r.fail("kind", f"unknown model kind '{kind}'")


def _number_list_to_json(model: RuleRegression) -> dict[str, Any]:
    return {
        "rules": [_number_rule_to_json(r) for r in model.rules],
        "default": _number_rule_to_json(model.default),
        "ordered": model.ordered,
    }


def _read_rule_regression(r: _Reader, obj: dict[str, Any]) -> RuleRegression:
    if r.get(obj, "classes", "model", (list,)):
        raise r.fail("classes", "rules that predict a number have no classes")
    info = _info(r, obj)
    return _read_number_list(r, obj, "", r.get(obj, "target", "model", (str,)), info)


def _read_committee(r: _Reader, obj: dict[str, Any]) -> Committee:
    if r.get(obj, "classes", "model", (list,)):
        raise r.fail("classes", "a committee predicts a number and has no classes")
    info, target = _info(r, obj), r.get(obj, "target", "model", (str,))
    raw = r.get(obj, "members", "model", (list,))
    if not raw:
        raise r.fail("members", "a committee needs at least one list of rules")
    members = (_read_number_list(r, member, f"members[{m}].", target, info) for m, member in enumerate(raw))
    nearest = r.get(obj, "neighbours", "model", (dict,), optional=True)
    return Committee(target, tuple(members), info, None if nearest is None else _read_neighbours(r, nearest))


def _read_neighbours(r: _Reader, obj: dict[str, Any]) -> Neighbours:
    at = "neighbours"
    columns = []
    for i, c in enumerate(r.get(obj, "columns", at, (list,))):
        where = f"{at}.columns[{i}]"
        weight, fill, low, high = (r.number(r.get(c, key, where, (int, float)), f"{where}.{key}") for key in _FIGURES)
        numeric = r.get(c, "numeric", where, (bool,))
        columns.append(NeighbourColumn(r.get(c, "name", where, (str,)), weight, numeric, fill, low, high))
    stored = r.get(obj, "values", at, (list,))
    if len(stored) != len(columns):
        raise r.fail(f"{at}.values", f"expected one list per column ({len(columns)})")
    values = []
    for i, (column, raw) in enumerate(zip(columns, stored, strict=True)):
        where = f"{at}.values[{i}]"
        if not isinstance(raw, list):
            raise r.fail(where, "expected a list")
        if column.numeric:  # null: missing
            values.append(tuple(None if v is None else r.number(v, f"{where}[{j}]") for j, v in enumerate(raw)))
        elif all(v is None or isinstance(v, str) for v in raw):
            values.append(tuple(raw))
        else:
            raise r.fail(where, "expected a list of texts or null")
    residuals = _numbers(r, r.get(obj, "residuals", at, (list,)), f"{at}.residuals")
    bounds = _numbers(r, r.get(obj, "bounds", at, (list,)), f"{at}.bounds")
    if len(bounds) != 2:
        raise r.fail(f"{at}.bounds", "expected [least, greatest]")
    try:
        k = r.get(obj, "k", at, (int,))
        low, high = bounds.tolist()
        return Neighbours(k, tuple(columns), tuple(values), tuple(residuals.tolist()), (low, high))
    except ParamError as exc:
        raise r.fail(at, str(exc)) from exc


_FIGURES = ("weight", "fill", "low", "high")  # each neighbour column's numbers


def _read_number_list(r: _Reader, obj: dict[str, Any], at: str, target: str, info: ModelInfo) -> RuleRegression:
    """A list of rules with formulas (``at``: where it sits in the file, for errors)."""
    units = schema_units(info.schema)
    where = at.rstrip(".") or "model"
    raw = r.get(obj, "rules", where, (list,))
    rules = tuple(_read_number_rule(r, x, f"{at}rules[{i}]", units) for i, x in enumerate(raw))
    default = _read_number_rule(r, r.get(obj, "default", where, (dict,)), f"{at}default", units)
    if default.conditions:
        raise r.fail(f"{at}default.conditions", "the default rule has no conditions")
    ordered = r.get(obj, "ordered", where, (bool,))
    return RuleRegression(target, rules, default, ordered, info)


def _read_number_rule(r: _Reader, obj: Any, where: str, units: Mapping[str, Unit]) -> NumberRule:
    conditions = tuple(
        _read_condition(r, c, f"{where}.conditions[{i}]")
        for i, c in enumerate(r.get(obj, "conditions", where, (list,)))
    )
    at = f"{where}.formula"
    formula_obj = r.get(obj, "formula", where, (dict,))
    terms = []
    for i, t in enumerate(r.get(formula_obj, "terms", at, (list,))):
        term_at = f"{at}.terms[{i}]"
        levels = r.get(t, "levels", term_at, (list,), optional=True)
        if levels is not None and not (levels and all(isinstance(v, str) for v in levels)):
            raise r.fail(f"{term_at}.levels", "expected a non-empty list of text levels")
        terms.append(
            Term(
                r.get(t, "column", term_at, (str,)),
                r.number(t.get("coefficient"), f"{term_at}.coefficient"),
                r.number(t.get("fill"), f"{term_at}.fill"),
                None if levels is None else tuple(levels),
            )
        )
    bounds = r.get(formula_obj, "bounds", at, (list,), optional=True)
    if bounds is not None and len(bounds) != 2:
        raise r.fail(f"{at}.bounds", "expected [least, greatest]")
    try:
        formula = Formula(
            r.number(formula_obj.get("intercept"), f"{at}.intercept"),
            tuple(terms),
            None if bounds is None else (r.number(bounds[0], f"{at}.bounds"), r.number(bounds[1], f"{at}.bounds")),
        )
    except ParamError as exc:
        raise r.fail(at, str(exc)) from None
    stats_obj = r.get(obj, "stats", where, (dict,), optional=True)
    stats = None
    if stats_obj is not None:
        stats = NumberStats(
            r.count(stats_obj.get("covered"), f"{where}.stats.covered"),
            *(r.number(stats_obj.get(k), f"{where}.stats.{k}") for k in ("mean", "sd", "rmse")),
        )
    # a date column's bounds are written as numbers: the schema says which are dates
    return NumberRule(tuple(dated(c, units) for c in conditions), formula, stats)


def _info(r: _Reader, obj: dict[str, Any]) -> ModelInfo:
    return ModelInfo(
        algorithm=r.get(obj, "algorithm", "model", (str,)),
        params=r.get(obj, "params", "model", (dict,), optional=True) or {},
        schema=_read_schema(r, obj.get("schema")),
        training=r.get(obj, "training", "model", (dict,), optional=True) or {},
    )


def _read_tree_model(r: _Reader, obj: dict[str, Any], kind: str) -> TreeModel:
    classes = r.get(obj, "classes", "model", (list,))
    if not all(isinstance(c, str) for c in classes) or len(classes) == 1:
        raise r.fail("classes", "expected text labels (two or more), or none for a regression model")
    features = r.get(obj, "features", "model", (list,))
    if not features or not all(isinstance(f, str) for f in features):
        raise r.fail("features", "expected a non-empty list of column names")
    width = len(classes) or 1
    info = _info(r, obj)
    if info.schema is not None:
        unknown = [f for f in features if f not in info.schema.feature_names]
        if unknown:
            raise r.fail("features", f"'{unknown[0]}' is not a feature of the model's schema")
    target = r.get(obj, "target", "model", (str,))
    if kind == Tree.kind:
        nodes = _read_nodes(r, r.get(obj, "tree", "model", (dict,)), "tree", len(features), width)
        return Tree(target, tuple(classes), tuple(features), nodes, info)
    raw = r.get(obj, "trees", "model", (list,))
    if not raw:
        raise r.fail("trees", "a forest needs at least one tree")
    trees = tuple(_read_nodes(r, t, f"trees[{i}]", len(features), width) for i, t in enumerate(raw))
    return Forest(target, tuple(classes), tuple(features), trees, info)


def _read_nodes(r: _Reader, obj: Any, where: str, n_features: int, width: int) -> TreeNodes:
    """Node arrays, checked so that traversal cannot go wrong: equal lengths, a tree
    (children after their parent, so no cycles; every node but the root the child of
    exactly one split, so nothing shared or unreachable), features in range, numbers finite."""
    fields = ("feature", "threshold", "left_levels", "right_levels", "missing_left", "left", "right", "value")
    lists = {name: r.nodes(obj, name, where) for name in fields}
    n = len(lists["feature"])
    if n == 0:
        raise r.fail(where, "a tree needs at least one node")
    for name, values in lists.items():
        if len(values) != n:
            raise r.fail(f"{where}.{name}", f"expected {n} entries, one per node, found {len(values)}")
    feature, left, right = (_ints(r, lists[name], f"{where}.{name}") for name in ("feature", "left", "right"))
    index = np.arange(n)
    split = feature >= 0
    if (feature >= n_features).any() or (feature < -1).any():
        raise r.fail(f"{where}.feature", f"feature numbers must be -1 (leaf) or below {n_features}")
    if (split & ~((left > index) & (right > index) & (left < n) & (right < n))).any() or (
        ~split & ((left != -1) | (right != -1))
    ).any():
        raise r.fail(where, "child numbers must follow their parent, and leaves have none (-1)")
    parents = np.bincount(np.concatenate([left[split], right[split]]), minlength=n)
    if parents[0] != 0 or (parents[1:] != 1).any():
        node = int(np.flatnonzero(parents[1:] != 1)[0]) + 1 if parents[0] == 0 else 0
        raise r.fail(where, f"node {node} is the child of {int(parents[node])} splits; a tree's nodes have one parent")
    threshold = _read_thresholds(r, lists["threshold"], f"{where}.threshold")
    left_levels = _levels(r, lists["left_levels"], f"{where}.left_levels")
    right_levels = _levels(r, lists["right_levels"], f"{where}.right_levels")
    bare = np.flatnonzero(split & np.isnan(threshold) & ~_levelled(left_levels, right_levels, n))
    if bare.size:
        raise r.fail(where, f"split node {int(bare[0])} has neither a threshold nor level sets")
    missing_left = lists["missing_left"]
    if not isinstance(missing_left, np.ndarray) and not _only(missing_left, {bool}):
        raise r.fail(f"{where}.missing_left", "expected true/false per node")
    value = _value_rows(r, lists["value"], f"{where}.value", n, width)
    optional = {}
    for name in ("n_samples", "impurity", "improvement"):
        raw = r.nodes(obj, name, where, optional=True)
        if raw is None:
            optional[name] = np.zeros(n)
            continue
        if len(raw) != n:
            raise r.fail(f"{where}.{name}", f"expected {n} entries, one per node")
        optional[name] = _numbers(r, raw, f"{where}.{name}")
    return TreeNodes(
        feature=feature.astype(np.int32),
        threshold=threshold,
        left_levels=left_levels,
        right_levels=right_levels,
        missing_left=np.array(missing_left, dtype=bool),
        left=left.astype(np.int32),
        right=right.astype(np.int32),
        value=value,
        n_samples=optional["n_samples"],
        impurity=optional["impurity"],
        improvement=optional["improvement"],
    )


# A forest file holds millions of numbers. Each array is checked by the types it holds and
# converted by NumPy at once; only an array that fails is read value by value, to name the
# first bad entry.


def _only(values: list[Any], types: set[type]) -> bool:
    """Whether every value is of exactly one of ``types`` (True is not an int here)."""
    return set(map(type, values)) <= types


def _ints(r: _Reader, values: list[Any] | np.ndarray, where: str) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    if _only(values, {int}):
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:
            pass
    for i, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
            raise r.fail(f"{where}[{i}]", f"expected an integer, found {value!r}")
    return np.array(values, dtype=np.int64)


def _as_floats(values: list[Any]) -> np.ndarray | None:
    """``values`` as float64 when every one is an int or a float that fits, else None."""
    if not _only(values, {int, float}):
        return None
    try:
        return np.array(values, dtype=np.float64)
    except OverflowError:
        return None


def _numbers(r: _Reader, values: list[Any] | np.ndarray, where: str) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    out = _as_floats(values)
    if out is not None and np.isfinite(out).all():
        return out
    return np.array([r.number(v, f"{where}[{i}]") for i, v in enumerate(values)], dtype=np.float64)


def _read_thresholds(r: _Reader, values: list[Any] | np.ndarray, where: str) -> np.ndarray:
    """null: no threshold (NaN); "+inf": a present-vs-missing split."""
    if isinstance(values, np.ndarray):
        if (values == -np.inf).any():
            raise r.fail(f"{where}[{int(np.flatnonzero(values == -np.inf)[0])}]", "expected a finite number")
        return values
    if _only(values, {int, float, type(None), str}):
        out = _as_floats([np.nan if t is None else np.inf if t == "+inf" else t for t in values])
        if out is not None and np.isfinite(out[[t is not None and t != "+inf" for t in values]]).all():
            return out
    return np.array(
        [np.nan if t is None else np.inf if t == "+inf" else r.number(t, f"{where}[{i}]") for i, t in enumerate(values)]
    )


def _value_rows(r: _Reader, rows: list[Any] | np.ndarray, where: str, n: int, width: int) -> np.ndarray:
    if isinstance(rows, np.ndarray):
        if rows.shape != (n, width):
            raise r.fail(where, f"expected {n} rows of {width} numbers")
        return rows
    if _only(rows, {list}) and all(len(row) == width for row in rows):
        out = _as_floats(list(itertools.chain.from_iterable(rows)))
        if out is not None and np.isfinite(out).all():
            return out.reshape(n, width)
    value = np.zeros((n, width))
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            raise r.fail(f"{where}[{i}]", f"expected a list of {width} numbers")
        value[i] = [r.number(v, f"{where}[{i}]") for v in row]
    return value


def _levelled(left: tuple[tuple[str, ...], ...], right: tuple[tuple[str, ...], ...], n: int) -> np.ndarray:
    """Per node, whether it has a level set on either side."""
    if isinstance(left, _NoLevels) and isinstance(right, _NoLevels):
        return np.zeros(n, dtype=bool)
    return np.fromiter(map(bool, left), bool, n) | np.fromiter(map(bool, right), bool, n)


def _levels(r: _Reader, raw: list[Any], where: str) -> tuple[tuple[str, ...], ...]:
    if isinstance(raw, _NoLevels):
        return raw
    if _only(raw, {list}) and _only(list(itertools.chain.from_iterable(raw)), {str}):
        return tuple(map(tuple, raw))
    out = []
    for i, levels in enumerate(raw):
        if not isinstance(levels, list) or not all(isinstance(v, str) for v in levels):
            raise r.fail(f"{where}[{i}]", "expected a list of text levels")
        out.append(tuple(levels))
    return tuple(out)


def loads_cuts(text: str, source: str = "<cuts>") -> list[Cuts]:
    """Parse and validate a cuts file written by ``rulecli discretize --cuts-out``."""
    obj = _parse_json(text, source, "valid JSON")
    if not isinstance(obj, dict) or obj.get("format") != CUTS_FORMAT:
        raise ModelFormatError(f'{source}: not a rulecli cuts file (expected "format": "{CUTS_FORMAT}")')
    version = obj.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        raise ModelFormatError(f"{source}: unsupported cuts format version {version!r}")
    r = _Reader(source)
    cuts = [_read_cuts(r, c, f"cuts[{i}]") for i, c in enumerate(r.get(obj, "cuts", "file", (list,)))]
    return [c for c in cuts if c is not None]
