"""No problem without a vector: borrowing concept vectors by text, and the text blend. Pure."""

from __future__ import annotations

import numpy as np
import pytest

from embeddings.algorithms import fallback
from embeddings.algorithms.methods import BankData, embed
from embeddings.algorithms.metrics import triplet_accuracy
from embeddings.algorithms.text import lsa_vectors


def test_a_problem_without_concepts_borrows_from_the_problems_it_reads_like() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    text = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.9, 0.1, 0.0]])  # row 2 reads like row 0
    filled, still = fallback.borrow_missing(vectors, [2], text, k=1)
    assert still == []
    assert np.allclose(filled[2], [1.0, 0.0])
    filled, _ = fallback.borrow_missing(vectors, [2], text, k=2)  # weighted by text similarity: mostly row 0
    assert filled[2][0] > filled[2][1] > 0 and np.isclose(np.linalg.norm(filled[2]), 1.0)


def test_a_problem_with_no_text_like_any_other_stays_without_a_vector() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 0.0]])
    text = np.array([[1.0, 0.0], [0.0, 1.0]])  # orthogonal: nothing to borrow
    filled, still = fallback.borrow_missing(vectors, [1], text, k=3)
    assert still == [1] and not filled[1].any()


def test_with_no_concepts_anywhere_nothing_is_borrowed() -> None:
    filled, still = fallback.borrow_missing(np.zeros((3, 2)), [0, 1, 2], np.eye(3), k=2)
    assert still == [0, 1, 2] and not filled.any()


@pytest.mark.parametrize("w", [0.0, 0.1, 0.5, 1.0])
def test_the_text_blend_is_exactly_a_weighted_sum_of_cosines(w: float) -> None:
    rng = np.random.default_rng(3)
    c, t = rng.normal(size=(6, 4)), rng.normal(size=(6, 5))
    joined = fallback.join_text(c, t, w).astype(np.float64)
    cu, tu = fallback.unit_rows(c), fallback.unit_rows(t)
    expected = (1 - w) * cu @ cu.T + w * tu @ tu.T
    assert np.allclose(joined @ joined.T, expected, atol=1e-6)


def test_the_text_weight_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="text weight"):
        fallback.join_text(np.ones((1, 2)), np.ones((1, 2)), 1.5)
    with pytest.raises(ValueError, match="borrowed text weight"):
        fallback.join_text(np.ones((1, 2)), np.ones((1, 2)), 0.1, [0], -0.1)


def test_borrowed_rows_take_their_own_text_weight_in_every_cosine() -> None:
    rng = np.random.default_rng(5)
    c, t = rng.normal(size=(6, 4)), rng.normal(size=(6, 5))
    w, wb, borrowed = 0.1, 0.6, [1, 4]
    joined = fallback.join_text(c, t, w, borrowed, wb).astype(np.float64)
    weights = np.array([wb if i in borrowed else w for i in range(6)])
    cu, tu = fallback.unit_rows(c), fallback.unit_rows(t)
    expected = np.sqrt(np.outer(1 - weights, 1 - weights)) * (cu @ cu.T) + np.sqrt(np.outer(weights, weights)) * (tu @ tu.T)
    assert np.allclose(joined @ joined.T, expected, atol=1e-6)
    assert np.allclose(np.linalg.norm(joined, axis=1), 1.0, atol=1e-6)  # still a cosine
    # The same weight for borrowed rows is the plain blend, bit for bit.
    assert np.array_equal(fallback.join_text(c, t, w, borrowed, w), fallback.join_text(c, t, w))


TEXTS = [
    "Toss a fair coin ten times. Find the probability of exactly four heads.",
    "A coin is tossed eight times; what is the probability of exactly three heads?",
    "A biased coin lands heads with probability 0.3 and is tossed six times. Probability of two heads?",
    "Test the claim that the mean weight is 50 grams at the 5% level; the sample mean is 52.",
    "Test at the 1% level whether the mean time differs from 20 minutes; sample mean 21.",
    "Is the mean score different from 70? Test at the 5% level with a sample of 30 students.",
]


def test_a_bank_whose_rules_find_nothing_still_gets_vectors_and_orders_triplets() -> None:
    data = BankData(concept_sets=[[] for _ in TEXTS], n_concepts=4, texts=TEXTS)
    out = embed("prob2vec", data, {"epochs": 20})
    assert out.missing == [] and out.vectors.shape[0] == len(TEXTS) and np.isfinite(out.vectors).all()
    triplets = [(0, 1, 3), (3, 4, 0), (1, 2, 5), (4, 5, 2)]  # coins with coins, tests with tests
    assert triplet_accuracy(out.vectors, triplets) > 0.5


def test_problems_without_concepts_borrow_inside_a_concept_method() -> None:
    sets = [[0], [0], [], [1], [1], []]  # rows 2 and 5 have no concepts
    out = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS), {"text_weight": 0.0})
    assert out.missing == [] and out.notes["borrowed"] == 2 and out.notes["without_concepts"] == 2
    assert triplet_accuracy(out.vectors, [(2, 0, 3), (5, 4, 1)]) == 1.0  # the coin problem is a coin problem


def test_a_problem_that_borrowed_leans_on_its_own_text() -> None:
    """Its concepts are a guess from its neighbours: with borrowed_text_weight 1 its similarities are
    exactly its text's, while problems with concepts keep the concept method's."""
    sets = [[0], [0], [], [1], [1], [1]]  # row 2 has no concepts and borrows
    params = {"text_weight": 0.0, "borrowed_text_weight": 1.0, "fallback_text": "lsa"}  # compared with the LSA below
    out = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS), params)
    text = fallback.unit_rows(lsa_vectors(TEXTS, dim=128))
    v = out.vectors.astype(np.float64)
    assert out.notes["borrowed"] == 1 and out.notes["borrowed_text_weight"] == 1.0
    assert np.allclose(v[2] @ v[[0, 1]].T, 0.0)  # the others have no text part: nothing in common
    shared = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS), {"text_weight": 0.5, "borrowed_text_weight": 1.0, "fallback_text": "lsa"})
    s = shared.vectors.astype(np.float64)
    assert np.allclose(s[2] @ s[[0, 1, 3]].T, np.sqrt(0.5) * (text[2] @ text[[0, 1, 3]].T), atol=1e-6)
    # Rows with concepts compare as before: concept overlap and text at the plain weight.
    plain = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS), {"text_weight": 0.5, "borrowed_text_weight": 0.5, "fallback_text": "lsa"})
    p = plain.vectors.astype(np.float64)
    rows = [0, 1, 3, 4, 5]
    assert np.allclose(s[rows] @ s[rows].T, p[rows] @ p[rows].T, atol=1e-6)


def test_text_weight_zero_and_no_texts_give_the_method_as_published() -> None:
    sets = [[0], [0, 1], [1], []]
    plain = embed("onehot", BankData(concept_sets=sets, n_concepts=2))
    assert plain.missing == [3] and not plain.vectors[3].any()
    same = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS[:4]), {"text_weight": 0.0, "borrow_k": 0})
    assert same.missing == [3] and np.array_equal(plain.vectors, same.vectors)


def test_the_text_breaks_ties_between_problems_with_the_same_concepts() -> None:
    sets = [[0], [0], [0], [1], [1], [1]]
    tied = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS), {"text_weight": 0.0})
    blended = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS), {"text_weight": 0.2})
    triplet = [(0, 1, 2)]  # all three share concept 0: only the text can order them
    assert triplet_accuracy(tied.vectors, triplet) == 0.0  # a tie counts as wrong
    assert triplet_accuracy(blended.vectors, triplet) == 1.0  # exactly-four-heads reads closest to exactly-three


def test_lsa_vectors_are_deterministic_unit_rows_and_handle_edge_cases() -> None:
    a, b = lsa_vectors(TEXTS, dim=3), lsa_vectors(TEXTS, dim=3)
    assert np.array_equal(a, b) and a.shape == (6, 3)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert lsa_vectors([], dim=4).shape == (0, 4)
    assert not lsa_vectors(["", "zzz qqq"], dim=2).any()  # no shared feature: zero rows, no NaN


# --- which text the fallback reads: LSA or the sentence model -------------------------------------

SENTENCE_TEXTS = ["roll two dice", "toss a coin", "two dice are rolled", "flip one coin"]


def test_the_minilm_fallback_text_uses_the_given_sentence_vectors() -> None:
    """With fallback_text "minilm" a problem without concepts borrows from the problem whose sentence
    vector is nearest, whatever the words say: the vectors handed over (the app's cache) decide."""
    sets = [[0], [1], [], []]
    sentence = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)  # row 2 "reads like" row 1
    data = BankData(concept_sets=sets, n_concepts=2, texts=SENTENCE_TEXTS, sentence_vectors=sentence)
    out = embed("onehot", data, {"fallback_text": "minilm", "text_weight": 0.0, "borrowed_text_weight": 0.0, "borrow_k": 1})
    assert out.notes["fallback_text"] == "minilm" and out.notes["borrowed"] == 2 and out.missing == []
    v = fallback.unit_rows(out.vectors)
    assert np.isclose(v[2] @ v[1], 1.0) and np.isclose(v[3] @ v[0], 1.0)
    # The LSA of the same words sends row 2 ("two dice are rolled") to row 0 ("roll two dice") instead.
    lsa = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=SENTENCE_TEXTS),
                {"fallback_text": "lsa", "text_weight": 0.0, "borrowed_text_weight": 0.0, "borrow_k": 1, "text_dim": 3})
    w = fallback.unit_rows(lsa.vectors)
    assert lsa.notes["fallback_text"] == "lsa" and np.isclose(w[2] @ w[0], 1.0)


def test_the_minilm_fallback_text_encodes_the_texts_when_no_vectors_are_given() -> None:
    sets = [[0], [1], [], []]
    out = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=SENTENCE_TEXTS), {"fallback_text": "minilm", "borrow_k": 1})
    v = fallback.unit_rows(out.vectors)
    assert out.missing == [] and out.vectors.shape == (4, 2 + 384)
    assert v[2] @ v[0] > v[2] @ v[1] and v[3] @ v[1] > v[3] @ v[0]  # dice with dice, coins with coins


def test_an_unknown_fallback_text_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="fallback_text must be one of lsa, minilm, got 'bert'"):
        embed("onehot", BankData(concept_sets=[[0], []], n_concepts=1, texts=["a b", "a c"]), {"fallback_text": "bert"})


def test_sentence_vectors_must_match_the_texts() -> None:
    data = BankData(concept_sets=[[0], []], n_concepts=1, texts=["a b", "a c"], sentence_vectors=np.ones((3, 4)))
    with pytest.raises(ValueError, match="3 sentence vectors for 2 texts"):
        embed("onehot", data, {"fallback_text": "minilm"})


def test_which_methods_read_the_sentence_vectors() -> None:
    from embeddings.algorithms.methods import needs_sentence_vectors

    assert needs_sentence_vectors("minilm")
    assert not needs_sentence_vectors("sif")
    assert needs_sentence_vectors("prob2vec", {"fallback_text": "minilm"})
    assert not needs_sentence_vectors("prob2vec", {"fallback_text": "lsa"})
    assert not needs_sentence_vectors("prob2vec", {"fallback_text": "minilm", "text_weight": 0.0, "borrow_k": 0})
    assert not needs_sentence_vectors("no-such-method")


def test_embed_refuses_a_text_weight_outside_0_1_even_without_texts() -> None:
    with pytest.raises(ValueError, match=r"borrowed text weight must be in \[0, 1\], got 1.5"):
        embed("onehot", BankData(concept_sets=[[0], []], n_concepts=1), {"borrowed_text_weight": 1.5})


def test_the_text_weight_follows_the_concepts_recall_between_the_two_weights() -> None:
    """1 - recall, never under the plain weight (tuned rules) nor over the borrowed one (rules that
    find half the concepts lean on the text like a problem that borrowed); unknown recall: plain."""
    recall = np.array([1.0, 0.95, 0.8, 0.6, 0.3, 0.0, np.nan])
    assert np.allclose(fallback.text_weights_from_recall(recall, 0.1, 0.5), [0.1, 0.1, 0.2, 0.4, 0.5, 0.5, 0.1])
    # A borrowed weight under the plain one leaves every row at the plain weight.
    assert np.allclose(fallback.text_weights_from_recall(recall, 0.3, 0.2), 0.3)
    with pytest.raises(ValueError, match="recall must be in"):
        fallback.text_weights_from_recall(np.array([1.2]), 0.1, 0.5)
    with pytest.raises(ValueError, match="text weight must be in"):
        fallback.text_weights_from_recall(np.array([0.5]), 1.5, 0.5)


def test_rows_with_their_own_text_weight_blend_exactly_and_borrowed_rows_keep_theirs() -> None:
    rng = np.random.default_rng(9)
    c, t = rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    rows, borrowed = np.array([0.1, 0.4, 0.1, 0.25, 0.3]), [4]
    joined = fallback.join_text(c, t, 0.1, borrowed, 0.6, rows).astype(np.float64)
    weights = np.array([0.1, 0.4, 0.1, 0.25, 0.6])
    cu, tu = fallback.unit_rows(c), fallback.unit_rows(t)
    expected = np.sqrt(np.outer(1 - weights, 1 - weights)) * (cu @ cu.T) + np.sqrt(np.outer(weights, weights)) * (tu @ tu.T)
    assert np.allclose(joined @ joined.T, expected, atol=1e-6)
    assert np.allclose(np.linalg.norm(joined, axis=1), 1.0, atol=1e-6)
    # Every row at the plain weight is the plain blend, bit for bit.
    assert np.array_equal(fallback.join_text(c, t, 0.1, borrowed, 0.6, np.full(5, 0.1)), fallback.join_text(c, t, 0.1, borrowed, 0.6))
    with pytest.raises(ValueError, match="4 row weights for 5 rows"):
        fallback.join_text(c, t, 0.1, row_weights=np.full(4, 0.1))


def test_problems_whose_concept_source_misses_lean_on_their_text() -> None:
    """BankData.concept_recall: a collection whose rules found 40% of the labelled concepts takes 0.6 of
    its cosines from the text, one that found 20% is capped at the borrowed weight (0.7), one with recall
    0.95 keeps 0.1; no recall given, or text_weight_from_recall off, is the plain blend."""
    sets = [[0], [0], [0, 1], [1], [1], [1]]
    recall = np.array([0.95, 0.95, 0.95, 0.4, 0.2, np.nan])
    params = {"fallback_text": "lsa"}
    out = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS, concept_recall=recall), params)
    plain = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS), params)
    off = embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS, concept_recall=recall), {**params, "text_weight_from_recall": False})
    assert np.array_equal(off.vectors, plain.vectors)
    assert out.notes["text_weight_raised"] == {"problems": 2, "max": 0.7}
    assert "text_weight_raised" not in plain.notes
    # The text part of each row has norm sqrt(w): 0.1 for rows 0-2 and 5, 0.6 and 0.7 for rows 3 and 4.
    concept_dim = plain.concept_vectors.shape[1]
    text_norms = np.linalg.norm(out.vectors[:, concept_dim:].astype(np.float64), axis=1)
    assert np.allclose(text_norms ** 2, [0.1, 0.1, 0.1, 0.6, 0.7, 0.1], atol=1e-6)
    assert np.array_equal(out.vectors[[0, 1, 2, 5]], plain.vectors[[0, 1, 2, 5]])
    # text_weight 0 and borrow_k 0 stay the method as published, whatever the recall.
    published = {**params, "text_weight": 0.0, "borrow_k": 0}
    given_text = np.eye(len(TEXTS))  # text vectors handed over, as the benchmarks do
    assert np.array_equal(
        embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS, text_vectors=given_text, concept_recall=recall), published).vectors,
        embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS, text_vectors=given_text), published).vectors,
    )
    with pytest.raises(ValueError, match="5 recall values for 6 problems"):
        embed("onehot", BankData(concept_sets=sets, n_concepts=2, texts=TEXTS, concept_recall=recall[:5]), params)


def test_recall_is_measured_per_collection_on_its_labelled_problems_only() -> None:
    collections = ["a", "a", "a", "b", "b", "c"]
    sets = [[0, 1], [0], [], [1], [0, 1], [0]]
    truth = {0: {0, 1}, 1: {0, 1}, 3: {0, 1}, 4: {0, 1}}  # row 2 and "c" are unlabelled
    recall, summary = fallback.recall_by_collection(collections, sets, truth, min_labelled=2)
    labelled = {"labelled": 2, "held_out": 0, "measured_on": "labelled", "recall": 0.75}
    assert summary == {"a": labelled, "b": labelled}
    assert np.allclose(recall[:5], 0.75) and np.isnan(recall[5])
    # Under the minimum a collection's recall is not used: nothing is known.
    recall, summary = fallback.recall_by_collection(collections, sets, truth, min_labelled=3)
    assert summary["a"] == {"labelled": 2, "held_out": 0, "measured_on": "labelled", "recall": None} and np.isnan(recall).all()


def test_a_collection_with_enough_held_out_problems_measures_its_recall_on_them_alone() -> None:
    """Rules find every concept of the problems they were written from (rows 0-2) and one in four of
    the held-out ones' (rows 3-4): with two held out the recall of "a" is theirs, 0.25, for every
    row of "a"; with one (under the minimum) it is measured on every labelled problem as before."""
    collections = ["a"] * 6 + ["b"]
    sets = [[0, 1], [0, 1], [0, 1], [0], [], [], [0]]
    truth = {i: {0, 1} for i in range(5)} | {6: {0}}
    recall, summary = fallback.recall_by_collection(collections, sets, truth, min_labelled=2, held_out={3, 4})
    assert summary["a"] == {"labelled": 5, "held_out": 2, "measured_on": "held-out", "recall": 0.25}
    assert np.allclose(recall[:6], 0.25)
    recall, summary = fallback.recall_by_collection(collections, sets, truth, min_labelled=2, held_out={3})
    assert summary["a"] == {"labelled": 5, "held_out": 1, "measured_on": "labelled", "recall": 0.7}
    assert np.allclose(recall[:6], 0.7)
    # A held-out row outside the labels counts for nothing; "b" has too few labels either way.
    assert fallback.recall_by_collection(collections, sets, truth, min_labelled=2, held_out={3, 4, 5})[1]["a"]["held_out"] == 2
    assert summary["b"]["recall"] is None and np.isnan(recall[6])


def _disagreeing_bank(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """m triplets (rows 3i, 3i+1, 3i+2) whose concepts put C closer to A (cos 0.8 against 0.2) and whose
    text puts B closer (0.9 against 0.1): (1 - w)(0.2 - 0.8) + w(0.9 - 0.1) > 0 only for w > 0.43."""

    def at(cosines: tuple[float, float]) -> np.ndarray:
        return np.array([[1.0, 0.0], [cosines[0], np.sqrt(1 - cosines[0] ** 2)], [cosines[1], -np.sqrt(1 - cosines[1] ** 2)]])

    concepts = np.vstack([at((0.2, 0.8))] * m)
    text = np.vstack([at((0.9, 0.1))] * m)
    return concepts, text, np.arange(3 * m).reshape(m, 3)


def test_a_collection_with_enough_accepted_triplets_takes_the_text_share_that_orders_them() -> None:
    """README step 5: the recall's share (0.1) gets none of the 40 triplets right; every share over 0.43 gets all,
    and the nearest of them to the recall's share is taken. Rows of another collection keep theirs."""
    concepts, text, triplets = _disagreeing_bank(40)
    other = np.eye(2)[[0, 1]]
    vectors, text = np.vstack([concepts, other]), np.vstack([text, other])
    groups = ["book"] * 120 + ["demo"] * 2
    weights = np.full(122, 0.1)
    weights[-2:] = 0.3
    chosen, report = fallback.shares_from_triplets(vectors, text, 0.1, [], 0.5, weights, groups, {"book": triplets})
    assert report["book"]["share"] == 0.5 and report["book"]["triplets"] == 40
    assert report["book"]["recall_share"] == 0.1
    assert (report["book"]["accuracy"], report["book"]["recall_share_accuracy"]) == (1.0, 0.0)
    assert report["book"]["out_of_fold"] == [1] * 40 and report["book"]["out_of_fold_accuracy"] == 1.0
    assert np.allclose(chosen[:120], 0.5) and np.allclose(chosen[-2:], 0.3)
    assert np.allclose(weights, [0.1] * 120 + [0.3] * 2)  # the input is not changed
    joined = fallback.join_text(vectors, text, 0.1, row_weights=chosen)
    assert triplet_accuracy(joined, triplets) == 1.0


def test_too_few_triplets_or_a_tie_keep_the_recalls_share() -> None:
    concepts, text, triplets = _disagreeing_bank(29)
    weights = np.full(87, 0.1)
    chosen, report = fallback.shares_from_triplets(concepts, text, 0.1, [], 0.5, weights, ["book"] * 87, {"book": triplets})
    assert report == {} and np.array_equal(chosen, weights)  # 29 < TRIPLET_SHARE_MIN
    # Triplets that every share orders alike (concepts and text agree): the recall's share stays.
    agree = np.vstack([np.array([[1.0, 0.0], [0.9, np.sqrt(0.19)], [0.1, -np.sqrt(0.99)]])] * 30)
    chosen, report = fallback.shares_from_triplets(agree, agree, 0.1, [], 0.5, np.full(90, 0.32), ["book"] * 90, {"book": np.arange(90).reshape(30, 3)})
    assert report["book"]["share"] == 0.32 and np.allclose(chosen, 0.32)


def test_rows_that_borrowed_keep_the_borrowed_weight_and_triplets_stay_in_their_collection() -> None:
    concepts, text, triplets = _disagreeing_bank(30)
    chosen, report = fallback.shares_from_triplets(concepts, text, 0.1, [5], 0.5, np.full(90, 0.1), ["book"] * 90, {"book": triplets})
    assert chosen[5] == 0.1 and np.allclose(np.delete(chosen, 5), report["book"]["share"])
    with pytest.raises(ValueError, match="a triplet of 'book' has a problem of another collection"):
        fallback.shares_from_triplets(concepts, text, 0.1, [], 0.5, np.full(90, 0.1), ["book"] * 89 + ["other"], {"book": triplets})


def test_a_concept_method_lets_a_collections_triplets_choose_its_text_share() -> None:
    """Through embed(), with triplet_share_min on: where the recall sets the share (rules and hybrid runs),
    BankData.share_triplets choose it and the notes say so."""
    m = 30
    sets = [[0], [1], [0]] * m  # A and C share their concept, B has another: concepts say C
    text = np.vstack([np.array([[1.0, 0.0], [0.9, np.sqrt(0.19)], [0.1, -np.sqrt(0.99)]])] * m)  # the text says B
    triplets = {"book": np.arange(3 * m).reshape(m, 3)}
    data = dict(concept_sets=sets, n_concepts=2, texts=["x"] * (3 * m), text_vectors=text, groups=["book"] * (3 * m), share_triplets=triplets)
    on = {"triplet_share_min": fallback.TRIPLET_SHARE_MIN}
    out = embed("onehot", BankData(**data, concept_recall=np.full(3 * m, 0.95)), on)
    assert out.notes["triplet_share"]["book"]["share"] == 0.6 and out.notes["triplet_share"]["book"]["recall_share_accuracy"] == 0.0
    assert triplet_accuracy(out.vectors, triplets["book"]) == 1.0
    text_norms = np.linalg.norm(out.vectors[:, 2:].astype(np.float64), axis=1)
    assert np.allclose(text_norms ** 2, 0.6, atol=1e-6)
    # The labels source (no recall), and the default (triplet_share_min 0: off), keep the share as before.
    for kept in (embed("onehot", BankData(**data), on), embed("onehot", BankData(**data, concept_recall=np.full(3 * m, 0.95)))):
        assert "triplet_share" not in kept.notes and triplet_accuracy(kept.vectors, triplets["book"]) == 0.0
    with pytest.raises(ValueError, match="each problem's collection"):
        embed("onehot", BankData(**{**data, "groups": None}, concept_recall=np.full(3 * m, 0.95)), on)
