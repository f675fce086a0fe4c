from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from concepts.models import SelectedWord
from embeddings.models import EmbeddingRun


@pytest.fixture
def texts(problem_factory: Any) -> None:
    problem_factory("Toss a fair coin three times; find the probability of two heads.", labels=["nchoosek"])
    problem_factory("Toss a die; the probability of a six.", labels=["nchoosek"])


def test_tas_select_words_from_the_bank_vocabulary(client: Any, alice: Any, texts: None) -> None:
    client.force_login(alice)
    page = client.get(reverse("concepts:words")).content.decode()
    assert 'id="selected-size">0</strong>' in page and ">toss</label>" in page and ">probability</label>" in page
    shown = ["toss", "probability", "coin"]
    client.post(reverse("concepts:words"), {"shown": shown, "words": ["toss", "coin"], "action": "save"})
    assert set(SelectedWord.objects.values_list("word", flat=True)) == {"toss", "coin"}
    assert SelectedWord.objects.get(word="toss").selected_by == alice
    client.post(reverse("concepts:words"), {"shown": ["coin", "probability"], "words": ["probability"], "action": "save"})
    assert set(SelectedWord.objects.values_list("word", flat=True)) == {"toss", "probability"}
    client.post(reverse("concepts:words"), {"shown": ["six", "die"], "action": "select_all"})
    client.post(reverse("concepts:words"), {"shown": ["toss"], "action": "clear_all"})
    assert set(SelectedWord.objects.values_list("word", flat=True)) == {"probability", "six", "die"}
    found = client.get(reverse("concepts:words"), {"q": "prob"}).content.decode()
    assert ">probability</label>" in found and ">toss</label>" not in found and 'id="selected-size">3</strong>' in found


def test_students_cannot_select_words(client: Any, sam: Any, texts: None) -> None:
    client.force_login(sam)
    assert client.get(reverse("concepts:words")).status_code in (302, 403)
    client.post(reverse("concepts:words"), {"shown": ["toss"], "words": ["toss"]})
    assert not SelectedWord.objects.exists()


def test_selected_word_baselines_need_a_selection_and_then_use_it(texts: None) -> None:
    with pytest.raises(CommandError, match="no selected words yet"):
        call_command("rebuild_embeddings", "--method", "glove-avg-selected", stdout=io.StringIO(), stderr=io.StringIO())
    SelectedWord.objects.bulk_create([SelectedWord(word=w) for w in ["coin", "die", "probability"]])
    out = io.StringIO()
    call_command("rebuild_embeddings", "--method", "glove-avg-selected", stdout=out)
    run = EmbeddingRun.objects.filter(method="glove-avg-selected", status="done").get()
    assert run.notes["selected_words"] == 3 and run.notes["word_vectors"] == "GloVe trained on the bank's own text"
    SelectedWord.objects.create(word="heads")
    call_command("rebuild_embeddings", "--method", "glove-avg-selected", stdout=io.StringIO())
    assert EmbeddingRun.objects.filter(method="glove-avg-selected", status="done").count() == 2  # a new selection is a new input
