"""One contract for every registered learner: what the registry promises, checked on each.

A learner added to the registry is tested here without a line of its own: its parameters
are declared once (API keywords, checks and command options agree), its models round-trip
through JSON and text, predict the same through the API and the command, export, and come
out byte-identical for the same data and seed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import rulecli
from rulecli import api, learners
from rulecli.cli.app import _build as build_command
from rulecli.cli.options import flag, flags_of
from rulecli.errors import ParamError
from rulecli.model.tree import Forest, predicts_number
from rulecli.params import fields_of, spec_of
from tests.conftest import SAMPLE, run_cli

PENGUINS = str(SAMPLE / "penguins.csv")
# keep the slow learners quick; every other parameter stays at its default
QUICK: dict[str, dict[str, object]] = {"forest": {"trees": 5}, "brl": {"iterations": 400}}
NAMES = learners.names()
# every learner on each kind of target it takes: the penguins' species, their body mass
SUBJECTS = [(n, "species") for n in learners.names(takes="classes")] + [
    (n, "body_mass_g") for n in learners.names(takes="numbers")
]


@pytest.fixture(scope="module", params=SUBJECTS, ids=lambda s: f"{s[0]}-{s[1]}")
def fitted(request: pytest.FixtureRequest) -> tuple[str, str, object]:
    name, target = request.param
    return name, target, rulecli.fit(name, PENGUINS, target=target, **_options(name))


def _target(name: str) -> str:
    """The penguins' species for a learner of classes, their body mass for one of numbers only."""
    return "species" if learners.get(name).class_target else "body_mass_g"


def _options(name: str) -> dict[str, object]:
    seeded = "seed" in learners.get(name).params.__dataclass_fields__
    return {**QUICK.get(name, {}), **({"seed": 3} if seeded else {})}


def test_every_registry_entry_is_a_learner_module():
    for name in NAMES:
        learner = learners.get(name)
        assert learner.name == name and learner.help and learner.examples
        assert dataclasses.is_dataclass(learner.params)
        assert learner.params().record() is not None  # the defaults are valid


def test_unknown_learners_and_parameters_are_refused():
    with pytest.raises(ParamError, match="unknown learner 'jrip'"):
        learners.get("jrip")
    with pytest.raises(ParamError, match="oner has no parameter 'folds'"):
        rulecli.fit("oner", PENGUINS, folds=3)


def _violations(field: dataclasses.Field[object]) -> list[object]:
    """Values the field's own declaration forbids."""
    s = spec_of(field)
    assert s is not None
    bad: list[object] = []
    if s.choices is not None:
        bad.append("no-such-choice")
    for bound, step in ((s.ge, -1), (s.gt, 0), (s.le, 1), (s.lt, 0)):
        if bound is not None:
            bad.append(bound + step if step else bound)
    return bad


@pytest.mark.parametrize("name", NAMES)
def test_declared_constraints_are_enforced_and_name_the_parameter(name: str):
    learner = learners.get(name)
    checked = 0
    for field in fields_of(learner.params):
        for value in _violations(field):
            with pytest.raises(ParamError) as caught:
                learner.params(**{field.name: value})
            assert caught.value.param == field.name and str(caught.value).startswith(f"`{field.name}`")
            checked += 1
    assert checked, f"{name} declares no constraint at all"


@pytest.mark.parametrize("name", NAMES)
def test_the_command_has_one_option_per_parameter_with_its_default(name: str):
    options = {p.opts[0]: p for p in build_command(name).params}
    for field in fields_of(learners.get(name).params):
        option = options[flag(field)]
        if field.name != "seed":  # --seed is shared by every learner command
            assert option.default == field.default and option.help == spec_of(field).help  # type: ignore[union-attr]
    assert run_cli(name, "--help").code == 0


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_value_on_the_command_line_names_the_flag(name: str):
    learner = learners.get(name)
    field = next((f for f in fields_of(learner.params) if spec_of(f).choices), None)  # type: ignore[union-attr]
    if field is None:  # a learner with no choices: a value below a bound instead
        field = next(f for f in fields_of(learner.params) if spec_of(f).ge is not None)  # type: ignore[union-attr]
        result = run_cli(name, PENGUINS, "-y", _target(name), flag(field), "-5")
        assert (
            result.code == 2
            and result.stderr.count("\n") == 1
            and flags_of(learner.params)[field.name] in result.stderr
        )
        return
    result = run_cli(name, PENGUINS, "-y", _target(name), flag(field), "no-such-choice")
    assert result.code == 2
    assert (
        result.stderr
        == f"Error: {flags_of(learner.params)[field.name]} must be one of "
        + ", ".join(
            spec_of(field).choices  # type: ignore[union-attr,arg-type]
        )
        + ", got 'no-such-choice'\n"
    )


def test_fit_is_deterministic_and_round_trips(fitted: tuple[str, str, object], tmp_path: Path):
    name, target, model = fitted
    again = rulecli.fit(name, PENGUINS, target=target, **_options(name))
    assert api.model_text(again, "m.json") == api.model_text(model, "m.json")
    numbers = predicts_number(model)
    expected = rulecli.predict(model, PENGUINS, proba=not numbers)
    rulecli.save(model, tmp_path / "m.json")
    assert rulecli.predict(rulecli.load(tmp_path / "m.json"), PENGUINS, proba=not numbers).equals(expected)
    if not isinstance(model, Forest) and not numbers:
        rulecli.save(model, tmp_path / "m.txt")
        text_model = rulecli.load(tmp_path / "m.txt")
        assert rulecli.predict(text_model, PENGUINS)["prediction"].equals(expected["prediction"])


def test_the_command_and_the_api_make_the_same_model(fitted: tuple[str, str, object], tmp_path: Path):
    name, target, model = fitted
    args = [f"--{k.replace('_', '-')}={v}" for k, v in QUICK.get(name, {}).items()]
    out = tmp_path / "m.json"
    result = run_cli(name, PENGUINS, "-y", target, "--seed", "3", *args, "-o", str(out), "-q")
    assert result.code == 0, result.stderr
    assert out.read_text() == api.model_text(model, out)


def test_every_model_exports_to_python_that_predicts_the_same(fitted: tuple[str, str, object]):
    _, _, model = fitted
    namespace: dict[str, object] = {}
    exec(rulecli.export(model, "python"), namespace)
    frame = rulecli.read_table(PENGUINS)
    expected = rulecli.predict(model, frame)["prediction"].to_list()
    got = [namespace["predict"](row) for row in frame.to_dicts()]  # type: ignore[operator]
    assert got == expected


def test_evaluate_and_cross_validation_through_the_api(fitted: tuple[str, str, object]):
    name, target, model = fitted
    metrics = rulecli.evaluate(model, PENGUINS)
    assert 0.4 < metrics["r2" if predicts_number(model) else "accuracy"] <= 1.0
    assert metrics["rows"] == (342 if predicts_number(model) else 344)  # two penguins were not weighed
    ds = api.prepare(PENGUINS, target=target, numeric_target=learners.get(name).numeric_target)
    params = api.make_params(name, **QUICK.get(name, {}))
    training = api.train(name, ds, params, cv=3, cv_seed=1)
    assert len(training.metrics["cv"]["folds"]) == 3


def test_learn_does_what_the_command_does_and_checks_its_inputs_before_any_work(tmp_path: Path):
    heard: list[tuple[int, str | None]] = []
    params = api.make_params("tree", max_depth=2)
    learned = api.learn(
        "tree",
        PENGUINS,
        params,
        cv=3,
        test=PENGUINS,
        target="year",
        on_data=lambda ds, note: heard.append((ds.n_rows, note)),
    )
    ((rows, note),) = heard
    assert rows == 344 and note is not None and "integer codes" in note
    assert set(learned.metrics) == {"cv", "test"} and learned.notes[0] == learners.get("tree").summary(learned.model)
    saved = tmp_path / "m.json"
    assert run_cli("tree", PENGUINS, "-y", "year", "--max-depth", "2", "-q", "-o", str(saved)).code == 0
    assert saved.read_text() == api.model_text(learned.model, saved)
    heard.clear()
    with pytest.raises(rulecli.errors.InputError, match=r"missing\.csv"):
        api.learn("tree", PENGUINS, params, test=str(tmp_path / "missing.csv"), on_data=lambda *a: heard.append(a))
    assert not heard  # refused before the table was read


def test_the_api_takes_a_pandas_frame_and_refuses_other_objects_in_one_line():
    # a pandas DataFrame was taken for a file name ("OSError: File name too long")
    import pandas as pd
    import pyarrow as pa

    from rulecli import api
    from rulecli.errors import ParamError

    frame = pd.DataFrame({"x": [1, 2, 3, 4] * 10, "y": ["a", "a", "b", "b"] * 10})
    model = api.fit("oner", frame, target="y")
    assert api.predict(model, frame).get_column("prediction").to_list() == frame["y"].tolist()
    table = pa.Table.from_pandas(frame)
    assert api.fit("oner", table, target="y") == model
    assert api.predict(model, table).get_column("prediction").to_list() == frame["y"].tolist()
    with pytest.raises(ParamError, match="not dict"):
        api.fit("oner", {"x": [1]}, target="y")
