"""distill: a rule model that imitates another model (a forest), with its fidelity measured."""

from __future__ import annotations

from typing import Annotated

import typer

from rulecli import api, learners
from rulecli.errors import ParamError

from . import common, console

STUDENTS = ("ripper", "cn2", "oner", "aq", "brl", "reduct", "tree")


def distill(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="The model to imitate (a forest, say).")],
    data: Annotated[str, typer.Argument(help="Rows to learn from; the model labels them.")],
    learner: Annotated[
        str, typer.Option("--learner", help=f"The rule learner that imitates: {', '.join(STUDENTS)}.")
    ] = "ripper",
    max_rules: Annotated[int | None, typer.Option("--max-rules", min=1, help="At most this many rules.")] = None,
    test: common.TestPath = None,
    holdout: Annotated[
        float, typer.Option("--holdout", help="Without --test: the share of DATA kept out of learning to measure on.")
    ] = api.HOLDOUT,
    synthetic: Annotated[
        float,
        typer.Option(
            "--synthetic",
            min=0,
            help="Rows made up per row of DATA (each a row with its decimal numbers moved a little), "
            "labelled by the model and learned from too; 0: none.",
        ),
    ] = api.SYNTHETIC,
    seed: common.Seed = 0,
    output: common.OutputPath = None,
    json_out: common.JsonOut = False,
    quiet: common.Quiet = False,
) -> None:
    """Learn rules that imitate a model: the model's predictions on DATA are the class the
    rule learner learns; fidelity (agreement with the model) and both models' accuracy are
    measured on held-out rows and recorded in the rules' model (training.distilled).

    Examples:

        rulecli forest sample_data/penguins.csv -y species -q -o forest.json

        rulecli distill forest.json sample_data/penguins.csv --max-rules 4 -o rules.json
    """
    if learner not in STUDENTS:
        raise ParamError(f"--learner must be one of {', '.join(STUDENTS)}, got '{learner}'")
    params = learners.get(learner).params
    if max_rules is not None and "max_rules" not in params.__dataclass_fields__:
        raise ParamError(f"{learner} has no rule budget; --max-rules goes with {', '.join(_budgeted())}")
    if output is not None:
        api.check_model_path(output)
    common.check_not_both_stdin(model_path, data)
    teacher = api.load(model_path)
    extra = {"max_rules": max_rules} if max_rules is not None else {}
    student = api.distill(
        teacher, data, learner=learner, test=test, holdout=holdout, synthetic=synthetic, seed=seed, **extra
    )
    common.emit_model(student, output=output, as_json=json_out, quiet=quiet)
    record = student.info.training["distilled"]
    console.info(_summary(record, learner), quiet=quiet)


def _budgeted() -> list[str]:
    return [n for n in STUDENTS if "max_rules" in learners.get(n).params.__dataclass_fields__]


def _summary(record: dict, learner: str) -> str:
    line = (
        f"distilled by {learner}: fidelity {record['fidelity']:.4f} on {record['measured_rows']:,} rows "
        f"({record['measured_on']})"
    )
    if "accuracy" in record:
        accuracy = record["accuracy"]
        line += f"; accuracy {accuracy['rules']:.4f} (the {record['teacher']}: {accuracy['teacher']:.4f})"
    return line
