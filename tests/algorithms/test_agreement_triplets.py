from __future__ import annotations

import pytest

from concepts.agreement import cohen_kappa, krippendorff_alpha_nominal, label_agreement
from embeddings.algorithms.triplets import find_contradictions, tally


def test_cohen_kappa_on_a_hand_computed_table() -> None:
    # 10 items: both yes 4, both no 3, a-yes b-no 2, a-no b-yes 1 -> po 0.7, pe 0.6*0.5 + 0.4*0.5 = 0.5, kappa 0.4
    a = [1] * 4 + [0] * 3 + [1] * 2 + [0] * 1
    b = [1] * 4 + [0] * 3 + [0] * 2 + [1] * 1
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa([1, 1], [1, 1]) is None


def test_krippendorff_alpha_matches_known_values() -> None:
    # Perfect agreement with variation -> 1.
    assert krippendorff_alpha_nominal([[1, 1], [0, 0], [1, 1]]) == pytest.approx(1.0)
    # Two raters, the table above: alpha = 1 - (n-1) * D_o / D_e on the coincidence matrix.
    units = [[1, 1]] * 4 + [[0, 0]] * 3 + [[1, 0]] * 2 + [[0, 1]]
    # n = 20 values: 11 ones, 9 zeros; disagreeing pairs counted both ways = 6; expected = 2*11*9/19
    assert krippendorff_alpha_nominal(units) == pytest.approx(1 - 6 / (2 * 11 * 9 / 19))
    # Units with one value are skipped; no variation -> undefined.
    assert krippendorff_alpha_nominal([[1], [1, 1]]) is None


def test_label_agreement_per_concept() -> None:
    sets = {
        "p1": {"ann": {"a", "b"}, "bob": {"a"}},
        "p2": {"ann": {"b"}, "bob": {"b"}},
        "p3": {"ann": {"a"}},  # one annotator: not a shared unit
    }
    result = {r.concept: r for r in label_agreement(sets, ["a", "b"])}
    assert result["a"].problems == 2 and result["a"].positives == 2
    assert result["a"].alpha == pytest.approx(1.0)  # both say yes on p1, both no on p2
    assert result["b"].kappa == pytest.approx(0.0)  # ann yes/yes, bob no/yes: po 0.5, pe 0.5
    assert result["b"].alpha is not None and result["b"].alpha < 0.5


def test_tally_majority_and_agreement() -> None:
    assert tally(["positive", "positive", "cant_tell"]).majority == "positive"
    assert tally(["positive", "negative"]).majority is None
    assert tally(["cant_tell", "cant_tell", "positive"]).majority is None
    assert tally(["negative", "negative", "positive"]).agreement == pytest.approx(2 / 3)
    assert tally([]).agreement is None


def test_contradictions_are_cycles_about_one_anchor() -> None:
    triplets = [
        ("A", "B", "C"),  # B > C
        ("A", "C", "D"),  # C > D
        ("A", "D", "B"),  # D > B: closes the cycle
        ("A", "B", "E"),  # not on the cycle
        ("X", "C", "B"),  # another anchor: no contradiction with the first
    ]
    assert find_contradictions(triplets) == {0, 1, 2}
    assert find_contradictions([("A", "B", "C"), ("A", "C", "B")]) == {0, 1}
    assert find_contradictions([("A", "B", "C")]) == set()


def test_label_agreement_kappa_keeps_each_annotator_on_one_side() -> None:
    # concept a: ann yes, yes, no, yes; bob no, no, no, yes -> po 0.5, pe (3*1 + 1*3) / 16, kappa 0.2.
    # p2's sets come bob first (bob saved before ann): the same table, so the same kappa.
    sets = {
        "p1": {"ann": {"a"}, "bob": {"b"}},
        "p2": {"bob": {"b"}, "ann": {"a"}},
        "p3": {"ann": {"b"}, "bob": {"b"}},
        "p4": {"ann": {"a"}, "bob": {"a"}},
    }
    result = {r.concept: r for r in label_agreement(sets, ["a"])}
    assert result["a"].kappa == pytest.approx(0.2)
    # Two different pairs of annotators are no two raters: no kappa (alpha still).
    sets["p4"] = {"ann": {"a"}, "carl": {"a"}}
    result = {r.concept: r for r in label_agreement(sets, ["a"])}
    assert result["a"].kappa is None and result["a"].alpha is not None
