"""Versioned JSON model files: deterministic to write, validated to read, never executed."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from rulecli import __version__
from rulecli.errors import ModelFormatError, ParamError
from rulecli.model.core import (
    Closed,
    Condition,
    DecisionList,
    Model,
    ModelInfo,
    Op,
    Rule,
    RuleSet,
    RuleStats,
    Scalar,
    Vote,
)
from rulecli.schema import Cuts, Feature, Kind, Schema, Target

FORMAT = "rulecli-model"
FORMAT_VERSION = 1
CUTS_FORMAT = "rulecli-cuts"


# ---------------------------------------------------------------------------- writing


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
            for f in schema.features
        ],
        "target": {
            "name": schema.target.name,
            "classes": list(schema.target.classes),
            "bins": _cuts_to_json(schema.target.bins),
        },
    }


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
    return out


def model_to_dict(model: Model) -> dict[str, Any]:
    out: dict[str, Any] = {
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
        "rules": [_rule_to_json(r) for r in model.rules],
        "default": _rule_to_json(model.default) if model.default is not None else None,
    }
    if isinstance(model, RuleSet):
        out["vote"] = model.vote.value
    return out


def dumps(model: Model) -> str:
    """Serialise a model: sorted keys, fixed indentation, trailing newline, no NaN."""
    return json.dumps(model_to_dict(model), sort_keys=True, indent=2, allow_nan=False) + "\n"


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

    def __init__(self, source: str) -> None:
        self.source = source

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

    def count(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(where, f"expected a count (integer >= 0), found {value!r}")
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
        features.append(
            Feature(
                r.get(f, "name", where, (str,)),
                Kind(kind),
                tuple(levels),
                _read_cuts(r, f.get("cuts"), f"{where}.cuts"),
            )
        )
    target_obj = r.get(obj, "target", "schema", (dict,))
    classes = r.get(target_obj, "classes", "schema.target", (list,))
    target = Target(
        r.get(target_obj, "name", "schema.target", (str,)),
        tuple(str(c) for c in classes),
        _read_cuts(r, target_obj.get("bins"), "schema.target.bins"),
    )
    return Schema(tuple(features), target)


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
    return Rule(conditions, prediction, stats, None if weight is None else r.number(weight, f"{where}.weight"))


def loads(text: str, source: str = "<model>") -> Model:
    """Parse and validate a JSON model file."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFormatError(
            f"{source}: not a valid JSON model (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "the file may be truncated or corrupt"
        ) from None
    r = _Reader(source)
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
    kind = r.get(obj, "kind", "model", (str,))
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


def loads_cuts(text: str, source: str = "<cuts>") -> list[Cuts]:
    """Parse and validate a cuts file written by ``rulecli discretize --cuts-out``."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFormatError(f"{source}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(obj, dict) or obj.get("format") != CUTS_FORMAT:
        raise ModelFormatError(f'{source}: not a rulecli cuts file (expected "format": "{CUTS_FORMAT}")')
    version = obj.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        raise ModelFormatError(f"{source}: unsupported cuts format version {version!r}")
    r = _Reader(source)
    cuts = [_read_cuts(r, c, f"cuts[{i}]") for i, c in enumerate(r.get(obj, "cuts", "file", (list,)))]
    return [c for c in cuts if c is not None]
