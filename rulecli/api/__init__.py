"""rulecli's Python API: everything a command does, callable from Python.

>>> import rulecli
>>> model = rulecli.fit("oner", "sample_data/house.csv", target="value")
>>> rulecli.predict(model, "sample_data/house.csv")["prediction"].to_list()[:3]
['low', 'high', 'high']
>>> round(rulecli.evaluate(model, "sample_data/house.csv")["accuracy"], 2)
0.7

Data may be a path (any format rulecli reads), a Polars ``DataFrame`` or a prepared
:class:`~rulecli.dataset.Dataset`; models are the objects ``fit`` and ``load`` return.
The commands are thin layers over these functions. The package is split by verb:
:mod:`~rulecli.api.data` (reading and typing tables), :mod:`~rulecli.api.learning`
(fitting, :func:`learn` end to end, distillation), :mod:`~rulecli.api.models` (loading,
saving, text, exports), :mod:`~rulecli.api.scoring` (predictions, metrics, gates, drift,
the HTML report) and :mod:`~rulecli.api.compare` (two models side by side).
"""

from __future__ import annotations

from rulecli.api.compare import (
    diff,
)
from rulecli.api.data import (
    DATA_KEYS,
    ENGINE_KEYS,
    READ_KEYS,
    Data,
    Discretized,
    as_data,
    discretize,
    engine_options,
    prepare,
    read_table,
    sorted_options,
    source_label,
)
from rulecli.api.learning import (
    BALANCE_GAP,
    HINT,
    HOLDOUT,
    JITTER,
    MAX_TIME_BUDGET,
    PRIOR_COSTS,
    SYNTHETIC,
    TAUGHT,
    Learned,
    Training,
    budget_warnings,
    check_engine,
    check_time_budget,
    distill,
    fit,
    fit_model,
    imbalance_warnings,
    jittered,
    learn,
    make_params,
    partial_dependence,
    predicted_classes,
    release,
    target_note,
    train,
    with_budget_record,
    with_cost_priors,
    with_costs,
    with_data_record,
)
from rulecli.api.models import (
    check_model_path,
    export,
    load,
    loads_model,
    logic_text,
    model_text,
    rules_text,
    save,
)
from rulecli.api.scoring import (
    CURVE_POINTS,
    CURVE_ROWS,
    CURVES,
    REGRESSION_GATES,
    drift,
    evaluate,
    metrics_json,
    predict,
    prediction_plan,
    read_costs,
    read_for_both,
    report,
    scan_for,
    weight_expr,
)
from rulecli.model.compile import Predictor  # the type of every model the API returns

__all__ = [
    "BALANCE_GAP",
    "CURVES",
    "CURVE_POINTS",
    "CURVE_ROWS",
    "DATA_KEYS",
    "ENGINE_KEYS",
    "HINT",
    "HOLDOUT",
    "JITTER",
    "MAX_TIME_BUDGET",
    "PRIOR_COSTS",
    "READ_KEYS",
    "REGRESSION_GATES",
    "SYNTHETIC",
    "TAUGHT",
    "Data",
    "Discretized",
    "Learned",
    "Predictor",
    "Training",
    "as_data",
    "budget_warnings",
    "check_engine",
    "check_model_path",
    "check_time_budget",
    "diff",
    "discretize",
    "distill",
    "drift",
    "engine_options",
    "evaluate",
    "export",
    "fit",
    "fit_model",
    "imbalance_warnings",
    "jittered",
    "learn",
    "load",
    "loads_model",
    "logic_text",
    "make_params",
    "metrics_json",
    "model_text",
    "partial_dependence",
    "predict",
    "predicted_classes",
    "prediction_plan",
    "prepare",
    "read_costs",
    "read_for_both",
    "read_table",
    "release",
    "report",
    "rules_text",
    "save",
    "scan_for",
    "sorted_options",
    "source_label",
    "target_note",
    "train",
    "weight_expr",
    "with_budget_record",
    "with_cost_priors",
    "with_costs",
    "with_data_record",
]
