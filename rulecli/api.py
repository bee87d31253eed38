"""rulecli's Python API: everything a command does, callable from Python.

>>> import rulecli
>>> model = rulecli.fit("oner", "sample_data/house.csv", target="value")
>>> rulecli.predict(model, "sample_data/house.csv")["prediction"].to_list()[:3]
['low', 'high', 'high']
>>> round(rulecli.evaluate(model, "sample_data/house.csv")["accuracy"], 2)
0.7

Data may be a path (any format rulecli reads), a Polars ``DataFrame`` or a prepared
:class:`~rulecli.dataset.Dataset`; models are the objects ``fit`` and ``load`` return.
The commands are thin layers over these functions.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rulecli import budget, engines, io, learners
from rulecli.dataset import Dataset, DataSpec, prepare_dataset, read_weights
from rulecli.discretize import METHODS, SUPERVISED, label_expr, learn_cuts, min_bucket_for
from rulecli.display import counted
from rulecli.drift import drift_warnings, feature_drift, psi_failures
from rulecli.engines import EngineOptions, EngineTable, is_engine_table, open_table
from rulecli.errors import InputError, ModelFormatError, ParamError
from rulecli.held_out import cross_validate, evaluate_model, is_regression, truth_expr
from rulecli.html_report import Curve
from rulecli.html_report import render as render_report
from rulecli.metrics import (
    GATE_ON,
    Gate,
    cost_matrix,
    drift_failures,
    expected_cost,
    gate_failures,
    leaf_reports,
    rule_drift,
    rule_reports,
    violations,
)
from rulecli.model.compile import (
    DEFAULT_RULE,
    Predictor,
    check_data,
    prediction_frame,
    read_dtypes_for,
)
from rulecli.model.core import DecisionList, Rule, RuleSet, dated_rule, schema_units
from rulecli.model.costs import cheapest
from rulecli.model.diff import ModelDiff
from rulecli.model.diff import diff as model_diff
from rulecli.model.export import TARGETS, to_polars, to_python, to_sql
from rulecli.model.pmml import to_pmml
from rulecli.model.serde import dumps, loads
from rulecli.model.text import forest_summary, parse_text, render_conditions, render_name, render_text, render_tree
from rulecli.model.tree import Forest, Tree, decision_list, leaf_rules
from rulecli.params import Params, fields_of
from rulecli.schema import Cuts, is_numeric_dtype
from rulecli.search.progress import Progress
from rulecli.search.rule_stats import recounted
from rulecli.stats import hash_sampled, sample_seed

Data = str | Path | pl.DataFrame | Dataset
# the keywords of prepare and fit beyond a learner's parameters, each declared once: which
# columns and how typed (DataSpec), how the file is read (ReadOptions), where rows are
# counted (EngineOptions)
DATA_KEYS = frozenset(f.name for f in fields_of(DataSpec))
READ_KEYS = frozenset(f.name for f in fields_of(io.ReadOptions))
ENGINE_KEYS = frozenset(f.name for f in fields_of(EngineOptions))


def source_label(path: str | Path) -> str:
    return "<stdin>" if str(path) == io.STDIO else str(path)


# ---------------------------------------------------------------------------- data


def _as_text(columns: Sequence[str]) -> dict[str, pl.DataType]:
    """Columns read as the text the file holds (a categorical feature written as digits)."""
    return {c: pl.String() for c in columns}


def read_table(path: str | Path, *, text_columns: Sequence[str] = (), **read: Any) -> pl.DataFrame:
    """A whole table, read as ``rulecli`` reads training data: ``text_columns`` kept as text,
    ``read`` the keywords of :class:`~rulecli.io.ReadOptions` (format, missing values, a CSV
    file's delimiter, encoding, header and leading lines)."""
    lf = io.scan_table(str(path), io.ReadOptions(**read), schema_overrides=_as_text(text_columns))
    return io.collect(lf, source_label(path))


def prepare(
    data: Data, *, numeric_target: bool = False, engine: str | EngineOptions | None = None, **options: Any
) -> Dataset | EngineTable:
    """A training table typed and labelled; its ``warnings`` say what was skipped and why.

    ``options`` are the keywords of :class:`~rulecli.dataset.DataSpec` (which columns and
    how typed: ``target``, ``features``, ``exclude``, ``use``, ``categorical``, ``numeric``,
    ``target_bins``, ``target_type``, ``weights``, ``class_weight``), of
    :class:`~rulecli.io.ReadOptions` (how a file is read: ``input_format``,
    ``null_values``, ``delimiter``, ``encoding``, ``no_header``, ``skip_lines``) and of
    :class:`~rulecli.engines.EngineOptions` beside ``engine`` (``memory_limit`` …).

    ``target_type`` forces ``"classification"`` or ``"regression"``; by default a float
    target, or integers with more than 50 distinct values, is a number (for the learners
    that predict numbers: tree, forest) and any other target holds classes. ``weights``
    names a column of row weights (a weight k counts the row k times, 0 leaves it out);
    ``class_weight`` multiplies them per class: ``"balanced"`` or ``"a=2,b=1"``. Columns
    that identify rows (text differing on nearly every row, whole numbers counting the rows)
    and text of more than 50 values are left out (``schema.left_out`` says which), unless
    named in ``use`` or ``features``. Date and date-and-time columns (ISO text, or Date
    and Datetime columns) are ordered features: rules compare them as dates.

    ``engine="duckdb"`` (or :class:`~rulecli.engines.EngineOptions`) leaves the rows of a
    Parquet file, glob or DuckDB table in DuckDB: the result holds the schema and counts
    what the learners ask (close it with :func:`release`)."""
    spec_keys, read_keys, engine_keys, unknown = _sorted_options(options)
    if unknown:
        known = sorted(DATA_KEYS | READ_KEYS | ENGINE_KEYS)
        raise ParamError(f"no data option '{next(iter(unknown))}' (there are: {', '.join(known)})")
    if isinstance(data, Dataset) or is_engine_table(data):
        return data
    data = as_data(data)
    spec = DataSpec(numeric_target=numeric_target, **spec_keys)
    read = io.ReadOptions(**read_keys)
    where = engine_options(engine, engine_keys)
    if where is not None and where.engine != "memory":
        return _engine_table(data, spec, where, read)
    if isinstance(data, pl.DataFrame):
        return prepare_dataset(data, spec)
    df = read_table(data, text_columns=spec.categorical, **read_keys)
    return prepare_dataset(df, spec, source=source_label(data))


def _sorted_options(options: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Keywords sorted by their declaration: data, read, engine, and any other."""
    groups = (DATA_KEYS, READ_KEYS, ENGINE_KEYS)
    return (
        *({k: v for k, v in options.items() if k in keys} for keys in groups),
        {k: v for k, v in options.items() if not any(k in keys for keys in groups)},
    )


def engine_options(engine: str | EngineOptions | None, given: dict[str, Any]) -> EngineOptions | None:
    """Where rows are counted: ``engine`` by name or as options, with the other engine
    keywords ``given`` (None: nothing was said, in memory)."""
    if isinstance(engine, EngineOptions):
        return dataclasses.replace(engine, **given) if given else engine
    if engine is None and not given:
        return None
    return EngineOptions(**({} if engine is None else {"engine": engine}), **given)


def _engine_table(data: Any, spec: DataSpec, options: EngineOptions, read: io.ReadOptions) -> EngineTable:
    """``data`` left where it is, in the engine ``options`` name (a file the engine cannot
    read is copied to Parquet first)."""
    if isinstance(data, pl.DataFrame):
        raise ParamError(f"`engine={options.engine}` reads files and tables; a DataFrame is in memory already")

    def reader(out: str) -> None:
        io.parquet_copy(str(data), out, read, schema_overrides=_as_text(spec.categorical))

    return open_table(str(data), spec, options, input_format=read.input_format, reader=reader)


def as_data(data: Any) -> Any:
    """A pandas DataFrame or a PyArrow Table as a Polars frame; a path, a Polars frame or a
    prepared table as it is; anything else refused in one line (a pandas frame was taken for
    a file name). Known by module and name: neither library is imported for it."""
    if isinstance(data, str | Path | pl.DataFrame | pl.LazyFrame | Dataset) or is_engine_table(data):
        return data
    library, kind = type(data).__module__.split(".")[0], type(data).__name__
    if library == "pandas" and kind == "DataFrame":
        return pl.from_pandas(data)
    if library == "pyarrow" and kind in ("Table", "RecordBatch"):
        return pl.from_arrow(data)
    raise ParamError(
        f"data must be a file path, a Polars or pandas DataFrame, a PyArrow Table or a prepared table, not {kind}"
    )


# ---------------------------------------------------------------------------- learning


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
    if not is_engine_table(ds) or (ds.engine in spec.engines and ds.sample_rows is None):
        return with_data_record(spec.fit(ds, params, progress=progress), ds)
    seed = getattr(params, "seed", 0)
    rows = engines.SAMPLE_ROWS if ds.sample_rows is None else ds.sample_rows
    sample = ds.sample(sample_seed(seed), min(1.0, rows / ds.n_rows))
    if sample.n_rows < 2 or len(set(sample.y.tolist())) < 2:
        raise InputError(f"{ds.source}: the engine's sample holds a single class; pass a larger `sample_rows`")
    model = spec.fit(sample, params, progress=progress)
    note = {"rows": sample.n_rows, "of_rows": ds.n_rows, "drawn_by": "a hash of the row numbers", "seed": seed}
    learned_from = model.info.training.get("sample")
    if isinstance(learned_from, dict):  # the learner took a smaller sample of the engine's
        note["rows"] = learned_from["rows"]
    if isinstance(model, DecisionList | RuleSet):
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
    spec_keys, read_keys, engine_keys, params = _sorted_options(options)
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
    matrix = None if costs is None else _costs(costs, ds.classes)
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
    where = engine if isinstance(engine, EngineOptions) or engine is None else EngineOptions(engine=engine)
    check_engine(where, cv=cv)
    read = {k: v for k, v in options.items() if k in READ_KEYS}
    ds = prepare(data, numeric_target=spec.numeric_target, engine=where, **options)
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
            read=io.ReadOptions(**read),
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
    """What a person should be told about how the target was typed (see :func:`prepare`)."""
    if ds.regression:
        return (
            f"'{ds.target}' is a number: predicting its value (`target_type=classification` or `target_bins` K "
            "for classes)"
        )
    if predicts_numbers and all(c.lstrip("-").isdigit() for c in ds.classes):
        return (
            f"'{ds.target}' holds {len(ds.classes)} integer codes: predicting them as classes "
            "(`target_type=regression` to predict a number)"
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


# ---------------------------------------------------------------------------- models


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
    return render_text(model)


def logic_text(model: Predictor) -> str:
    """The model's rules without their statistics (covers, correct, class counts,
    probabilities, leaf rows): what a git textconv driver shows, so a retrained model's
    diff holds only the rules whose logic changed. A regression tree's leaves keep their
    values, a forest its summary."""
    if isinstance(model, Forest):
        return rules_text(model)
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
    if isinstance(model, Forest) or (isinstance(model, Tree) and model.regression):
        raise ParamError(f"{path}: a {'forest' if isinstance(model, Forest) else 'regression tree'} is saved as .json")
    return rules_text(model)


def save(model: Predictor, path: str | Path) -> None:
    """Save atomically: a complete file or the old one, never a partial one."""
    io.write_text(str(path), model_text(model, path))


# ---------------------------------------------------------------------------- scoring


def scan_for(
    model: Predictor, data: str | Path | pl.DataFrame | pl.LazyFrame, *, label: str | None = None, **read: Any
) -> tuple[pl.LazyFrame, str]:
    """The table ``model`` will score, read the way the model compares its columns, checked
    (``read``: the keywords of :class:`~rulecli.io.ReadOptions`)."""
    data = as_data(data)
    options = io.ReadOptions(**read)
    if isinstance(data, pl.DataFrame | pl.LazyFrame):
        lf, label = data.lazy(), label or "<data>"
    else:
        lf = io.scan_table(str(data), options, schema_overrides=read_dtypes_for(model))
        label = source_label(data)
    check_data(model, lf.collect_schema(), label)
    return lf, label


def prediction_plan(
    model: Predictor,
    data: str | Path | pl.DataFrame | pl.LazyFrame,
    *,
    keep: Sequence[str] = (),
    keep_all: bool = False,
    proba: bool = False,
    explain: bool = False,
    **read: Any,
) -> tuple[pl.LazyFrame, str]:
    """The lazy prediction table (streams when sunk to a file) and the data's label;
    ``keep`` copies those input columns in front of it, ``keep_all`` every input column."""
    lf, label = scan_for(model, data, **read)
    columns = lf.collect_schema()
    for name in keep:
        if name not in columns:
            close = difflib.get_close_matches(name, list(columns), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise InputError(f"{label}: `keep` column '{name}' is not in the data{hint}")
    if keep_all:
        keep = list(columns)
    written = {
        "prediction",
        *((f"proba_{c}" for c in model.classes) if proba else ()),
        *(("rule", "rule_text") if explain else ()),
    }
    clash = [name for name in keep if name in written]
    if clash:
        raise InputError(f"{label}: the data already has a column '{clash[0]}' that predict writes; choose with `keep`")
    return prediction_frame(model, lf, keep=tuple(keep), proba=proba, explain=explain), label


def drift(
    model: Predictor, data: str | Path | pl.DataFrame | pl.LazyFrame, *, truth: str | None = None, **read: Any
) -> list[str]:
    """What differs in ``data`` from the data ``model`` was trained on (see :mod:`rulecli.drift`),
    one line each; ``truth``: the column holding the true classes, if any."""
    lf, label = scan_for(model, data, **read)
    if truth is not None and truth not in lf.collect_schema():
        truth = None
    return drift_warnings(model, lf, label, truth=truth)


def predict(model: Predictor, data: str | Path | pl.DataFrame | pl.LazyFrame, **options: Any) -> pl.DataFrame:
    """Predictions (``prediction``, plus ``keep`` columns, ``proba``/``explain`` columns) as a frame."""
    plan, label = prediction_plan(model, data, **options)
    return io.collect(plan, label)


def _polars_failure(label: str, exc: Exception) -> InputError:
    return InputError(f"{label}: {str(exc).strip().splitlines()[0]}")


def evaluate(
    model: Predictor,
    data: str | Path | pl.DataFrame | pl.LazyFrame,
    *,
    target: str | None = None,
    per_rule: bool = True,
    gates: Sequence[Gate] = (),
    violations_out: str | None = None,
    baseline: bool = False,
    max_rule_drift: float | None = None,
    min_rule_coverage: float | None = None,
    max_coverage_ratio: float | None = None,
    gate_on: str = "point",
    reference: str | Path | pl.DataFrame | pl.LazyFrame | None = None,
    max_psi: float | None = None,
    weights: str | None = None,
    costs: Data | None = None,
    max_cost: float | None = None,
    **read: Any,
) -> dict[str, Any]:
    """Metrics of ``model`` on labelled data, each row counted by the column ``weights`` if
    given (once otherwise); with ``per_rule`` each rule's statistics; with
    ``gates`` a ``gates`` entry (``passed``, ``failures``); with ``violations_out`` the rows
    a rule covers but gets wrong written to that file. With ``baseline`` (implied by the two
    rule drift gates) each rule's coverage and accuracy here against its training
    statistics, tested (:func:`rulecli.metrics.rule_drift`). With ``costs`` (a table: the true
    class in its first column, a column per predicted class) the mean cost per row
    (``expected_cost``), held against ``max_cost``."""
    lf, label = scan_for(model, data, **read)
    target_name = target or model.target
    if target_name not in lf.collect_schema():
        raise InputError(f"{label}: target column '{target_name}' is not in the data (name it with `target`)")
    truth = truth_expr(model, target)
    regression = is_regression(model)
    has_rules = isinstance(model, DecisionList | RuleSet) or (isinstance(model, Tree) and not regression)
    drift_gates = (max_rule_drift, min_rule_coverage, max_coverage_ratio)
    baseline = baseline or any(bound is not None for bound in drift_gates)
    _check_evaluation(model, gates, gate_on, drift_gates, baseline and not has_rules, max_psi, reference)
    _check_costs(costs, max_cost, regression)
    matrix = None if costs is None else _costs(costs, model.classes)  # a bad table is refused before any pass
    gates = [*gates, Gate("expected_cost", max_cost, "`max_cost`", upper=True)] if max_cost is not None else gates
    with_rules = (per_rule or baseline) and has_rules
    weight = None if weights is None else _weight_expr(lf, weights, label)
    metrics, rules = _measured(model, lf, truth, weight, with_rules, violations_out, label, target_name)
    if matrix is not None:
        metrics["expected_cost"] = expected_cost(metrics["confusion"], matrix)
    payload = (
        {**metrics, "rules": [r.as_dict(metrics["rows"]) for r in rules]} if with_rules and per_rule else dict(metrics)
    )
    failures = gate_failures(metrics, list(gates), gate_on) if gates else []
    if baseline:
        payload["baseline"] = rule_drift(model, rules, metrics["rows"])
        failures += drift_failures(payload["baseline"], *drift_gates)
    if reference is not None:
        payload["feature_drift"] = feature_drift(model, scan_for(model, reference, **read)[0], lf)
        failures += psi_failures(payload["feature_drift"], max_psi) if max_psi is not None else []
    if gates or max_psi is not None or any(bound is not None for bound in drift_gates):  # max_cost is a gate
        payload["gates"] = {"passed": not failures, "failures": failures}
    return payload


def _measured(
    model: Predictor,
    lf: pl.LazyFrame,
    truth: pl.Expr,
    weight: pl.Expr | None,
    with_rules: bool,
    violations_out: str | None,
    label: str,
    target_name: str,
) -> tuple[dict[str, Any], list[Any]]:
    """The model's metrics on ``lf``, its rules' (or leaves') reports if asked for, and the
    rows it gets wrong written to ``violations_out``."""
    try:
        metrics = evaluate_model(model, lf, truth, weight)
        if metrics["rows"] == 0:
            # metrics of nothing (accuracy 0, RMSE 0) would fail or pass a gate by accident
            raise InputError(f"{label}: no rows with a value of '{target_name}' to evaluate on")
        rules = (
            []
            if not with_rules
            else leaf_reports(model, lf, truth, weight)
            if isinstance(model, Tree)
            else rule_reports(model, lf, truth, weight)
        )  # type: ignore[arg-type]
        if violations_out is not None:
            io.write_table(violations(model, lf, truth), violations_out)
    except pl.exceptions.PolarsError as exc:
        raise _polars_failure(label, exc) from exc
    return metrics, rules


def _check_costs(costs: object, max_cost: float | None, regression: bool) -> None:
    if max_cost is not None and costs is None:
        raise ParamError("`max_cost` holds the mean cost per row against a bound: give the costs with `costs`")
    if costs is not None and regression:
        raise ParamError("`costs` weighs wrong classes; this model predicts numbers")


def _check_evaluation(
    model: Predictor,
    gates: Sequence[Gate],
    gate_on: str,
    drift_gates: tuple[float | None, float | None, float | None],
    baseline_without_rules: bool,
    max_psi: float | None,
    reference: object,
) -> None:
    """Refuse gates and bounds that cannot be held, before any pass over the data."""
    if gate_on not in GATE_ON:
        raise ParamError(f"`gate_on` must be one of {', '.join(GATE_ON)}, got '{gate_on}'")
    _check_gates(gates, is_regression(model))
    max_rule_drift, min_rule_coverage, max_coverage_ratio = drift_gates
    for option, bound in (("`max_rule_drift`", max_rule_drift), ("`min_rule_coverage`", min_rule_coverage)):
        if bound is not None and not (math.isfinite(bound) and bound >= 0):
            raise ParamError(f"{option} must be a number of at least 0, got {bound}")
    if max_coverage_ratio is not None and not (math.isfinite(max_coverage_ratio) and max_coverage_ratio > 1):
        raise ParamError(f"`max_coverage_ratio` must be a number above 1, got {max_coverage_ratio}")
    if max_psi is not None and not (math.isfinite(max_psi) and max_psi > 0):
        raise ParamError(f"`max_psi` must be a number above 0, got {max_psi}")
    if max_psi is not None and reference is None:
        raise ParamError("`max_psi` holds the columns against a table: give it with `reference` (the training table)")
    if baseline_without_rules:
        kind = "a forest" if isinstance(model, Forest) else "a regression tree"
        raise ParamError(f"`baseline` compares rules with their training statistics; {kind} has no such rules")


def _costs(costs: Data, classes: Sequence[str]) -> dict[str, dict[str, float]]:
    """The cost table ``costs`` (a file or a frame) as true class -> predicted class -> cost."""
    if isinstance(costs, str | Path):
        table, label = read_table(costs), source_label(costs)
    else:
        table, label = as_data(costs), "the cost table"
        table = table.collect() if isinstance(table, pl.LazyFrame) else table
    return cost_matrix(table, classes, label)


def _read_for_both(
    old: Predictor, new: Predictor, data: str | Path | pl.DataFrame, read: dict[str, Any]
) -> list[tuple[pl.DataFrame, str]]:
    """The table read the way each model compares its columns (stdin is read only once)."""
    tables: list[tuple[pl.DataFrame, str]] = []
    for model in (old, new):
        source = tables[0][0] if tables and isinstance(data, str) and data == io.STDIO else data
        lf, label = scan_for(model, source, **({**read, "label": tables[0][1]} if tables else read))
        try:
            tables.append((lf.collect(), label))
        except pl.exceptions.PolarsError as exc:
            raise _polars_failure(label, exc) from exc
    return tables


def _weight_expr(lf: pl.LazyFrame, name: str, label: str) -> pl.Expr:
    """The weight column as a number per row, checked as training checks it."""
    if name not in lf.collect_schema():
        raise InputError(f"{label}: weight column '{name}' given with `weights` is not in the data")
    try:
        column = lf.select(name).collect()
    except pl.exceptions.PolarsError as exc:
        raise _polars_failure(label, exc) from exc
    read_weights(column, name, label, "evaluate")
    if is_numeric_dtype(column.schema[name]):
        return pl.col(name).cast(pl.Float64)
    return pl.col(name).cast(pl.String).str.strip_chars().cast(pl.Float64)


REGRESSION_GATES = ("rmse", "mae", "r2")


def _check_gates(gates: Sequence[Gate], regression: bool) -> None:
    for gate in gates:
        if gate.threshold is not None and not math.isfinite(gate.threshold):
            raise ParamError(f"{gate.option} must be a finite number, got {gate.threshold}")
    wrong = [g for g in gates if g.threshold is not None and (g.metric in REGRESSION_GATES) != regression]
    if wrong:
        kind = "a number (regression)" if regression else "classes"
        raise ParamError(f"{wrong[0].option} does not apply: this model predicts {kind}")


def metrics_json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, indent=2, sort_keys=True, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------- discretize and export


@dataclass(frozen=True)
class Discretized:
    frame: pl.LazyFrame
    cuts: list[Cuts]
    target: str | None  # the class column the cuts were learned with
    bins: int  # the intervals asked for, or min-bucket's minimum bucket


def discretize(
    df: pl.DataFrame,
    *,
    method: str = "equal-frequency",
    bins: int = 5,
    min_bucket: int | None = None,
    target: str | None = None,
    columns: Sequence[str] = (),
    cuts: list[Cuts] | None = None,
    source: str = "<data>",
    cuts_source: str = "the cuts",
) -> Discretized:
    """``df`` with numeric columns replaced by interval labels, the cuts used and the target.

    Given ``cuts`` (saved earlier), they are applied; otherwise they are learned on
    ``columns`` (default: every numeric column but the target). ``mdlp`` and
    ``min-bucket`` use the target (default: the last column); ``min-bucket`` with at least
    ``min_bucket`` rows of an interval's class (default: as OneR chooses it for the rows).
    """
    if method == "min-bucket":
        bins = min_bucket if min_bucket is not None else min_bucket_for(df.height)
    if method not in METHODS:
        raise ParamError(f"must be one of {', '.join(METHODS)}, got '{method}'", param="method")
    if cuts is not None:
        for c in cuts:
            if c.column not in df.columns:
                raise InputError(f"{source}: column '{c.column}' named in {cuts_source} is not in the data")
    else:
        if target is None and method in SUPERVISED:
            target = df.columns[-1]
        if target is not None and target not in df.columns:
            raise InputError(f"{source}: target column '{target}' is not in the data")
        chosen = list(columns) or [c for c in df.columns if c != target and is_numeric_dtype(df.schema[c])]
        for name in chosen:
            if name not in df.columns:
                raise InputError(f"{source}: column '{name}' is not in the data")
            if not is_numeric_dtype(df.schema[name]):
                raise InputError(f"{source}: column '{name}' is not numeric ({df.schema[name]})")
        cuts = learn_cuts(df, chosen, method, bins=bins, target=target)
    return Discretized(df.lazy().with_columns([label_expr(c) for c in cuts]), cuts, target, bins)


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


# ---------------------------------------------------------------------------- diff


SAMPLE_ROWS = 5


def diff(
    old: Predictor,
    new: Predictor,
    data: str | Path | pl.DataFrame | None = None,
    *,
    changed_rows: str | None = None,
    weights: str | None = None,
    **read: Any,
) -> tuple[ModelDiff, dict[str, Any] | None]:
    """``old`` against ``new`` rule by rule (:mod:`rulecli.model.diff`); with ``data``, each
    rule's coverage and accuracy there under both models (rows counted by the column
    ``weights``, if given) and the rows whose prediction changes (all of them written to
    ``changed_rows``, if given)."""
    if weights is not None and data is None:
        raise ParamError("`weights` needs `data`: the rules are counted on the rows of a table")
    if old.target != new.target:
        raise ParamError(f"the models predict different targets ('{old.target}', '{new.target}'): nothing to compare")
    if changed_rows is not None:
        if data is None:
            raise ParamError("`changed_rows` needs `data`: the rows whose prediction changes are rows of a table")
        io.table_output(changed_rows)
    structure = model_diff(old, new)
    if data is None:
        return structure, None
    tables = _read_for_both(old, new, data, read)
    table, label = tables[0]
    before = prediction_frame(old, table.lazy()).collect().get_column("prediction")
    after = prediction_frame(new, tables[1][0].lazy()).collect().get_column("prediction")
    moved = before.ne_missing(after)
    rows = table.with_row_index("row", offset=1).filter(moved)
    report: dict[str, Any] = {
        "rows": table.height,
        "changed": int(moved.sum()),
        "sample": [
            {"row": int(r), "old": o, "new": n}
            for r, o, n in zip(
                rows.get_column("row").head(SAMPLE_ROWS).to_list(),
                before.filter(moved).head(SAMPLE_ROWS).to_list(),
                after.filter(moved).head(SAMPLE_ROWS).to_list(),
                strict=True,
            )
        ],
    }
    has_truth = old.target in table.columns
    weight = None if weights is None else _weight_expr(table.lazy(), weights, label)
    report["old_rules"] = _rule_stats_on(old, table, has_truth, weight)
    report["new_rules"] = _rule_stats_on(new, table, has_truth, weight)
    if changed_rows is not None:
        written = table.filter(moved).with_columns(
            before.filter(moved).alias("old_prediction"), after.filter(moved).alias("new_prediction")
        )
        io.write_table(written, changed_rows)
    return structure, report


def _rule_stats_on(
    model: Predictor, table: pl.DataFrame, has_truth: bool, weight: pl.Expr | None = None
) -> list[dict[str, Any]]:
    """Per rule (in the model's order, the default left out): rows it decides on ``table``
    (matches, for a rule set), and of those how many it gets right when the table holds the
    truth — ``evaluate``'s per-rule counts (:func:`rulecli.metrics.rule_reports`), rows
    counted by ``weight``."""
    if isinstance(model, Forest) or (isinstance(model, Tree) and model.regression):
        return []
    # without the truth every row still counts as covered: a stand-in label no class carries
    truth = truth_expr(model) if has_truth else pl.lit("\x00no truth", dtype=pl.String)
    lf = table.lazy()
    reports = (
        leaf_reports(model, lf, truth, weight) if isinstance(model, Tree) else rule_reports(model, lf, truth, weight)
    )
    out = []
    for r in (r for r in reports if r.rule != DEFAULT_RULE):
        entry: dict[str, Any] = {"covered": r.n_covered}
        if has_truth:
            entry |= {"correct": r.n_correct, "accuracy": r.n_correct / r.n_covered if r.n_covered else None}
        out.append(entry)
    return out


# ---------------------------------------------------------------------------- the HTML report

CURVES = 3  # partial-dependence curves drawn for a forest: its most important features
CURVE_ROWS = 300  # rows averaged over at each grid value
CURVE_POINTS = 20


def report(
    model: Predictor,
    data: str | Path | pl.DataFrame,
    *,
    target: str | None = None,
    baseline: bool = False,
    weights: str | None = None,
    model_label: str = "model",
    reference: str | Path | pl.DataFrame | None = None,
    **read: Any,
) -> str:
    """A self-contained HTML page about ``model`` on ``data`` (:mod:`rulecli.html_report`); its
    metrics and rule statistics count rows by the column ``weights``, if given; with
    ``reference``, each column the model reads held against that table."""
    lf, label = scan_for(model, data, **read)
    try:
        frame = lf.collect()
    except pl.exceptions.PolarsError as exc:
        raise _polars_failure(label, exc) from exc
    payload = evaluate(
        model, frame, target=target, per_rule=True, baseline=baseline, weights=weights, label=label, reference=reference
    )
    importance, curves = None, []
    if isinstance(model, Forest):
        raw = model.info.training.get("importance") if isinstance(model.info.training, dict) else None
        importance = {str(k): float(v) for k, v in raw.items()} if isinstance(raw, dict) else None
        if importance:
            top = [name for name, _ in sorted(importance.items(), key=lambda kv: -kv[1])[:CURVES]]
            curves = [_curve(model, frame, name) for name in top if name in frame.columns]
    return render_report(
        model,
        payload,
        model_label=model_label,
        data_label=label,
        importance=importance,
        curves=[c for c in curves if c is not None],
    )


def _curve(model: Forest, frame: pl.DataFrame, feature: str) -> Curve | None:
    """The mean prediction over (the first 300) rows with ``feature`` set to each grid value."""
    sample = frame.head(CURVE_ROWS)
    schema = model.info.schema
    kind = schema.feature(feature) if schema is not None else None
    dtype = frame.schema[feature]
    if kind is not None and kind.levels:
        grid: list[float | str] = list(kind.levels[:CURVE_POINTS])
    else:
        present = sample.get_column(feature).cast(pl.Float64, strict=False).drop_nulls().drop_nans()
        if present.is_empty():
            return None
        grid = sorted({float(present.quantile(q / (CURVE_POINTS - 1))) for q in range(CURVE_POINTS)})
    stacked = pl.concat(
        [sample.with_columns(pl.lit(value).cast(dtype).alias(feature)) for value in grid], how="vertical"
    )
    scored = predict(model, stacked, proba=not model.regression)

    def means(column: str) -> list[float]:
        values = scored.get_column(column).cast(pl.Float64).to_numpy().reshape(len(grid), sample.height)
        return [float(v) for v in values.mean(axis=1)]

    if model.regression:
        return Curve(feature, "mean prediction", grid, {model.target: means("prediction")})
    return Curve(feature, "P(class)", grid, {str(cls): means(f"proba_{cls}") for cls in model.classes})


# ---------------------------------------------------------------------------- distill

HOLDOUT = 0.25  # the share of the rows distill keeps out of learning to measure on
# rows made up per row learned from, labelled by the teacher: the teacher's answers on the
# rows it learned from are their true classes, and teach nothing new. On the wide
# benchmark's splits where a forest beats ripper by over two points, ripper's rules learned
# with two per row are 0.7913 accurate at ripper's own rule count, ripper's 0.7785
# (bench/distill.py; without them 0.7771)
SYNTHETIC = 2.0
JITTER = 0.1  # a made-up row's numbers move by this many standard deviations of their column


def _jittered(rows: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
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
        made = _jittered(rows, round(synthetic * rows.height), seed)
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
