"""diff: two models compared rule by rule; exit 0 when equal in rules, 1 when not (as diff)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from rulecli import api, io
from rulecli.display import counted
from rulecli.errors import InputError
from rulecli.model.core import Condition, Rule
from rulecli.model.diff import ModelDiff, RuleChange
from rulecli.model.text import Verbatim, render_condition, render_name, render_rule, render_value

from . import common


@common.reads_a_table
def diff(
    old_path: Annotated[str, typer.Argument(metavar="OLD", help="The model before: .json or a text rule file.")],
    new_path: Annotated[str, typer.Argument(metavar="NEW", help="The model after.")],
    data: Annotated[
        str | None,
        typer.Argument(help="A table to compare them on: each rule's coverage and accuracy, rows that change."),
    ] = None,
    changed_rows: Annotated[
        str | None,
        typer.Option(
            "--changed-rows", help="Write the rows whose prediction changes (with old_prediction, new_prediction)."
        ),
    ] = None,
    show_all: Annotated[bool, typer.Option("--unchanged", help="List unchanged rules too.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    weights: common.Weights = None,
    read: dict[str, Any] | None = None,
    quiet: common.Quiet = False,
) -> None:
    """Compare two models rule by rule: rules added, removed and changed (with the
    conditions that moved), class and default changes; with DATA, each rule's coverage and
    accuracy there under both models and the rows whose prediction changes.

    Decision lists are matched by position, rule sets and trees by their conditions.
    Exit 0 when the models are equal in rules (statistics may differ), 1 when they differ,
    2 on bad input, as diff does.

    Examples:

        rulecli ripper sample_data/penguins.csv -y species -q -o old.json

        rulecli ripper sample_data/penguins.csv -y species --seed 7 -q -o new.json

        rulecli diff old.json new.json sample_data/penguins.csv --changed-rows changed.csv
    """
    for path in (old_path, new_path):
        if data is not None:
            common.check_not_both_stdin(path, data)
    if old_path == io.STDIO and new_path == io.STDIO:
        raise InputError("OLD and NEW cannot both come from stdin ('-')")
    old, new = api.load(old_path), api.load(new_path)
    structure, report = api.diff(old, new, data, changed_rows=changed_rows, weights=weights, **read)
    labels = (api.source_label(old_path), api.source_label(new_path))
    if json_out:
        io.write_text(io.STDIO, json.dumps(_payload(structure, report, labels), indent=2) + "\n")
    elif not quiet:
        io.write_text(io.STDIO, _text(structure, report, labels, show_all))
    if not structure.identical:
        raise typer.Exit(1)


def _rule_text(rule: Rule | None, target: str) -> str | None:
    return None if rule is None else render_rule(rule, target)


def _default_text(rule: Rule | None, target: str) -> str:
    if rule is None:
        return "no default (rows no rule matches stay unclassified)"
    return f"ELSE {render_name(target)} = {render_value(rule.prediction)}"


def _stats(report: dict[str, Any] | None, side: str, number: int | None) -> dict[str, Any] | None:
    if report is None or number is None or not report[f"{side}_rules"]:
        return None
    return report[f"{side}_rules"][number - 1]


def _conditions(conds: tuple[Condition, ...]) -> list[str]:
    return [render_condition(c) for c in conds]


def _payload(d: ModelDiff, report: dict[str, Any] | None, labels: tuple[str, str]) -> dict[str, Any]:
    rules = []
    for change in d.rules:
        entry: dict[str, Any] = {
            "status": change.status,
            "old_rule": change.old_number,
            "new_rule": change.new_number,
            "old": _rule_text(change.old, d.target),
            "new": _rule_text(change.new, d.target),
        }
        if change.moved:
            entry["moved"] = [
                {"column": m.column, "old": _conditions(m.old), "new": _conditions(m.new)} for m in change.moved
            ]
        if report is not None:
            entry["data"] = {
                "old": _stats(report, "old", change.old_number),
                "new": _stats(report, "new", change.new_number),
            }
        rules.append(entry)
    out: dict[str, Any] = {
        "old": {"model": labels[0], "kind": d.old_kind},
        "new": {"model": labels[1], "kind": d.new_kind},
        "identical": d.identical,
        "matched_by": "tree structure" if _trees(d) else "position" if d.ordered else "conditions",
        "splits": [
            {"column": c.column, "old": render_condition(c.old), "new": render_condition(c.new)} for c in d.splits
        ],
        "counts": _counts(d),
        "rules": rules,
        "default": {
            "old": _default_text(d.old_default, d.target),
            "new": _default_text(d.new_default, d.target),
            "changed": d.default_changed,
        },
        "notes": list(d.notes),
    }
    if report is not None:
        out["data"] = {"rows": report["rows"], "changed": report["changed"], "sample": report["sample"]}
    return out


def _trees(d: ModelDiff) -> bool:
    return d.old_kind == d.new_kind == "tree"


def _counts(d: ModelDiff) -> dict[str, int]:
    counts = {"same": 0, "changed": 0, "added": 0, "removed": 0}
    for change in d.rules:
        counts[change.status] += 1
    return counts


def _stat_text(stats: dict[str, Any] | None) -> str:
    if stats is None:
        return "—"
    text = f"covers {stats['covered']}"
    if stats.get("accuracy") is not None:
        text += f", accuracy {stats['accuracy']:.3f}"
    return text


def _data_line(change: RuleChange, report: dict[str, Any] | None) -> list[str]:
    if report is None:
        return []
    old, new = _stats(report, "old", change.old_number), _stats(report, "new", change.new_number)
    return [f"      on the data: {_stat_text(old)} -> {_stat_text(new)}"]


def _text(d: ModelDiff, report: dict[str, Any] | None, labels: tuple[str, str], show_all: bool) -> str:
    counts = _counts(d)
    lines = [f"--- {labels[0]}  ({d.old_kind})", f"+++ {labels[1]}  ({d.new_kind})"]
    lines += [f"! {note}" for note in d.notes]
    for split in d.splits:
        lines.append(
            f"~ split on {render_name(split.column)}: {render_condition(split.old)}  ->  {render_condition(split.new)}"
        )
    for change in d.rules:
        number = change.new_number if change.new_number is not None else change.old_number
        if change.status == "same":
            if show_all:
                lines.append(f"  rule {number}: {_rule_text(change.new, d.target)}")
                lines += _data_line(change, report)
            continue
        if change.status == "added":
            lines.append(f"+ rule {change.new_number}: {_rule_text(change.new, d.target)}")
        elif change.status == "removed":
            lines.append(f"- rule {change.old_number}: {_rule_text(change.old, d.target)}")
        else:
            where = f"rule {change.old_number}" + (
                f" (now rule {change.new_number})" if change.new_number != change.old_number else ""
            )
            lines.append(f"~ {where}:")
            lines.append(f"    - {_rule_text(change.old, d.target)}")
            lines.append(f"    + {_rule_text(change.new, d.target)}")
            for m in change.moved:
                before = " AND ".join(_conditions(m.old)) or "(no condition)"
                after = " AND ".join(_conditions(m.new)) or "(no condition)"
                lines.append(f"      {before}  ->  {after}")
            if change.old is not None and change.new is not None and change.old.prediction != change.new.prediction:
                lines.append(
                    f"      {'predicts' if isinstance(change.old.prediction, Verbatim) else 'class'}: "
                    f"{render_value(change.old.prediction)}  ->  {render_value(change.new.prediction)}"
                )
        lines += _data_line(change, report)
    if d.default_changed:
        lines.append(
            f"~ default: {_default_text(d.old_default, d.target)}  ->  {_default_text(d.new_default, d.target)}"
        )
    verdict = "the models are equal in rules" if d.identical else "the models differ"
    moved = f"{counted(len(d.splits), 'split')} moved; " if _trees(d) else ""
    lines.append(
        f"{verdict}: {moved}{counts['same']} rules the same, {counts['changed']} changed, "
        f"{counts['added']} added, {counts['removed']} removed"
        + ("" if not d.default_changed else ", the default changed")
    )
    if report is not None:
        share = report["changed"] / report["rows"] if report["rows"] else 0.0
        line = f"on the data: {report['changed']} of {report['rows']} rows change their prediction ({share:.1%})"
        if report["sample"]:
            shown = ", ".join(f"row {s['row']} {_shown(s['old'])} -> {_shown(s['new'])}" for s in report["sample"])
            line += f"; first: {shown}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _shown(value: object) -> str:
    return "(none)" if value is None else render_value(value if isinstance(value, str) else float(value))  # type: ignore[arg-type]
