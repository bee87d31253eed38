"""The API's learning: a learner's parameters; fitting, cross-validation and testing end to end
(:func:`learn`); distillation."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rulecli import budget, engines, io, learners, memory
from rulecli.api.data import Data, engine_options, prepare, sorted_options, source_label
from rulecli.api.scoring import evaluate, predict, read_costs, scan_for
from rulecli.dataset import Dataset
from rulecli.display import counted
from rulecli.engines import EngineOptions, EngineTable, is_engine_table
from rulecli.errors import InputError, ParamError
from rulecli.held_out import cross_validate
from rulecli.model.compile import (
    Predictor,
)
from rulecli.model.core import Committee, DecisionList, RuleRegression, RuleSet, dated_rule, schema_units
from rulecli.model.costs import cheapest
from rulecli.model.tree import Forest, Tree
from rulecli.params import Params
from rulecli.search.progress import Progress
from rulecli.search.rule_stats import recounted
from rulecli.stats import hash_sampled, sample_seed


def make_params(learner: str, **values: Any) -> Params:
    """The learner's parameters from keyword values (unknown names are an error)."""
    spec = learners.get(learner)
    known = set(spec.params.__dataclass_fields__)
    unknown = sorted(set(values) - known)
    if unknown:
        raise ParamError(f"{learner} has no parameter '{unknown[0]}' (it has: {', '.join(sorted(known))})")
    return spec.params(**values)


def check_engine(engine: EngineOptions | None, *, cv: int | None = None) -> None:
    """Refuse cross-validation where the rows stay in an engine, before any pass over them."""
    if engine is not None and engine.engine != "memory" and cv is not None:
        raise ParamError(f"`cv` reads the table in memory; with `engine={engine.engine}`, hold out a `test` table")


def _resolved(learner: str | learners.Learner) -> learners.Learner:
    """The learner itself, looked up once where a name was given."""
    return learner if isinstance(learner, learners.Learner) else learners.get(learner)


def fit_model(
    learner: str | learners.Learner, ds: Dataset | EngineTable, params: Params, progress: Progress | None = None
) -> Predictor:
    """The learner's model of ``ds``. On an engine a learner that cannot count there (or any
    learner, given ``sample_rows``) learns from a hashed sample of ``sample_rows`` rows the
    engine draws, and the engine recounts its rules' statistics on every row
    (``training.sample`` says so)."""
    spec = _resolved(learner)
    if not is_engine_table(ds) or (spec.counts_on(ds.engine, ds.regression) and ds.sample_rows is None):
        return with_data_record(spec.fit(ds, params, progress=progress), ds)
    seed = getattr(params, "seed", 0)
    rows = engines.SAMPLE_ROWS if ds.sample_rows is None else ds.sample_rows
    sample = ds.sample(sample_seed(seed), min(1.0, rows / ds.n_rows))
    if sample.n_rows < 2 or len(set(sample.y.tolist())) < 2:
        single = "value" if ds.regression else "class"
        raise InputError(f"{ds.source}: the engine's sample holds a single {single}; pass a larger `sample_rows`")
    model = spec.fit(sample, params, progress=progress)
    note = {"rows": sample.n_rows, "of_rows": ds.n_rows, "drawn_by": "a hash of the row numbers", "seed": seed}
    learned_from = model.info.training.get("sample")
    if isinstance(learned_from, dict):  # the learner took a smaller sample of the engine's
        note["rows"] = learned_from["rows"]
    if isinstance(model, DecisionList | RuleSet | RuleRegression | Committee):
        model = recounted(model, ds)
        note["statistics"] = "recounted on every row"
    training = {**model.info.training, "sample": note}
    return with_data_record(dataclasses.replace(model, info=dataclasses.replace(model.info, training=training)), ds)


def release(data: object) -> None:
    """Close an engine's table (its connection and temporary files); nothing for a Dataset."""
    if is_engine_table(data):
        data.close()


def fit(learner: str, data: Data, *, progress: Progress | None = None, **options: Any) -> Predictor:
    """Fit ``learner`` (a registry name such as ``"ripper"``) on ``data``.

    ``options`` holds the data, read and engine keywords :func:`prepare` takes (``target``,
    ``features``, ``delimiter``, ``engine`` …), ``time_budget`` (seconds to learn for,
    keeping the model learned by then) and the learner's parameters (e.g. ``folds=3`` for
    ripper).
    """
    share = check_time_budget(options.pop("time_budget", None))
    spec_keys, read_keys, engine_keys, params = sorted_options(options)
    engine = engine_options(engine_keys.pop("engine", None), engine_keys)
    spec = learners.get(learner)
    params = make_params(learner, **params)
    ds = prepare(data, numeric_target=spec.numeric_target, engine=engine, **spec_keys, **read_keys)
    try:
        with budget.spending(share) as spent:
            return with_budget_record(fit_model(spec, ds, params, progress), spent)
    finally:
        if ds is not data:
            release(ds)


def with_data_record(model: Predictor, ds: Dataset | EngineTable) -> Predictor:
    """The model with a record of the weights it learned with (rows counted by weight) and
    of the columns the typing left out."""
    info = model.info
    units = schema_units(ds.schema)
    if (ds.schema.left_out or units) and info.schema is not None:
        # a learner's own schema (discretised features) keeps which columns hold dates
        features = tuple(dataclasses.replace(f, unit=units.get(f.name)) for f in info.schema.features)
        info = dataclasses.replace(
            info, schema=dataclasses.replace(info.schema, features=features, left_out=ds.schema.left_out)
        )
    if ds.weighting is not None:
        info = dataclasses.replace(info, training={**info.training, "weights": ds.weighting, "rows": ds.total_weight})
    if info is not model.info:
        model = dataclasses.replace(model, info=info)
    if units and isinstance(model, DecisionList | RuleSet):
        default = None if model.default is None else dated_rule(model.default, units)
        model = dataclasses.replace(model, rules=tuple(dated_rule(r, units) for r in model.rules), default=default)
    return model


@dataclass
class Training:
    """A fitted model and what was measured on the way (``cv``, ``test`` metrics)."""

    model: Predictor
    metrics: dict[str, Any] = field(default_factory=dict)
    # what a person should hear of the result (a model of one class, rare classes missed)
    warnings: list[str] = field(default_factory=list)


def train(
    learner: str | learners.Learner,
    ds: Dataset,
    params: Params,
    *,
    cv: int | None = None,
    cv_seed: int = 0,
    test: Data | None = None,
    read: io.ReadOptions = io.READ,
    progress: Progress | None = None,
    time_budget: float | None = None,
    costs: Data | None = None,
) -> Training:
    """What a learner command does: ``cv``-fold cross-validation, the final fit, scoring on
    ``test`` (read as ``read`` says). With ``time_budget`` seconds, each of the ``cv`` folds and the final fit learn
    for an equal share of it and keep what they have learned when it runs out. With
    ``costs`` (a cost table, as :func:`evaluate` takes) each rule predicts its class of least
    expected cost (:func:`rulecli.model.costs.cheapest`). ``learner``: a registry name or the
    :class:`~rulecli.learners.Learner` itself."""
    spec = _resolved(learner)
    metrics: dict[str, Any] = {}
    share = check_time_budget(time_budget, (cv or 0) + 1)
    if costs is not None and ds.regression:  # before any work
        raise ParamError("needs classes; this target is a number", param="costs")
    matrix = None if costs is None else read_costs(costs, ds.classes)
    if matrix is not None and spec.name in PRIOR_COSTS:
        ds = with_cost_priors(ds, matrix)
    if cv is not None:

        def fold_fit(part: Dataset) -> Predictor:
            with budget.spending(share) as spent:
                return with_costs(with_budget_record(spec.fit(part, params), spent), matrix)

        metrics["cv"] = cross_validate(ds, fold_fit, cv, cv_seed).as_dict()
    with budget.spending(share) as spent:
        model = with_costs(with_budget_record(fit_model(spec, ds, params, progress), spent), matrix)
    if test is not None:
        memory.give_back()  # what the learner freed, before the test table is read
        lf, label = scan_for(model, test, **read.keywords())
        if model.target not in lf.collect_schema():
            raise InputError(f"{label}: target column '{model.target}' is not in the test data")
        # test rows count by the training's weight column when the test table has it
        weights = ds.weight_column if ds.weight_column in lf.collect_schema() else None
        metrics["test"] = evaluate(model, lf, per_rule=False, weights=weights)
    return Training(model, metrics, [*budget_warnings(model), *imbalance_warnings(model, ds, metrics)])


@dataclass
class Learned:
    """What :func:`learn` made: the model, its ``cv``/``test`` metrics, the table it learned
    from (an engine's, closed), what a person should be warned of and told."""

    model: Predictor
    data: Dataset | EngineTable
    metrics: dict[str, Any]
    warnings: list[str]
    notes: list[str]


def learn(
    learner: str | learners.Learner,
    data: Data,
    params: Params,
    *,
    cv: int | None = None,
    seed: int = 0,
    test: Data | None = None,
    time_budget: float | None = None,
    costs: Data | None = None,
    engine: str | EngineOptions | None = None,
    progress: Progress | None = None,
    on_data: Callable[[Dataset | EngineTable, str | None], None] | None = None,
    **options: Any,
) -> Learned:
    """What a learner command does, end to end: every input checked before any work, the
    table read and typed (``options``: :func:`prepare`'s data and read keywords), then
    :func:`train` (``cv`` folds drawn with ``seed``, the final fit, scoring on ``test``,
    read as the data is). ``on_data(table, note)`` hears of the table as soon as it is
    read, with how its target was typed (``note``), before the long part; an engine's table
    is closed before this returns."""
    spec = _resolved(learner)
    for path in (test, costs):
        if isinstance(path, str | Path) and str(path) != io.STDIO:
            io.check_readable(str(path))
    check_time_budget(time_budget)
    spec_keys, read_keys, engine_keys, unknown = sorted_options(options)
    where = engine_options(engine, engine_keys)
    check_engine(where, cv=cv)
    ds = prepare(data, numeric_target=spec.numeric_target, engine=where, **spec_keys, **read_keys, **unknown)
    try:
        if on_data is not None:
            on_data(ds, target_note(ds, spec.numeric_target))
        training = train(
            spec,
            ds,
            params,
            cv=cv,
            cv_seed=seed,
            test=test,
            read=io.ReadOptions(**read_keys),
            progress=progress,
            time_budget=time_budget,
            costs=costs,
        )
    finally:
        release(ds)
    model = training.model
    return Learned(model, ds, training.metrics, [*training.warnings, *spec.warnings(model)], _notes(spec, model))


def _notes(spec: learners.Learner, model: Predictor) -> list[str]:
    """The learner's one-line summary and, for a sample, where its rows came from."""
    notes = [spec.summary(model)]
    sample = model.info.training.get("sample")
    if isinstance(sample, dict):
        recounted = "; its rules' statistics were recounted on every row" if "statistics" in sample else ""
        notes.append(
            f"{spec.name} learned from a sample of {sample['rows']:,} of the {sample['of_rows']:,} rows{recounted}"
        )
    return notes


def check_time_budget(seconds: float | None, parts: int = 1) -> float | None:
    """Each of ``parts`` fits' share of a time budget of ``seconds`` (None: no budget)."""
    if seconds is None:
        return None
    if not (0 < seconds <= MAX_TIME_BUDGET):
        raise ParamError(
            f"must be a number of seconds above 0 and at most {MAX_TIME_BUDGET:g}, got {seconds:g}",
            param="time_budget",
        )
    return seconds / parts


MAX_TIME_BUDGET = 1e7  # seconds: about four months


PRIOR_COSTS = ("tree", "forest")  # learners that take costs as class weights while they learn


def with_cost_priors(ds: Dataset | EngineTable, costs: dict[str, dict[str, float]]) -> Dataset:
    """``ds`` with each class weighed by what misclassifying one of its rows costs: CART's
    altered priors (Breiman et al. 1984, §4.4), so splits, leaves and votes all weigh the
    costs. A class's weight is the mean of C(j, k) − C(j, j) over the other classes k; with
    two classes a leaf's (or a forest's) most weighed class is then exactly the class of
    least expected cost (Elkan 2001, Theorem 1); with more, it approximates it."""
    if is_engine_table(ds):
        raise ParamError(
            "with a tree or a forest weighs the classes of rows in memory; leave out `engine`", param="costs"
        )
    assert isinstance(ds, Dataset)
    extra = np.array(
        [
            np.mean([max(costs[c][k] - costs[c][c], 0.0) for k in ds.classes if k != c]) if len(ds.classes) > 1 else 1.0
            for c in ds.classes
        ]
    )
    if not (extra > 0).any():
        raise ParamError("makes no mistake cost more than a right answer", param="costs")
    prior = extra / extra[extra > 0].mean()
    weights = prior if ds.class_weights is None else ds.class_weights * prior
    weighting = "costs" if ds.weighting is None else f"{ds.weighting}, costs"
    return dataclasses.replace(ds, class_weights=weights, weighting=weighting)


def with_costs(model: Predictor, costs: dict[str, dict[str, float]] | None) -> Predictor:
    """A rule model whose rules predict their class of least expected cost under ``costs``,
    or a tree or forest learned with them as class weights (:func:`with_cost_priors`),
    with the costs recorded in ``training.costs``; None: the model as it is."""
    if costs is None:
        return model
    if not isinstance(model, DecisionList | RuleSet):
        training = {**model.info.training, "costs": costs}
        return dataclasses.replace(model, info=dataclasses.replace(model.info, training=training))
    relabelled, changed = cheapest(model, costs)
    training = {**model.info.training, "costs": costs, "rules_relabelled_by_costs": changed}
    return dataclasses.replace(relabelled, info=dataclasses.replace(model.info, training=training))


def with_budget_record(model: Predictor, spent: budget.Budget | None) -> Predictor:
    """The model with what a time budget cut from it (``training.time_budget``), if it cut anything."""
    if spent is None or not spent.cuts:
        return model
    training = {**model.info.training, "time_budget": spent.record()}
    return dataclasses.replace(model, info=dataclasses.replace(model.info, training=training))


def budget_warnings(model: Predictor) -> list[str]:
    cut = model.info.training.get("time_budget")
    if not isinstance(cut, dict):
        return []
    return [
        f"the time budget ({cut['seconds']:g} s) ran out, and the model is what was learned by then: "
        + "; ".join(cut["cut"])
    ]


BALANCE_GAP = 0.15  # accuracy this far above balanced accuracy: the rare classes are mostly missed
HINT = "`class_weight=balanced` weighs every class the same in total"


def imbalance_warnings(model: Predictor, ds: Dataset | EngineTable, metrics: dict[str, Any]) -> list[str]:
    """A model that predicts one class of several, and measured accuracy far above balanced
    accuracy, each with the way out (unless the classes are weighted already)."""
    if ds.regression or getattr(ds, "class_weights", None) is not None:
        return []
    out = []
    predicted = predicted_classes(model)
    if predicted is not None and len(predicted) == 1:
        (only,) = predicted
        share = float(ds.class_counts()[ds.classes.index(only)]) / float(ds.total_weight)
        out.append(
            f"the model predicts only '{only}' ({share:.0%} of the training rows), never the other "
            f"{counted(len(ds.classes) - 1, 'class')}; {HINT}"
        )
    for where in ("cv", "test"):
        measured = metrics.get(where, {})
        figures = measured.get("summary", measured)
        accuracy, balanced = (_mean(figures.get(k)) for k in ("accuracy", "balanced_accuracy"))
        if accuracy is not None and balanced is not None and accuracy - balanced > BALANCE_GAP:
            label = f"`{where}`"
            out.append(
                f"{label}: balanced accuracy {balanced:.2f} is far below accuracy {accuracy:.2f} (the rare "
                f"classes are mostly missed); {HINT}"
            )
    return out


def _mean(figure: object) -> float | None:
    """A metric as a number: itself, or a cross-validation summary's mean."""
    if isinstance(figure, dict):
        figure = figure.get("mean")
    return float(figure) if isinstance(figure, int | float) else None


def predicted_classes(model: Predictor) -> set[str] | None:
    """The classes a model can predict, or None where that is not read off its parts (a forest)."""
    if isinstance(model, DecisionList | RuleSet):
        return {r.prediction for r in (*model.rules, *((model.default,) if model.default else ()))}
    if isinstance(model, Tree):
        leaves = model.nodes.leaves
        return {model.classes[int(k)] for k in model.nodes.value[leaves].argmax(axis=1)}
    return None


def target_note(ds: Dataset, predicts_numbers: bool) -> str | None:
    """What a person should be told about how the target was typed (see :func:`prepare`),
    in one line: the reading the model records (``schema.target.reading``) and the way to
    the other one."""
    reading = ds.schema.target.reading
    if ds.regression:
        why = f" ({reading})" if reading is not None else ""
        return (
            f"'{ds.target}' is a number{why}: predicting its value (`target_type=classification` or `target_bins` K "
            "for classes)"
        )
    if predicts_numbers and reading is not None and reading.startswith("integer codes"):
        return (
            f"'{ds.target}' holds {reading}: predicting them as classes (`target_type=regression` to predict a number)"
        )
    return None


def partial_dependence(
    model: Forest, ds: Dataset, feature: str, cls: str | None = None, grid_points: int = 20
) -> tuple[list[float | str], str, list[float]]:
    """A forest's partial dependence on ``feature``: grid, the curve's name and its values."""
    class_index = None
    if not model.regression:
        label = cls if cls is not None else model.classes[0]
        if label not in model.classes:
            raise ParamError(f"`cls` '{label}' is not one of the classes: {', '.join(model.classes)}")
        class_index = model.classes.index(label)
    # the forest learner imports the tree grower and its tuning (30 ms): not on every command's path
    from rulecli.learners.forest import partial_dependence as forest_partial_dependence

    grid, values = forest_partial_dependence(model, ds, feature, class_index, grid_points)
    column = "mean_prediction" if model.regression else f"f_{model.classes[class_index or 0]}"
    return grid, column, values


HOLDOUT = 0.25  # the share of the rows distill keeps out of learning to measure on
# rows made up per row learned from, labelled by the teacher: the teacher's answers on the
# rows it learned from are their true classes, and teach nothing new. On the wide
# benchmark's splits where a forest beats ripper by over two points, ripper's rules learned
# with two per row are 0.7913 accurate at ripper's own rule count, ripper's 0.7785
# (bench/distill.py; without them 0.7771)
SYNTHETIC = 2.0
JITTER = 0.1  # a made-up row's numbers move by this many standard deviations of their column


def jittered(rows: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """``n`` rows made up from ``rows``: each a random row with its decimal numbers moved by
    Gaussian noise of ``JITTER`` times their column's standard deviation (the idea of MUNGE,
    Bucila et al. 2006: a model is asked about cases near the data that the data do not
    hold, and the rules learn where it draws its boundaries). Values swapped in from other
    rows instead, at chance 0.3, made cases far from the data and rules less accurate."""
    rng = np.random.default_rng(seed)
    base = rows[rng.integers(0, rows.height, n)]
    columns = []
    for name, dtype in rows.schema.items():
        column = base[name]
        if dtype.is_float():
            spread = rows[name].std()
            column = column + pl.Series(rng.normal(0.0, JITTER * float(spread or 0.0), n))
        columns.append(column)
    return pl.DataFrame(columns)


def distill(
    teacher: Predictor,
    data: Data,
    *,
    learner: str = "ripper",
    test: Data | None = None,
    holdout: float = HOLDOUT,
    synthetic: float = SYNTHETIC,
    seed: int = 0,
    progress: Progress | None = None,
    **params: Any,
) -> Predictor:
    """A rule model that imitates ``teacher`` (a forest, or any classifier rulecli scores):
    ``learner`` learns from the rows of ``data`` with the teacher's predictions as their
    class (Craven & Shavlik 1996: the teacher labels the examples the rules learn from), and
    its fidelity (how often it predicts what the teacher does) and both models' accuracy
    (where the table holds the true class) are measured on ``test``, or else on a hashed
    ``holdout`` share of ``data`` kept out of learning (``training.distilled``)."""
    if not teacher.classes:
        raise ParamError("distill imitates a classifier; this model predicts numbers")
    if test is None and not (0 < holdout < 1):
        raise ParamError(f"must be a share of the rows in (0, 1), got {holdout:g}", param="holdout")
    table = _taught(teacher, data)
    features = list(teacher.info.schema.feature_names) if teacher.info.schema is not None else []
    features = features or [c for c in table.columns if c not in (TAUGHT, teacher.target)]
    if test is None:
        held = pl.Series(hash_sampled(np.arange(table.height), sample_seed(seed), holdout))
        learn_rows, measured, measured_on = table.filter(~held), table.filter(held), f"a hashed {holdout:g} of the rows"
    else:
        learn_rows, measured = table, _taught(teacher, test)
        measured_on = source_label(test) if isinstance(test, str | Path) else "the test table"
    taught = learn_rows.filter(pl.col(TAUGHT).is_not_null())
    if taught.height < 2 or taught[TAUGHT].n_unique() < 2:
        raise InputError(
            f"{source_label(data) if isinstance(data, str | Path) else '<data>'}: the teacher predicts "
            "one class (or none) on the rows to learn from; there is nothing to imitate"
        )
    rows = taught.select(features)
    if synthetic > 0:
        made = jittered(rows, round(synthetic * rows.height), seed)
        rows = pl.concat([rows, made], how="vertical_relaxed")
        labels = pl.concat([taught[TAUGHT], predict(teacher, made)["prediction"].cast(pl.String)])
    else:
        labels = taught[TAUGHT]
    student_rows = rows.with_columns(labels.alias(teacher.target)).filter(pl.col(teacher.target).is_not_null())
    if "seed" in learners.get(learner).params.__dataclass_fields__:
        params.setdefault("seed", seed)
    student = fit(learner, student_rows, target=teacher.target, features=features, progress=progress, **params)
    record = _fidelity(teacher, student, measured, measured_on)
    record |= {"teacher": teacher.info.algorithm, "rows": taught.height, "synthetic_rows": rows.height - taught.height}
    training = {**student.info.training, "distilled": record}
    return dataclasses.replace(student, info=dataclasses.replace(student.info, training=training))


TAUGHT = "__rulecli_taught"


def _taught(teacher: Predictor, data: Data) -> pl.DataFrame:
    """``data`` as the teacher reads it, with the teacher's prediction of each row (``TAUGHT``)."""
    lf, label = scan_for(teacher, data)
    table = io.collect(lf, label)
    predicted = predict(teacher, table)["prediction"].cast(pl.String)
    return table.with_columns(predicted.alias(TAUGHT))


def _fidelity(teacher: Predictor, student: Predictor, rows: pl.DataFrame, measured_on: str) -> dict[str, Any]:
    """How often ``student`` predicts what ``teacher`` does on ``rows``, and each one's accuracy
    where ``rows`` hold the true class."""
    said = predict(student, rows.drop(TAUGHT))["prediction"].cast(pl.String)
    taught = rows[TAUGHT]
    out: dict[str, Any] = {"measured_on": measured_on, "measured_rows": rows.height}
    out["fidelity"] = float((said == taught).fill_null(False).mean()) if rows.height else None
    if teacher.target in rows.columns and rows.height:
        truth = rows[teacher.target].cast(pl.String)
        out["accuracy"] = {
            "rules": float((said == truth).fill_null(False).mean()),
            "teacher": float((taught == truth).fill_null(False).mean()),
        }
    return out
