"""Learner commands: read data, fit, optionally score on --test / --cv, emit the model."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.table import Table

from rulecli.dataset import Dataset
from rulecli.errors import InputError, ParamError
from rulecli.learners.aq import AQParams, fit_aq
from rulecli.learners.cn2 import CN2Params, fit_cn2
from rulecli.learners.oner import OneRParams, fit_oner
from rulecli.learners.ripper import RipperParams, fit_ripper
from rulecli.model.compile import check_data, read_dtypes_for
from rulecli.model.core import Model, Vote
from rulecli.model.text import render_conditions
from rulecli.search.progress import OnRule
from rulecli.validation import SUMMARY_KEYS, cross_validate, evaluate_model, truth_expr

from . import common, console


def learn(data: str, fit: Callable[[Dataset], Model], data_opts: common.DataOptions, run: common.RunOptions) -> Model:
    """Read and prepare the training table, fit (with --cv / --test if asked), save and show the model."""
    ds = common.load_dataset(data, data_opts, quiet=run.quiet)
    model = run_learner(
        ds,
        fit,
        seed=run.seed,
        test=run.test,
        cv=run.cv,
        metrics_out=run.metrics_out,
        input_format=data_opts.input_format,
        null_values=data_opts.null_values,
        quiet=run.quiet,
    )
    common.emit_model(model, output=run.output, as_json=run.json_out, quiet=run.quiet)
    return model


def run_learner(
    ds: Dataset,
    fit: Callable[[Dataset], Model],
    *,
    seed: int,
    test: str | None,
    cv: int | None,
    metrics_out: str | None,
    input_format: str | None,
    null_values: list[str] | None,
    quiet: bool,
) -> Model:
    """The shared life of a learner command; the learner itself is ``fit``."""
    report: dict[str, Any] = {}
    if cv is not None:
        result = cross_validate(ds, fit, cv, seed)
        report["cv"] = result.as_dict()
        if not quiet:
            console.err.print(_cv_table(result.as_dict(), cv))
    model = fit(ds)
    if test is not None:
        lf = common.data_columns(test, input_format, null_values, read_dtypes_for(model))
        columns = lf.collect_schema()
        check_data(model, columns, test)
        if model.target not in columns:
            raise InputError(f"{test}: target column '{model.target}' is not in the test data")
        metrics = evaluate_model(model, lf, truth_expr(model))
        report["test"] = metrics
        if not quiet:
            console.err.print(console.metrics_table(f"test: {test}", metrics))
    if metrics_out is not None:
        common.write_json(metrics_out, report)
    return model


def _cv_table(cv: dict[str, Any], k: int) -> Table:
    table = Table(title=f"{k}-fold cross-validation (stratified)", title_justify="left")
    table.add_column("fold", justify="right")
    for key in (*SUMMARY_KEYS, "rules"):
        table.add_column(key, justify="right")
    for fold in cv["folds"]:
        table.add_row(str(fold["fold"]), *(f"{fold[k]:.4f}" for k in SUMMARY_KEYS), str(fold["rules"]))
    summary = cv["summary"]
    table.add_row("mean ± sd", *(f"{summary[k]['mean']:.4f} ± {summary[k]['sd']:.4f}" for k in SUMMARY_KEYS), "")
    return table


@dataclass(frozen=True)
class Learner:
    """What a learner command hands over: how to fit, and what to tell a person afterwards."""

    fit: Callable[[Dataset, OnRule | None], Model]
    report: Callable[[Model, bool], None]


def _rule_count(name: str) -> Callable[[Model, bool], None]:
    def report(model: Model, quiet: bool) -> None:
        console.info(f"{name}: {len(model.rules)} rules", quiet=quiet)

    return report


DATA = inspect.Parameter(
    "data",
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    annotation=Annotated[
        str, typer.Argument(metavar="DATA", help="Training table (CSV, TSV, Parquet, NDJSON, IPC, ARFF; '-' = stdin).")
    ],
)
# The options every learner takes, in DataOptions and RunOptions order.
DATA_OPTIONS = (
    ("target", common.Target, None),
    ("features", common.Features, None),
    ("exclude", common.Exclude, None),
    ("categorical", common.Categorical, None),
    ("numeric", common.Numeric, None),
    ("target_bins", common.TargetBins, None),
    ("null_values", common.NullValues, None),
    ("input_format", common.InputFormat, None),
)
RUN_OPTIONS = (
    ("seed", common.Seed, 0),
    ("output", common.OutputPath, None),
    ("json_out", common.JsonOut, False),
    ("quiet", common.Quiet, False),
    ("test", common.TestPath, None),
    ("cv", common.CvFolds, None),
    ("metrics_out", common.MetricsOut, None),
)


def learner_command(configure: Callable[..., Learner]) -> Callable[..., None]:
    """A Typer command from a function of the learner's own options.

    The command takes the training table, the learner's options (``configure``'s
    parameters, ``seed`` aside) and the data and run options every learner shares, so a
    new learner declares only what is its own.
    """
    own = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for p in inspect.signature(configure, eval_str=True).parameters.values()
        if p.name != "seed"
    ]
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in (*DATA_OPTIONS, *RUN_OPTIONS)
    ]

    def command(**values: Any) -> None:
        data = values.pop("data")
        data_opts = common.DataOptions(*(values.pop(name) for name, _, _ in DATA_OPTIONS))
        run = common.RunOptions(*(values.pop(name) for name, _, _ in RUN_OPTIONS))
        learner = configure(**values, seed=run.seed)
        with console.rule_progress(configure.__name__, quiet=run.quiet) as on_rule:
            model = learn(data, lambda ds: learner.fit(ds, on_rule), data_opts, run)
        learner.report(model, run.quiet)

    command.__signature__ = inspect.Signature([DATA, *own, *shared])  # type: ignore[attr-defined]
    command.__doc__ = configure.__doc__
    command.__name__ = configure.__name__
    return command


def oner(
    min_bucket: Annotated[
        int, typer.Option("--min-bucket", min=1, help="Holte/Weka minimum bucket size for numeric features.")
    ] = 6,
    discretize: Annotated[
        str,
        typer.Option(
            "--discretize", help="Numeric features: min-bucket (Holte, as Weka), equal-width, equal-frequency or mdlp."
        ),
    ] = "min-bucket",
    bins: Annotated[int, typer.Option("--bins", min=1, help="Intervals for equal-width / equal-frequency.")] = 5,
    ties: Annotated[
        str, typer.Option("--ties", help="Equal errors: 'first' feature or smallest 'chi2' p-value.")
    ] = "first",
    validation_fraction: Annotated[
        float,
        typer.Option(
            "--validation-fraction", min=0.0, max=0.99, help="Choose the feature by errors on this held-out share."
        ),
    ] = 0.0,
    show_table: Annotated[
        bool, typer.Option("--show-table", help="Show the chosen feature's cross table (stderr).")
    ] = False,
    seed: int = 0,
) -> Learner:
    """Learn OneR rules: one rule per value of the single best feature (Holte 1993).

    Example:

        rulecli oner sample_data/house.csv -y value -o house.json
    """
    params = OneRParams(
        min_bucket=min_bucket,
        discretize=discretize,
        bins=bins,
        ties=ties,
        validation_fraction=validation_fraction,
        seed=seed,
    )

    def report(model: Model, quiet: bool) -> None:
        training = model.info.training
        chosen = training["feature"]
        errors = training["errors"]
        assert isinstance(errors, dict)
        console.info(f"oner: chose '{chosen}' with {errors[chosen]}/{training['judged_rows']} errors", quiet=quiet)
        if show_table and not quiet:
            console.err.print(_cross_table(model))

    return Learner(lambda d, _: fit_oner(d, params), report)


def _cross_table(model: Model) -> Table:
    """The chosen feature's value x class counts with class shares, from the rules' statistics."""
    table = Table(title=f"cross table: {model.info.training['feature']} x {model.target}", title_justify="left")
    table.add_column("level")
    for cls in model.classes:
        table.add_column(f"# {cls}", justify="right")
    for cls in model.classes:
        table.add_column(f"P({cls})", justify="right")
    for rule in model.rules:
        counts = rule.stats.class_counts if rule.stats and rule.stats.class_counts else ()
        total = sum(counts)
        shares = [f"{c / total:.2f}" if total else "-" for c in counts]
        table.add_row(render_conditions(rule.conditions), *(str(c) for c in counts), *shares)
    return table


def ripper(
    folds: Annotated[
        int, typer.Option("--folds", min=2, help="1/FOLDS of the rows prune, the rest grow (Weka -F).")
    ] = 3,
    min_weight: Annotated[
        float, typer.Option("--min-weight", min=0, help="Minimum positives a condition must keep (Weka -N).")
    ] = 2.0,
    optimizations: Annotated[
        int, typer.Option("--optimizations", "-k", min=0, help="Optimisation passes (Weka -O).")
    ] = 2,
    pruning: Annotated[
        bool, typer.Option("--pruning/--no-pruning", help="Grow/prune split and pruning (Weka -P).")
    ] = True,
    check_error_rate: Annotated[
        bool,
        typer.Option("--check-error-rate/--no-check-error-rate", help="Stop at a rule with >= 50% errors (Weka -E)."),
    ] = True,
    dl_slack: Annotated[
        float,
        typer.Option(
            "--dl-slack", min=0, help="Stop when the description length exceeds the minimum by this many bits."
        ),
    ] = 64.0,
    prune_metric: Annotated[
        str, typer.Option("--prune-metric", help="Rule worth when pruning: jrip (p+1)/(p+n+2), or cohen (p-n)/(p+n).")
    ] = "jrip",
    unordered: Annotated[
        bool, typer.Option("--unordered", help="Rules for every class, voting by confidence, instead of a list.")
    ] = False,
    max_rules: common.MaxRules = None,
    max_rule_length: common.MaxRuleLength = None,
    seed: int = 0,
) -> Learner:
    """Learn RIPPER rules (Cohen 1995) as Weka's JRip does: an ordered rule list, rarest class first.

    Example:

        rulecli ripper sample_data/penguins.csv -y species -o penguins.ripper.json
    """
    params = RipperParams(
        folds=folds,
        min_weight=min_weight,
        optimizations=optimizations,
        pruning=pruning,
        check_error_rate=check_error_rate,
        dl_slack=dl_slack,
        prune_metric=prune_metric,
        unordered=unordered,
        max_rules=max_rules,
        max_rule_length=max_rule_length,
        seed=seed,
    )
    return Learner(lambda d, on_rule: fit_ripper(d, params, on_rule=on_rule), _rule_count("ripper"))


def cn2(
    ordered: Annotated[
        bool,
        typer.Option(
            "--ordered/--unordered", help="A decision list (Clark & Niblett) or a rule set per class (Clark & Boswell)."
        ),
    ] = True,
    beam_width: Annotated[
        int, typer.Option("--beam-width", min=1, help="Complexes kept at each step of the search.")
    ] = 5,
    min_support: Annotated[int, typer.Option("--min-support", min=1, help="Drop complexes covering fewer rows.")] = 1,
    quality: Annotated[
        str | None,
        typer.Option(
            "--quality", help="entropy (default for --ordered), laplace (default for --unordered) or accuracy."
        ),
    ] = None,
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha", min=0.0, max=1.0, help="Significance level of the likelihood-ratio test (1 = no test)."
        ),
    ] = 0.05,
    vote: Annotated[
        str,
        typer.Option("--vote", help="--unordered only: distribution (sum class counts) or best (most accurate rule)."),
    ] = "distribution",
    max_rule_length: Annotated[
        int, typer.Option("--max-rule-length", min=1, help="At most this many conditions per rule.")
    ] = 5,
    max_rules: common.MaxRules = None,
    seed: int = 0,
) -> Learner:
    """Learn CN2 rules (Clark & Niblett 1989; Clark & Boswell 1991) by beam search.

    Example:

        rulecli cn2 sample_data/penguins.csv -y species --unordered -o penguins.cn2.json
    """
    if vote not in ("distribution", "best"):
        raise ParamError(f"--vote must be distribution or best, got '{vote}'")
    params = CN2Params(
        ordered=ordered,
        beam_width=beam_width,
        min_support=min_support,
        quality=quality,
        alpha=alpha,
        vote=Vote(vote),
        max_rule_length=max_rule_length,
        max_rules=max_rules,
        seed=seed,
    )
    return Learner(lambda d, on_rule: fit_cn2(d, params, on_rule=on_rule), _rule_count("cn2"))


def aq(
    beam_width: Annotated[int, typer.Option("--beam-width", min=1, help="Star size: partial rules kept per step.")] = 5,
    max_error: Annotated[
        float,
        typer.Option("--max-error", min=0.0, max=0.99, help="Allowed share of counterexamples among covered rows."),
    ] = 0.01,
    vote: Annotated[
        str, typer.Option("--vote", help="one (rule, vote) or support (weighted by correct rows).")
    ] = "one",
    default: Annotated[
        str, typer.Option("--default", help="Rows no rule covers: majority class, or none (unclassified).")
    ] = "majority",
    max_rules: common.MaxRules = None,
    max_rule_length: common.MaxRuleLength = None,
    seed: int = 0,
) -> Learner:
    """Learn AQ rules (Michalski) by seed-and-star covering: an unordered, voting rule set.

    Example:

        rulecli aq sample_data/house.csv -y value --default none
    """
    params = AQParams(
        beam_width=beam_width,
        max_error=max_error,
        vote=vote,
        default=default,
        max_rules=max_rules,
        max_rule_length=max_rule_length,
        seed=seed,
    )
    return Learner(lambda d, on_rule: fit_aq(d, params, on_rule=on_rule), _rule_count("aq"))
