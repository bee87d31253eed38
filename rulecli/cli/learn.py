"""Learner commands: read data, fit, optionally score on --test / --cv, emit the model."""

from __future__ import annotations

import contextlib
import inspect
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.table import Table

from rulecli import io
from rulecli.dataset import Dataset
from rulecli.errors import InputError, ParamError, ResourceLimitError
from rulecli.learners.aq import AQParams, fit_aq
from rulecli.learners.brl import BRLParams, fit_brl
from rulecli.learners.cn2 import CN2Params, fit_cn2
from rulecli.learners.forest import ForestParams, fit_forest, partial_dependence
from rulecli.learners.oner import OneRParams, fit_oner
from rulecli.learners.reduct import ReductParams, fit_reduct
from rulecli.learners.ripper import RipperParams, fit_ripper
from rulecli.learners.tree import TreeParams, fit_tree
from rulecli.model.compile import Predictor, check_data, read_dtypes_for
from rulecli.model.core import Model, Vote
from rulecli.model.text import render_conditions
from rulecli.model.tree import Forest, Tree
from rulecli.search.progress import OnRule
from rulecli.validation import cross_validate, evaluate_model, truth_expr

from . import common, console


def learn(
    data: str,
    fit: Callable[[Dataset], Predictor],
    data_opts: common.DataOptions,
    run: common.RunOptions,
    *,
    numeric_target: bool = False,
    show_model: bool = True,
) -> Predictor:
    """Read and prepare the training table, fit (with --cv / --test if asked), save and show the model."""
    ds = common.load_dataset(data, data_opts, quiet=run.quiet, numeric_target=numeric_target)
    if ds.regression:
        console.info(
            f"'{ds.target}' is numeric: predicting it as a number "
            f"(pass --categorical {ds.target} or --target-bins K for classes)",
            quiet=run.quiet,
        )
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
    common.emit_model(model, output=run.output, as_json=run.json_out, quiet=run.quiet or not show_model)
    return model


def run_learner(
    ds: Dataset,
    fit: Callable[[Dataset], Predictor],
    *,
    seed: int,
    test: str | None,
    cv: int | None,
    metrics_out: str | None,
    input_format: str | None,
    null_values: list[str] | None,
    quiet: bool,
) -> Predictor:
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
    keys = list(cv["summary"])
    stratified = "stratified" if "accuracy" in keys else "shuffled"
    table = Table(title=f"{k}-fold cross-validation ({stratified})", title_justify="left")
    table.add_column("fold", justify="right")
    for key in (*keys, "rules"):
        table.add_column(key, justify="right")
    for fold in cv["folds"]:
        table.add_row(str(fold["fold"]), *(f"{fold[k]:.4f}" for k in keys), str(fold["rules"]))
    summary = cv["summary"]
    table.add_row("mean ± sd", *(f"{summary[k]['mean']:.4f} ± {summary[k]['sd']:.4f}" for k in keys), "")
    return table


@dataclass(frozen=True)
class Learner:
    """What a learner command hands over: how to fit, and what to tell a person afterwards.

    ``fit`` gets a progress callback: the rules grown so far, or the steps done out of
    ``steps`` (trees of a forest) when ``steps`` is set. ``numeric_target``: a numeric
    target is predicted as a number rather than refused. ``show_model`` False: stdout
    gets what ``report`` prints (e.g. reducts), not the model.
    """

    fit: Callable[[Dataset, OnRule | None], Any]
    report: Callable[[Any, bool], None]
    steps: int | None = None
    unit: str = "rules"
    numeric_target: bool = False
    show_model: bool = True  # False: ``report`` prints what was asked for instead


def _rule_count(name: str) -> Callable[[Model, bool], None]:
    def report(model: Model, quiet: bool) -> None:
        console.info(f"{name}: {len(model.rules)} rules", quiet=quiet)

    return report


RuleSetVote = Annotated[
    str, typer.Option("--vote", help="one (rule, vote) or support (weighted by the training rows a rule gets right).")
]
Unmatched = Annotated[
    str, typer.Option("--default", help="Rows no rule matches: majority class, or none (unclassified).")
]
Discretize = Annotated[
    str, typer.Option("--discretize", help="Numeric features: equal-frequency, equal-width, mdlp or min-bucket.")
]
Bins = Annotated[int, typer.Option("--bins", min=1, help="Intervals for equal-width / equal-frequency.")]

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
    ("time_limit", common.TimeLimit, None),
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
        name = configure.__name__
        progress = (
            console.progress_bar(name, learner.steps, learner.unit, quiet=run.quiet)
            if learner.steps is not None
            else console.rule_progress(name, quiet=run.quiet)
        )
        with progress as on_step, _time_limit(name, run.time_limit):
            model = learn(
                data,
                lambda ds: learner.fit(ds, on_step),
                data_opts,
                run,
                numeric_target=learner.numeric_target,
                show_model=learner.show_model,
            )
        learner.report(model, run.quiet)

    command.__signature__ = inspect.Signature([DATA, *own, *shared])  # type: ignore[attr-defined]
    command.__doc__ = configure.__doc__
    command.__name__ = configure.__name__
    return command


@contextlib.contextmanager
def _time_limit(name: str, limit: float | None) -> Iterator[None]:
    """Raise a clear error in the main thread once ``limit`` seconds have passed (SIGALRM):
    Python code between NumPy calls notices within moments, however long a learner runs."""
    if limit is None or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise ResourceLimitError(
            f"{name}: stopped by --time-limit {limit:g} s; nothing was written "
            "(fewer rows or features, or --max-rules / --max-rule-length, make it quicker)"
        )

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def oner(
    min_bucket: Annotated[
        int, typer.Option("--min-bucket", min=1, help="Holte/Weka minimum bucket size for numeric features.")
    ] = 6,
    discretize: Discretize = "min-bucket",
    bins: Bins = 5,
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
    vote: RuleSetVote = "one",
    default: Unmatched = "majority",
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


# ---------------------------------------------------------------------------- trees

TREE = "Tree growth"

Criterion = Annotated[
    str | None,
    typer.Option(
        "--criterion",
        help="gini, entropy or misclassification (classes; default gini); mse (numeric target, the default).",
        rich_help_panel=TREE,
    ),
]
MaxDepth = Annotated[int | None, typer.Option("--max-depth", min=0, help="Split no deeper.", rich_help_panel=TREE)]
MaxLeafNodes = Annotated[
    int | None,
    typer.Option(
        "--max-leaf-nodes", min=2, help="Stop at this many leaves (splits go best-first by F_r).", rich_help_panel=TREE
    ),
]
MinSamplesSplit = Annotated[
    float,
    typer.Option(
        "--min-samples-split",
        min=2,
        help="A node needs this many rows to be split (the seeds' S_min + 1).",
        rich_help_panel=TREE,
    ),
]
MinSamplesLeaf = Annotated[
    float,
    typer.Option("--min-samples-leaf", min=1, help="Each child keeps at least this many rows.", rich_help_panel=TREE),
]
MinImpurityDecrease = Annotated[
    float,
    typer.Option(
        "--min-impurity-decrease",
        min=0,
        help="Split only where F_r = G_r |I_r| / |I_1| reaches this.",
        rich_help_panel=TREE,
    ),
]
MaxBins = Annotated[
    int,
    typer.Option(
        "--max-bins",
        min=2,
        max=65535,
        help="Numeric features with more distinct values are cut at this many quantiles.",
        rich_help_panel=TREE,
    ),
]


def _tree_report(model: Tree, quiet: bool) -> None:
    t = model.info.training
    console.info(f"tree: {t['leaves']} leaves, depth {t['depth']}", quiet=quiet)


def tree(
    criterion: Criterion = None,
    max_depth: MaxDepth = None,
    max_leaf_nodes: MaxLeafNodes = None,
    min_samples_split: MinSamplesSplit = 2.0,
    min_samples_leaf: MinSamplesLeaf = 1.0,
    min_impurity_decrease: MinImpurityDecrease = 0.0,
    ccp_alpha: Annotated[
        float,
        typer.Option(
            "--ccp-alpha", min=0, help="Minimal cost-complexity pruning strength (0: none).", rich_help_panel=TREE
        ),
    ] = 0.0,
    max_bins: MaxBins = 255,
    seed: int = 0,
) -> Learner:
    """Grow a CART tree (classification, or regression for a numeric target); shown as a
    tree and saved as one rule per leaf.

    Example:

        rulecli tree sample_data/penguins.csv -y species --max-depth 3 -o penguins.tree.json
    """
    params = TreeParams(
        criterion=criterion,
        max_depth=max_depth,
        max_leaf_nodes=max_leaf_nodes,
        min_samples_split=min_samples_split,
        min_samples_leaf=min_samples_leaf,
        min_impurity_decrease=min_impurity_decrease,
        ccp_alpha=ccp_alpha,
        max_bins=max_bins,
    )
    return Learner(lambda d, _: fit_tree(d, params), _tree_report, numeric_target=True)


def forest(
    trees: Annotated[int, typer.Option("--trees", "-B", min=1, help="Number of bootstrap trees.")] = 100,
    max_features: Annotated[
        str,
        typer.Option(
            "--max-features",
            "-m",
            help="Features tried per node: auto (sqrt for classes, third for numbers), "
            "sqrt, third, all, a count or a fraction.",
        ),
    ] = "auto",
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Worker processes (the forest is the same for any value).")
    ] = 1,
    importance: Annotated[
        str, typer.Option("--importance", help="impurity (D_j, always saved) or permutation (OOB rows, also saved).")
    ] = "impurity",
    pd_feature: Annotated[
        str | None,
        typer.Option("--partial-dependence", help="Compute and draw the partial dependence on this feature."),
    ] = None,
    pd_class: Annotated[
        str | None, typer.Option("--class", help="Class y0 of --partial-dependence (default: the first class).")
    ] = None,
    pd_out: Annotated[
        str | None, typer.Option("--pd-out", help="Write the partial dependence here (.csv, .json, .parquet).")
    ] = None,
    grid_points: Annotated[
        int, typer.Option("--grid-points", min=2, help="Grid size for a numeric --partial-dependence feature.")
    ] = 20,
    criterion: Criterion = None,
    max_depth: MaxDepth = None,
    max_leaf_nodes: MaxLeafNodes = None,
    min_samples_split: MinSamplesSplit = 2.0,
    min_samples_leaf: MinSamplesLeaf = 1.0,
    min_impurity_decrease: MinImpurityDecrease = 0.0,
    max_bins: MaxBins = 255,
    seed: int = 0,
) -> Learner:
    """Grow a random forest (Breiman 2001, as seed 002 describes): bootstrap trees, m random
    features per node, OOB error, importances, partial dependence.

    Example:

        rulecli forest sample_data/penguins.csv -y species --trees 200 --jobs 2 -o penguins.forest.json
    """
    if importance not in ("impurity", "permutation"):
        raise ParamError(f"--importance must be impurity or permutation, got '{importance}'")
    if (pd_class is not None or pd_out is not None) and pd_feature is None:
        raise ParamError("--class and --pd-out go with --partial-dependence FEATURE")
    params = ForestParams(
        trees=trees,
        max_features=max_features,
        tree=TreeParams(
            criterion=criterion,
            max_depth=max_depth,
            max_leaf_nodes=max_leaf_nodes,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_impurity_decrease=min_impurity_decrease,
            max_bins=max_bins,
        ),
        seed=seed,
    )
    trained: dict[str, Dataset] = {}

    def fit(ds: Dataset, on_tree: OnRule | None) -> Forest:
        trained["data"] = ds  # the last call is the final fit (after --cv folds)
        return fit_forest(ds, params, jobs=jobs, permutation=importance == "permutation", on_tree=on_tree)

    def report(model: Forest, quiet: bool) -> None:
        if pd_feature is None:
            return
        ds = trained["data"]
        class_index = None
        if not model.regression:
            label = pd_class if pd_class is not None else model.classes[0]
            if label not in model.classes:
                raise ParamError(f"--class '{label}' is not one of the classes: {', '.join(model.classes)}")
            class_index = model.classes.index(label)
        grid, values = partial_dependence(model, ds, pd_feature, class_index, grid_points)
        column = "mean_prediction" if model.regression else f"f_{model.classes[class_index or 0]}"
        if pd_out is not None:
            common.write_partial_dependence(pd_out, pd_feature, grid, column, values)
        if not quiet:
            console.draw_partial_dependence(pd_feature, grid, column, values)

    return Learner(fit, report, steps=trees, unit="trees", numeric_target=True)


# ---------------------------------------------------------------------------- rough sets

PRINTS = ("rules", "reducts", "core", "gamma", "approximations")


def reduct(
    method: Annotated[
        str, typer.Option("--method", help="elimination (the lecture's) or quick (greedy forward by γ).")
    ] = "elimination",
    order: Annotated[
        str, typer.Option("--order", help="Attribute order: given, random (seeded) or significance.")
    ] = "given",
    n_reducts: Annotated[
        int, typer.Option("--n-reducts", min=1, help="Reducts from this many orders (the first as --order says).")
    ] = 1,
    all_reducts: Annotated[
        bool, typer.Option("--all", help="Every reduct (discernibility matrix; small attribute counts only).")
    ] = False,
    discretize: Discretize = "mdlp",
    bins: Bins = 5,
    min_accuracy: Annotated[
        float,
        typer.Option("--min-accuracy", min=0.01, max=1.0, help="Shorten certain rules while accuracy stays this high."),
    ] = 1.0,
    vote: RuleSetVote = "one",
    default: Unmatched = "majority",
    max_rules: Annotated[
        int, typer.Option("--max-rules", min=1, help="Refuse a reduct with more distinct descriptions (rules).")
    ] = 10_000,
    show: Annotated[
        str,
        typer.Option(
            "--print",
            help="What stdout gets: rules (the model), reducts (one per line), core, gamma, or approximations (CSV).",
        ),
    ] = "rules",
    seed: int = 0,
) -> Learner:
    """Rough-set reducts (Pawlak), the core, approximations and γ, and rules from reducts.

    Example:

        rulecli reduct sample_data/house.csv -y value --all --print reducts
    """
    if show not in PRINTS:
        raise ParamError(f"--print must be one of {', '.join(PRINTS)}, got '{show}'")
    params = ReductParams(
        method=method,
        order=order,
        n_reducts=n_reducts,
        all_reducts=all_reducts,
        discretize=discretize,
        bins=bins,
        min_accuracy=min_accuracy,
        vote=vote,
        default=default,
        rules=show == "rules",
        analysis=show in ("rules", "core", "approximations"),
        max_rules=max_rules,
        seed=seed,
    )

    def report(model: Model, quiet: bool) -> None:
        t = model.info.training
        if not t["consistent"] and not quiet:
            console.warn(
                f"the table is inconsistent: {t['inconsistent_rows']} rows share their description with rows of "
                f"another decision, so γ = {t['gamma']:.4f} < 1; certain rules come from the lower approximations, "
                "possible rules (accuracy < 1) from the upper ones"
            )
        reducts = t["reducts"]
        assert isinstance(reducts, list)
        core = f", core {{{', '.join(t['core'])}}}" if "core" in t else ""  # type: ignore[arg-type]
        console.info(
            f"reduct: γ = {t['gamma']:.4f}, {len(reducts)} reduct(s), first {{{', '.join(reducts[0])}}}{core}, "
            f"{len(model.rules)} rules",
            quiet=quiet,
        )
        if show != "rules":
            io.write_text(io.STDIO, _analysis_text(show, model))

    return Learner(lambda d, _: fit_reduct(d, params), report, show_model=show == "rules")


def _analysis_text(show: str, model: Model) -> str:
    t = model.info.training
    if show == "reducts":
        return "".join(",".join(r) + "\n" for r in t["reducts"])  # type: ignore[union-attr]
    if show == "core":
        return ",".join(t["core"]) + "\n"  # type: ignore[arg-type]
    if show == "gamma":
        return f"{t['gamma']!r}\n"
    lines = ["class,lower,upper,boundary,accuracy"]
    for cls, a in t["approximations"].items():  # type: ignore[union-attr]
        accuracy = a["lower"] / a["upper"] if a["upper"] else 0.0
        lines.append(f"{cls},{a['lower']},{a['upper']},{a['boundary']},{accuracy!r}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- BRL


def brl(
    min_support: Annotated[
        float,
        typer.Option("--min-support", min=0.0, max=1.0, help="Mine patterns held by at least this share of rows."),
    ] = 0.1,
    max_length: Annotated[int, typer.Option("--max-length", min=1, help="Conditions per mined pattern, at most.")] = 2,
    lam: Annotated[float, typer.Option("--lambda", help="Prior expected list length (truncated Poisson).")] = 3.0,
    eta: Annotated[float, typer.Option("--eta", help="Prior expected conditions per rule (truncated Poisson).")] = 1.0,
    alpha: Annotated[float, typer.Option("--alpha", help="Dirichlet pseudo-count per class.")] = 1.0,
    chains: Annotated[int, typer.Option("--chains", min=1, help="Independent Metropolis-Hastings chains.")] = 3,
    iterations: Annotated[int, typer.Option("--iterations", min=1, help="Iterations per chain.")] = 10_000,
    burn_in: Annotated[
        int | None, typer.Option("--burn-in", min=0, help="Iterations per chain left out of R-hat (default: half).")
    ] = None,
    discretize: Discretize = "equal-frequency",
    bins: Bins = 3,
    seed: int = 0,
) -> Learner:
    """Learn a Bayesian Rule List (Letham et al. 2015) from pre-mined frequent patterns by
    Metropolis-Hastings; each rule carries its posterior class probabilities.

    Example:

        rulecli brl sample_data/labor.csv --min-support 0.1 --seed 1 -o labor.brl.json
    """
    params = BRLParams(
        min_support=min_support,
        max_length=max_length,
        lam=lam,
        eta=eta,
        alpha=alpha,
        chains=chains,
        iterations=iterations,
        burn_in=burn_in,
        discretize=discretize,
        bins=bins,
        seed=seed,
    )

    def report(model: Model, quiet: bool) -> None:
        t = model.info.training
        rhat = t["rhat"]
        rhat_text = f"{rhat:.3f}" if isinstance(rhat, float) else "n/a"
        console.info(
            f"brl: {len(model.rules)} rules from {t['patterns']} mined patterns; "
            f"log posterior {t['log_posterior']:.2f}; R-hat {rhat_text}",
            quiet=quiet,
        )
        if isinstance(rhat, float) and rhat > 1.1 and not quiet:
            console.warn(f"chains disagree (R-hat {rhat:.2f} > 1.1): raise --iterations or check the list is stable")

    return Learner(
        lambda d, on_step: fit_brl(d, params, on_step=on_step), report, steps=chains * iterations, unit="iterations"
    )
