"""How settings are chosen from their cross-validated scores."""

from __future__ import annotations

from rulecli.search.tuning import one_se_choice, paid_choice


def test_rules_must_pay_for_themselves():
    # 27 more rules (over the folds) for 10 more held-out rows right: within the one-standard-
    # error rule's reach they would be kept as the best; paid for by a row each, they are not
    scores = {"many": (300.0, 30), "few": (290.0, 3), "none": (250.0, 0)}
    assert one_se_choice(scores, 400) == "many"
    assert paid_choice(scores) == "few"
    # a rule that gets more than one more row right stays
    assert paid_choice({"one": (290.0, 3), "more": (300.0, 8)}) == "more"
    # equal payoffs: the fewer rules, then the grid's order
    assert paid_choice({"a": (20.0, 10), "b": (12.0, 2), "c": (12.0, 2)}) == "b"


def test_every_row_right_by_weights_summed_a_rounding_above_their_total():
    # fractional weights summed fold by fold exceeded their total by a rounding (possum,
    # --class-weight balanced): the standard error of an accuracy above 1 was a math error
    n = 0.1 + 0.2
    scores = {"a": (0.1 + 0.2 + 1e-16, 4), "b": (0.3, 1)}
    assert scores["a"][0] / n > 1.0
    assert one_se_choice(scores, n) == "b"


def test_truncations_score_as_their_own_predictions():
    # the truncated models are scored from the full model's rule columns; each must score
    # what predicting it from scratch gets right, the model with no rules left included
    import numpy as np
    import polars as pl

    from rulecli.dataset import DataSpec, prepare_dataset
    from rulecli.learners.aq import AQParams, fit_aq
    from rulecli.model.compile import prediction_frame
    from rulecli.search.tuning import CUTS, truncated, truncation_scores

    rng = np.random.default_rng(3)
    n = 300
    x = rng.integers(0, 6, n)
    frame = pl.DataFrame(
        {
            "x": x.astype(float),
            "z": rng.choice(["p", "q", "r"], n),
            "y": np.where((x > 2) ^ (rng.random(n) < 0.2), "hi", np.where(x == 0, "zero", "lo")),
        }
    )
    ds = prepare_dataset(frame, DataSpec(target="y"))
    train, test = ds.subset(np.arange(200)), ds.subset(np.arange(200, n))
    params = AQParams(max_error=0.1, min_share=0.0, majority_rules="keep", rules_per_class=None)
    fitted = fit_aq(train, params)
    settings = (*CUTS, (1.0, True, None))  # the last leaves no rule
    scored = truncation_scores(fitted, train, test, settings)
    assert [cut for cut, _, _ in scored] == list(settings)
    truth = test.frame.get_column("y").cast(pl.String)
    for cut, right, size in scored:
        model = truncated(fitted, train, *cut)
        predicted = prediction_frame(model, test.frame.lazy()).collect().get_column("prediction")
        assert right == float((predicted == truth).fill_null(False).sum())
        assert size == len(model.rules)
    assert scored[-1][2] == 0 and len({right for _, right, _ in scored}) > 1
