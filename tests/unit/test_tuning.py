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

