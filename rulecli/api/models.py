"""The API's models: loading, saving, their text and the exports."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rulecli import io
from rulecli.api.data import source_label
from rulecli.errors import ModelFormatError, ParamError
from rulecli.model.compile import (
    Predictor,
)
from rulecli.model.core import Committee, Rule, RuleRegression, schema_units
from rulecli.model.export import TARGETS, to_polars, to_python, to_sql
from rulecli.model.pmml import to_pmml
from rulecli.model.serde import dumps, loads
from rulecli.model.text import (
    forest_summary,
    parse_text,
    render_committee,
    render_conditions,
    render_name,
    render_number_rules,
    render_text,
    render_tree,
)
from rulecli.model.tree import Forest, Tree, decision_list, leaf_rules, predicts_number


def loads_model(text: str, source: str = "<model>") -> Predictor:
    """A JSON or text model from its text (chosen by content: JSON starts with '{')."""
    if text.lstrip().startswith("{"):
        return loads(text, source)
    if not text.strip():
        raise ModelFormatError(f"{source}: model file is empty")
    return parse_text(text, source)


def load(path: str | Path) -> Predictor:
    """Load a JSON model or a text rule file."""
    return loads_model(io.read_text(str(path)), source_label(path))


def rules_text(model: Predictor) -> str:
    """The model in the text rule format; a tree is its leaf rules, drawn above as comments.

    Regression trees and forests have no text rule form (their predictions are numbers or
    averages): their text is a commented summary, and they are saved as JSON.
    """
    if isinstance(model, Tree):
        drawing = render_tree(model, prefix="# ")
        return drawing if model.regression else drawing + render_text(decision_list(model))
    if isinstance(model, Forest):
        return "".join(f"# {line}\n" for line in forest_summary(model))
    if isinstance(model, RuleRegression):
        return render_number_rules(model)
    if isinstance(model, Committee):
        return render_committee(model)
    return render_text(model)


def logic_text(model: Predictor) -> str:
    """The model's rules without their statistics (covers, correct, class counts,
    probabilities, leaf rows): what a git textconv driver shows, so a retrained model's
    diff holds only the rules whose logic changed. A regression tree's leaves keep their
    values, a forest its summary."""
    if isinstance(model, Forest):
        return rules_text(model)
    if isinstance(model, RuleRegression):
        return render_number_rules(model, with_stats=False)
    if isinstance(model, Committee):
        return render_committee(model, with_stats=False)
    if isinstance(model, Tree):
        if model.regression:
            leaves = leaf_rules(model.nodes, model.features, schema_units(model.info.schema))
            return "".join(
                f"IF {render_conditions(conds)} THEN {render_name(model.target)} = {model.nodes.value[leaf, 0]:.6g}\n"
                for leaf, conds in leaves
            )
        model = decision_list(model)

    def bare(rule: Rule) -> Rule:
        return dataclasses.replace(rule, stats=None, probabilities=None)

    default = None if model.default is None else bare(model.default)
    info = dataclasses.replace(model.info, training={})  # a rule set's PRIOR line is a count too
    return render_text(
        dataclasses.replace(model, rules=tuple(bare(r) for r in model.rules), default=default, info=info)
    )


def check_model_path(path: str | Path) -> None:
    """Refuse, before any work, a model path rulecli could not save to."""
    if Path(path).suffix.lower() not in (".json", ".txt", ".rules"):
        raise ParamError(f"{path}: a model file must end in .json or .txt (or .rules)")
    io.check_writable(str(path))


def model_text(model: Predictor, path: str | Path) -> str:
    """The model as the file ``path`` will hold it: JSON for ``.json``, rules for ``.txt``/``.rules``."""
    check_model_path(path)
    if Path(path).suffix.lower() == ".json":
        return dumps(model)
    if isinstance(model, Forest) or predicts_number(model):
        kind = "forest" if isinstance(model, Forest) else "model that predicts a number"
        raise ParamError(f"{path}: a {kind} is saved as .json")
    return rules_text(model)


def save(model: Predictor, path: str | Path) -> None:
    """Save atomically: a complete file or the old one, never a partial one."""
    io.write_text(str(path), model_text(model, path))


def export(
    model: Predictor, to: str = "sql", *, dialect: str = "duckdb", table: str | None = None, name: str = "predict"
) -> str:
    """The model as source text: ``sql`` (one CASE, or a SELECT over ``table``), ``python``
    (a function ``name(row)``), ``polars`` (one expression) or ``pmml`` (a PMML 4.4 document)."""
    if to not in TARGETS:
        raise ParamError(f"must be one of {', '.join(TARGETS)}, got '{to}'", param="to")
    if to == "sql":
        return to_sql(model, dialect, table)
    if to == "python":
        return to_python(model, name)
    if to == "pmml":
        return to_pmml(model)
    return to_polars(model)
