"""The neural extractor's pure code: splits and phases of every scheme, the network, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from concepts.neural.experiment import ExtractorInputs, TrainConfig, fit_extractor, run_experiment, scheme_rounds, Features, concept_data
from concepts.neural.features import bag_of_words, initial_embedding, vocabulary
from concepts.neural.network import Batch, RoundNets, predict, train
from concepts.neural.schemes import SCHEMES, no_split, scheme_phases, split_round
from embeddings.algorithms.text import tokenize

SEEDS = range(40)


def _sets(n_pos: int, n_neg: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(n_pos), np.arange(n_pos, n_pos + n_neg)


# --- splits and phases ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_pos,n_neg,fraction", [(2, 2, 0.2), (12, 623, 0.2), (7, 40, 0.3), (30, 31, 0.5)])
def test_a_split_is_stratified_and_disjoint(n_pos: int, n_neg: int, fraction: float) -> None:
    pos, neg = _sets(n_pos, n_neg)
    for seed in SEEDS:
        s = split_round(pos, neg, np.random.default_rng(seed), fraction)
        assert set(s.train_pos).isdisjoint(s.test_pos) and set(s.train_neg).isdisjoint(s.test_neg)
        assert set(s.train_pos) | set(s.test_pos) == set(pos) and set(s.train_neg) | set(s.test_neg) == set(neg)
        assert len(s.test_pos) >= 1 and len(s.train_pos) >= 1 and len(s.test_neg) >= 1 and len(s.train_neg) >= 1
        assert len(s.test_pos) == min(n_pos - 1, max(1, round(n_pos * fraction)))


def test_a_split_refuses_too_few_examples() -> None:
    with pytest.raises(ValueError, match="at least 2 positives and 2 negatives, got 1 and 5"):
        split_round(np.arange(1), np.arange(1, 6), np.random.default_rng(0), 0.2)


def _sources(n: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    everything = np.arange(n)
    out = []
    for j, (lo, hi) in enumerate([(0, 15), (20, 60), (90, 100)]):
        pos = np.arange(lo, hi)
        out.append((f"other-{j}", pos, np.setdiff1d(everything, pos)))
    return out


@pytest.mark.parametrize("key", list(SCHEMES))
def test_every_scheme_draws_its_phases_from_the_right_sets(key: str) -> None:
    scheme = SCHEMES[key]
    pos, neg = np.arange(100, 114), np.concatenate([np.arange(0, 100), np.arange(114, 300)])
    sources = _sources(300)
    for seed in SEEDS:
        s = split_round(pos, neg, np.random.default_rng(seed), 0.2)
        phases = scheme_phases(scheme, s, np.random.default_rng(seed), sources)
        test = set(s.test)
        names = [p.name for p in phases]
        for phase in phases:
            assert test.isdisjoint(phase.problems), f"{phase.name} trains on a test problem"
            assert len(set(phase.problems)) == len(phase.problems)
        balanced = phases[-1]
        assert balanced.name == "balanced"
        assert set(balanced.problems[balanced.targets == 1]) == set(s.train_pos)
        negatives_bar = set(balanced.problems[balanced.targets == 0])
        assert negatives_bar <= set(s.train_neg) and len(negatives_bar) == len(s.train_pos)  # |N̄| = |P|
        if scheme.negative_pretraining:
            pre = phases[names.index("negatives")]
            assert (pre.targets == 0).all(), "negative pre-training sees negatives only"
            assert set(pre.problems) == set(s.train_neg) - negatives_bar  # N \ N̄
        else:
            assert "negatives" not in names
        transfer = [p for p in phases if p.name.startswith("transfer:")]
        if scheme.transfer:
            assert [p.name for p in transfer] == [f"transfer:{slug}" for slug, *_ in sources]
            assert names.index(transfer[-1].name) < len(names) - 1 and (not scheme.negative_pretraining or names.index("negatives") == len(names) - 2)
            for phase, (_, pos_j, _neg_j) in zip(transfer, sources):
                present = np.isin(phase.problems, pos_j)
                assert (phase.targets == present).all(), "transfer targets are the other concept's labels"
                assert present.sum() == (~present).sum(), "transfer phases are balanced"
        else:
            assert transfer == []


def test_schemes_of_one_round_share_the_same_down_sample() -> None:
    pos, neg = _sets(12, 200)
    s = split_round(pos, neg, np.random.default_rng(3), 0.2)
    bars = []
    for scheme in SCHEMES.values():
        balanced = scheme_phases(scheme, s, np.random.default_rng(7), _sources(212))[-1]
        bars.append(tuple(sorted(balanced.problems)))
    assert len(set(bars)) == 1


def test_the_suggesting_extractor_trains_on_every_labelled_problem() -> None:
    pos, neg = _sets(5, 20)
    phases = scheme_phases(SCHEMES["negative-pretraining"], no_split(pos, neg), np.random.default_rng(0))
    assert set(np.concatenate([p.problems for p in phases])) == set(range(25))


def test_seven_schemes_as_in_table_3() -> None:
    assert len(SCHEMES) == 7 and list(SCHEMES)[0] == "down-sampling"
    assert sum(s.word_selection for s in SCHEMES.values()) == 4


# --- features and network ------------------------------------------------------------------------


def test_the_tokenizer_keeps_latex_commands() -> None:
    assert tokenize(r"Compute $\binom{5}{2}$ and $\frac{1}{2}$.") == ["compute", r"\binom", "<num>", "<num>", "and", r"\frac", "<num>", "<num>"]


def test_vocabulary_bags_and_initial_embedding() -> None:
    tokens = [["coin", "toss", "coin"], ["coin", "die"], ["die", "rare"]]
    assert vocabulary(tokens) == ["coin", "die"]
    assert vocabulary(tokens, min_count=1, words={"rare", "toss", "absent"}) == ["rare", "toss"]
    bags = bag_of_words(tokens, ["coin", "die"])
    assert bags.tolist() == [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    assert bag_of_words([["zzz"]], ["coin"]).tolist() == [[0.0]]
    known = {"coin": np.array([0.25, -0.5, 3.0], dtype=np.float32)}
    rows = initial_embedding(["coin", "die"], known, 3, torch.Generator().manual_seed(0))
    assert rows[0].tolist() == [0.25, -0.5, 3.0]
    assert (rows[1].abs() <= 1).all() and rows[1].abs().sum() > 0
    with pytest.raises(ValueError, match="'coin' has 3 numbers, expected 4"):
        initial_embedding(["coin"], known, 4, torch.Generator())


def _nets(rounds: int, vocab: int = 7, dim: int = 300, seeds: list[int] | None = None) -> RoundNets:
    seeds = seeds if seeds is not None else list(range(rounds))
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    emb = torch.stack([torch.rand(vocab, dim, generator=torch.Generator().manual_seed(100 + s)) * 2 - 1 for s in seeds])
    return RoundNets(emb, gens)


def test_the_network_has_the_papers_shape() -> None:
    nets = _nets(2)
    assert tuple(nets.W1.shape) == (2, 300, 60) and tuple(nets.W2.shape) == (2, 60, 60) and tuple(nets.W3.shape) == (2, 60, 1)
    p = predict(nets, torch.rand(5, 7), torch.arange(5))
    assert p.shape == (2, 5) and ((p > 0) & (p < 1)).all()


def test_both_multiplication_orders_give_the_same_logits() -> None:
    nets = _nets(3, vocab=50)
    small, large = torch.rand(3, 4, 50), torch.rand(3, 90, 50)  # 4 < 60 <= 90 problems
    both = nets(torch.cat([small, large], 1))
    assert torch.allclose(both[:, :4], nets(small), atol=1e-5) and torch.allclose(both[:, 4:], nets(large), atol=1e-5)


def test_rounds_trained_together_match_rounds_trained_alone() -> None:
    # Batched and single matmuls sum in different orders, and Adam's g/sqrt(v) magnifies that float32
    # noise where a gradient is near zero: over 60 seeds the weights differed by up to 5e-4 (11 of 60
    # beyond 1e-4). Seeded data and a 1e-3 tolerance; training a round on another round's problems differs by 0.34.
    bags = torch.rand(30, 7, generator=torch.Generator().manual_seed(3))
    problems = [[0, 1, 2, 3, 4, 5], [6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 16]]
    targets = [[1, 0, 1, 0, 1, 0], [1, 0, 0], [1, 1, 0, 0, 1, 0, 1, 0]]
    together = _nets(3)
    train(together, bags, Batch.pad(problems, targets), epochs=25, lr=0.01)
    for r in range(3):
        alone = _nets(1, seeds=[r])
        train(alone, bags, Batch.pad([problems[r]], [targets[r]]), epochs=25, lr=0.01)
        assert torch.allclose(together.W1[r], alone.W1[0], atol=1e-3)
        assert torch.allclose(together.E[r], alone.E[0], atol=1e-3)
        assert torch.allclose(predict(together, bags, torch.arange(30))[r], predict(alone, bags, torch.arange(30))[0], atol=1e-3)


def test_a_round_without_problems_in_a_phase_keeps_its_weights() -> None:
    nets = _nets(2)
    before = nets.W2[1].detach().clone()
    train(nets, torch.rand(4, 7), Batch.pad([[0, 1], []], [[1, 0], []]), epochs=5, lr=0.05)
    assert torch.equal(nets.W2[1], before) and not torch.equal(nets.W2[0], _nets(2).W2[0])


# --- the experiment ------------------------------------------------------------------------------


def _toy_inputs(selected: frozenset[str] = frozenset({"binomial", "choose", "coin"})) -> ExtractorInputs:
    """60 problems: 'binomial' ones mention choose/binomial, 'normal' ones bell/normal, others filler."""
    rng = np.random.default_rng(0)
    filler = ["find", "the", "probability", "value", "of", "a", "random", "variable", "coin", "die", "mean"]
    token_lists, labels = [], []
    for i in range(60):
        words = list(rng.choice(filler, size=8))
        concepts = set()
        if i % 5 == 0:
            words += ["binomial", "choose"]
            concepts.add("binomial")
        if i % 4 == 1:
            words += ["normal", "bell"]
            concepts.add("normal")
        token_lists.append(words)
        labels.append(frozenset(concepts) if i < 55 else None)
    vocab = sorted({w for t in token_lists for w in t})
    vectors = {w: np.random.default_rng(len(w)).uniform(-0.5, 0.5, 16).astype(np.float32) for w in vocab[::2]}
    return ExtractorInputs(token_lists, labels, vectors, 16, selected, "test")


FAST = TrainConfig(epochs=60, pretrain_epochs=10, lr=0.02, hidden=60, transfer_sources=1)


def test_the_experiment_is_deterministic_given_its_seed() -> None:
    inputs = _toy_inputs()
    one = run_experiment(inputs, ["binomial"], ["down-sampling", "negative-pretraining"], rounds=3, seed=5, config=FAST)
    two = run_experiment(inputs, ["binomial"], ["down-sampling", "negative-pretraining"], rounds=3, seed=5, config=FAST)
    other = run_experiment(inputs, ["binomial"], ["down-sampling", "negative-pretraining"], rounds=3, seed=6, config=FAST)
    assert one == two
    assert one["schemes"] != other["schemes"]


def test_batched_rounds_give_the_figures_of_rounds_one_by_one() -> None:
    inputs = _toy_inputs()
    data = concept_data(inputs, ["normal"], 1)[0]
    features = Features(inputs, 2)
    for key in ["down-sampling", "one-shot+negative-pretraining+words"]:
        batched = scheme_rounds(inputs, features, data, SCHEMES[key], 4, 0, FAST, batched=True)
        alone = scheme_rounds(inputs, features, data, SCHEMES[key], 4, 0, FAST, batched=False)
        assert batched == alone


def test_a_concept_with_a_clear_footprint_is_learned() -> None:
    inputs = _toy_inputs()
    result = run_experiment(inputs, ["binomial", "normal"], ["down-sampling", "down-sampling+words"], rounds=4, seed=0, config=FAST)
    row = result["schemes"]["down-sampling"]
    assert row["fn"] <= 0.25 and row["fp"] <= 0.25, row
    assert set(row["concepts"]) == {"binomial", "normal"} and {"fn", "fn_sd", "fp", "fp_sd"} <= set(row["concepts"]["binomial"])
    assert row["fn_reduction"] == 0.0 or row["fn"] == 0.0
    assert result["concepts"]["binomial"] == {"positives": 11, "negatives": 44}
    assert result["best"].keys() == {"binomial", "normal"}
    probabilities = fit_extractor(inputs, "binomial", "down-sampling", config=FAST, members=2)
    assert probabilities.shape == (60,)
    shows = np.array([i % 5 == 0 for i in range(60)])
    assert probabilities[shows].mean() > 0.5 > probabilities[~shows].mean()


def test_clear_errors_for_what_cannot_be_run() -> None:
    inputs = _toy_inputs()
    with pytest.raises(ValueError, match="'absent' has 0 labelled positive"):
        run_experiment(inputs, ["absent"], rounds=1, config=FAST)
    with pytest.raises(ValueError, match="word selection schemes need selected words"):
        run_experiment(_toy_inputs(frozenset()), ["binomial"], ["down-sampling+words"], rounds=1, config=FAST)
    with pytest.raises(ValueError, match="unknown schemes"):
        run_experiment(inputs, ["binomial"], ["magic"], rounds=1, config=FAST)
    unlabelled = ExtractorInputs(inputs.token_lists, [None] * 60, inputs.word_vectors, 16)
    with pytest.raises(ValueError, match="no problem has expert labels"):
        run_experiment(unlabelled, ["binomial"], ["down-sampling"], rounds=1, config=FAST)


def test_progress_is_reported_and_can_cancel() -> None:
    seen: list[float] = []

    class Stop(Exception):
        pass

    def on_progress(fraction: float) -> None:
        seen.append(fraction)
        if len(seen) == 2:
            raise Stop

    with pytest.raises(Stop):
        run_experiment(_toy_inputs(), ["binomial", "normal"], ["down-sampling", "negative-pretraining"], rounds=1, config=FAST, on_progress=on_progress)
    assert seen == [0.25, 0.5]
