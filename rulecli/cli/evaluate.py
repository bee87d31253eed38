"""evaluate: metrics of a model on labelled data, with quality gates for CI."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from rulecli import api, io
from rulecli.metrics import Gate

from . import common, console
from .naming import as_flags


def _gate(flag: str, help: str, **bounds: float) -> Any:
    return Annotated[float | None, typer.Option(flag, help=help, rich_help_panel="Gates (exit 1)", **bounds)]


ModelPath = Annotated[str, typer.Argument(metavar="MODEL", help="Model file: .json, or a text rule file.")]
DataPath = Annotated[str, typer.Argument(help="Labelled table ('-' = stdin).")]
Target = Annotated[str | None, typer.Option("--target", "-y", help="True-label column (default: the model's target).")]
MinAccuracy = _gate("--min-accuracy", "Exit 1 if accuracy is lower.", min=0, max=1)
MinF1 = _gate("--min-f1", "Exit 1 if macro F1 is lower.", min=0, max=1)
MinCoverage = _gate("--min-coverage", "Exit 1 if fewer rows are decided by a non-default rule.", min=0, max=1)
MaxRmse = _gate("--max-rmse", "Numeric target: exit 1 if the RMSE is higher.", min=0)
MaxMae = _gate("--max-mae", "Numeric target: exit 1 if the MAE is higher.", min=0)
MinR2 = _gate("--min-r2", "Numeric target: exit 1 if R² is lower.")
MaxRuleDrift = _gate(
    "--max-rule-drift",
    "Exit 1 if a rule's accuracy drops, or its coverage moves, by more than this since training (a change "
    "the test finds beyond chance; implies --baseline).",
    min=0,
    max=1,
)
MinRuleCoverage = _gate(
    "--min-rule-coverage",
    "Exit 1 if a rule covers less than this times its training share of rows (0: a rule that no longer "
    "fires; a change beyond chance; implies --baseline).",
    min=0,
)
MaxCoverageRatio = _gate(
    "--max-coverage-ratio",
    "Exit 1 if a rule's coverage grew or shrank by more than this factor since training (e.g. 2: doubled or "
    "halved; a change beyond chance; implies --baseline).",
    min=1,
)
GateOn = Annotated[
    str,
    typer.Option(
        "--gate-on",
        help="point: a gate tests the figure; lower: a --min-* gate tests its 95 % interval's lower bound "
        "(accuracy, coverage), so it passes only beyond chance.",
        rich_help_panel="Gates (exit 1)",
    ),
]
MaxPsi = _gate(
    "--max-psi",
    "Exit 1 if a column's population stability index against --reference passes this (0.1: a moderate "
    "shift, 0.25: a large one) and the test finds the change beyond chance.",
    min=0,
)
MaxCost = _gate("--max-cost", "Exit 1 if the mean cost per row (--costs) is higher.")
Costs = common.cost_table(
    "Costs of each (true, predicted) class pair: a table with the true class in its first column and a column per "
    "predicted class; adds expected_cost, the mean cost per row."
)
Baseline = Annotated[
    bool,
    typer.Option(
        "--baseline", help="Compare each rule's coverage and accuracy here with its training statistics, tested."
    ),
]
PerRule = Annotated[bool, typer.Option("--per-rule/--no-per-rule", help="Show per-rule statistics on this data.")]
JsonOut = Annotated[bool, typer.Option("--json", help="Print all metrics as JSON on stdout.")]
Output = Annotated[str | None, typer.Option("--output", "-o", help="Also write the JSON metrics to this file.")]
Violations = Annotated[
    str | None,
    typer.Option(
        "--violations",
        help="Write the rows a rule covers but gets wrong (with the rules they contradict) to this file.",
    ),
]


# Every gate: its parameter, its option, the metric it bounds (None: a bound the API holds
# itself: a rule's drift, a column's, the cost) and whether it is a maximum. Declared once:
# the command's options and the gates it holds both come from here.
GATES = (
    ("min_accuracy", MinAccuracy, "accuracy", False),
    ("min_f1", MinF1, "macro_f1", False),
    ("min_coverage", MinCoverage, "coverage", False),
    ("max_rmse", MaxRmse, "rmse", True),
    ("max_mae", MaxMae, "mae", True),
    ("min_r2", MinR2, "r2", False),
    ("max_rule_drift", MaxRuleDrift, None, False),
    ("min_rule_coverage", MinRuleCoverage, None, False),
    ("max_coverage_ratio", MaxCoverageRatio, None, False),
    ("max_psi", MaxPsi, None, False),
    ("max_cost", MaxCost, None, False),
)


def _gates(values: dict[str, Any]) -> dict[str, Any]:
    """The gate options' values as the metrics' :class:`Gate` list and the API's own bounds."""
    gates = [Gate(metric, values.pop(name), f"`{name}`", upper) for name, _, metric, upper in GATES if metric]
    return {"gates": gates, "bounds": values}


@common.reads_a_table
@common.adds_options([(name, annotation, None) for name, annotation, _, _ in GATES], _gates, into=("gates", "bounds"))
def evaluate(
    model_path: ModelPath,
    data: DataPath,
    target: Target = None,
    gate_on: GateOn = "point",
    reference: common.Reference = None,
    costs: Costs = None,
    baseline: Baseline = False,
    weights: common.Weights = None,
    per_rule: PerRule = True,
    json_out: JsonOut = False,
    output: Output = None,
    violations_out: Violations = None,
    gates: list[Gate] | None = None,
    bounds: dict[str, float | None] | None = None,
    read: dict[str, Any] | None = None,
    strict: common.Strict = False,
    quiet: common.Quiet = False,
) -> None:
    """Score a model on labelled data: accuracy, balanced accuracy, per-class P/R/F1,
    macro F1, Cohen's kappa, confusion matrix, coverage and per-rule statistics
    (for a numeric target: MAE, RMSE, R²).

    Exit status 1 when a --min-* gate fails.

    Examples:

        rulecli oner sample_data/house.csv -y value -q -o house.json

        rulecli evaluate house.json sample_data/house.csv --min-accuracy 0.6

        rulecli evaluate house.json sample_data/house.csv --json --violations house.wrong.csv
    """
    if output is not None:
        io.check_writable(output)
    if violations_out is not None:
        io.table_output(violations_out)
    model = common.open_model(model_path, data)
    lf, label = common.scoring_input(model, data, read, truth=target or model.target, strict=strict, quiet=quiet)
    payload = api.evaluate(
        model,
        lf,
        label=label,
        target=target,
        per_rule=per_rule,
        gates=gates or [],
        violations_out=violations_out,
        baseline=baseline,
        gate_on=gate_on,
        reference=reference,
        weights=weights,
        costs=costs,
        **(bounds or {}),
    )
    _emit(payload, api.source_label(data), output=output, json_out=json_out, quiet=quiet)


def _emit(payload: dict[str, Any], label: str, *, output: str | None, json_out: bool, quiet: bool) -> None:
    """The metrics written and shown, then each failed gate on stderr (exit 1)."""
    # the library names the gates' parameters; the person and the JSON read this command's flags
    failures = payload["gates"]["failures"] = [as_flags(f) for f in payload["gates"]["failures"]]
    if output is not None:
        common.write_json(output, payload)
    if json_out:
        io.write_text(io.STDIO, json.dumps(payload, indent=2, sort_keys=True) + "\n")
    elif not quiet:
        _show(payload, label)
    for failure in failures:
        console.err.print(failure, markup=False)
    if failures:
        raise typer.Exit(1)


def _show(payload: dict[str, Any], label: str) -> None:
    # the tables go to stdout at a terminal and in a pipe alike (plain text there: no colour,
    # 200 columns), so a CI log or `> metrics.txt` holds them; --json is for machines
    out = console.out
    out.print(console.metrics_table(f"{label}", payload))
    if "rmse" not in payload:  # a model of numbers has no classes, nor per-rule accuracies
        out.print(_per_class(payload["per_class"]))
        out.print(_confusion(payload["confusion"]))
    if payload.get("rules"):
        out.print(_per_rule(payload["rules"]))
    if payload.get("feature_drift"):
        out.print(_feature_drift(payload["feature_drift"]))
    if payload.get("baseline"):
        out.print(_rule_drift(payload["baseline"]))


def _table(title: str, headers: tuple[str, ...], left: tuple[str, ...], rows: Any) -> console.DataTable:
    """A table of data: ``left`` columns read as text, the others as figures."""
    table = console.DataTable(title)
    for name in headers:
        table.add_column(name, justify="left" if name in left else "right")
    for row in rows:
        table.add_row(*row)
    return table


def _per_class(per_class: dict[str, Any]) -> console.DataTable:
    rows = (
        (cls, f"{r['precision']:.4f}", f"{r['recall']:.4f}", f"{r['f1']:.4f}", str(r["support"]))
        for cls, r in per_class.items()
    )
    return _table("per class", ("class", "precision", "recall", "f1", "support"), ("class",), rows)


def _confusion(confusion: dict[str, Any]) -> console.DataTable:
    table = console.DataTable("confusion (rows: truth, columns: predicted)")
    table.add_column("")
    for cls in confusion["labels"]:
        table.add_column(cls, justify="right")
    if any(confusion["unclassified"]):
        table.add_column("unclassified", justify="right")
    for cls, row, unclassified in zip(confusion["labels"], confusion["matrix"], confusion["unclassified"], strict=True):
        extra = [str(unclassified)] if any(confusion["unclassified"]) else []
        table.add_row(cls, *(str(v) for v in row), *extra)
    return table


def _per_rule(rules: list[dict[str, Any]]) -> console.DataTable:
    rows = (
        (
            r["rule"],
            r["conditions"],
            r["prediction"],
            str(r["covered"]),
            str(r["correct"]),
            f"{r['coverage']:.3f}",
            f"{r['class_support']:.3f}",
            f"{r['accuracy']:.3f}" + _interval(r.get("accuracy_interval")),
        )
        for r in rules
    )
    return _table(
        "per rule (coverage n_a/n, class support n_ab/n_b, accuracy n_ab/n_a with its 95 % Wilson interval)",
        ("rule", "IF", "THEN", "covered", "correct", "coverage", "class support", "accuracy"),
        ("IF", "THEN"),
        rows,
    )


def _feature_drift(drift: dict[str, Any]) -> console.DataTable:
    rows = (
        (r["column"], f"{r['psi']:.3f}", str(r["bins"]), r["cut_by"], _p(r["p"]), "yes" if r["drifted"] else "")
        for r in drift["features"]
    )
    return _table(
        f"columns against --reference: population stability index, chi-square p Holm-adjusted, drifted at "
        f"p < {drift['alpha']}",
        ("column", "PSI", "bins", "cut by", "p", "drifted"),
        ("column", "cut by"),
        rows,
    )


def _rule_drift(drift: dict[str, Any]) -> console.DataTable:
    # a rule with a formula is held to its rows' mean and its error, one of classes to its accuracy
    numbers = bool(drift["rules"]) and "rmse" in drift["rules"][0]
    figures = ("mean", "rmse") if numbers else ("accuracy",)
    shown = _figure if numbers else _share
    tests = "coverage two-proportion, mean Welch, rmse log-ratio tests" if numbers else "two-proportion tests"
    rows = (
        (
            r["rule"],
            f"{r['train_coverage']:.3f} -> {r['coverage']:.3f}",
            _p(r["coverage_p"]),
            *(x for f in figures for x in (f"{shown(r[f'train_{f}'])} -> {shown(r[f])}", _p(r[f"{f}_p"]))),
            "yes" if r["drifted"] else "",
        )
        for r in drift["rules"]
    )
    return _table(
        f"rules against training ({drift['training_rows']} rows): {tests}, "
        f"p Holm-adjusted over {drift['tests']}, drifted at p < {drift['alpha']}",
        (
            "rule",
            "coverage: train -> here",
            "p",
            *(x for f in figures for x in (f"{f}: train -> here", "p")),
            "drifted",
        ),
        ("coverage: train -> here",),
        rows,
    )


def _interval(interval: list[float] | None) -> str:
    return "" if not interval else f" ({interval[0]:.3f}–{interval[1]:.3f})"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.2g}"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"
