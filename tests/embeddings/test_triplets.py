from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.urls import reverse

from embeddings.models import SimilarityTriplet, TripletVote
from embeddings.selectors import candidates_swapped
from embeddings.services import TripletRejected, triplet_create, triplet_decide, triplet_vote


@pytest.fixture
def trio(problem_factory: Any) -> dict[str, Any]:
    return {
        "a": problem_factory("Choose 3 of 10: $\\binom{10}{3}$.", title="Anchor", collection="c", source_id="a"),
        "b": problem_factory("Choose 2 of 8 people.", title="Close", collection="c", source_id="b"),
        "c": problem_factory("Arrange 5 books in a row.", title="Far", collection="c", source_id="c"),
        "d": problem_factory("Arrange the letters of WORD.", title="Other", collection="c", source_id="d"),
        "x": problem_factory("Bayes.", title="Elsewhere", module="conditional probability", collection="c", source_id="x"),
    }


def test_triplets_need_three_problems_of_one_module_once(trio: dict[str, Any], alice: Any) -> None:
    triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["c"], user=alice)
    with pytest.raises(TripletRejected, match="already been proposed"):
        triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["c"], user=alice)
    with pytest.raises(TripletRejected, match="one module"):
        triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["x"], user=alice)
    with pytest.raises(TripletRejected, match="three different problems"):
        triplet_create(anchor=trio["a"], positive=trio["a"], negative=trio["c"], user=alice)


def test_judging_is_blind_and_maps_left_right_back_to_roles(client: Any, trio: dict[str, Any], alice: Any, bob: Any) -> None:
    triplet = triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["c"], user=alice)
    triplet_vote(triplet=triplet, voter=bob, choice="negative")
    charlie_ta = type(bob).objects.create_user("carol", password="x")
    charlie_ta.groups.add(*bob.groups.all())
    client.force_login(charlie_ta)
    detail = client.get(reverse("embeddings:triplet-detail", args=[triplet.pk])).content.decode()
    assert "Votes are hidden" in detail and "bob:" not in detail
    page = client.get(reverse("embeddings:triplet-judge")).content.decode()
    swapped = candidates_swapped(triplet, charlie_ta)
    left_title, right_title = ("Far", "Close") if swapped else ("Close", "Far")
    assert page.index(left_title) < page.index(right_title)  # left card first
    assert "bob" not in page
    client.post(reverse("embeddings:triplet-judge"), {"triplet": triplet.pk, "pick": "left"})
    assert TripletVote.objects.get(voter=charlie_ta).choice == ("negative" if swapped else "positive")
    detail = client.get(reverse("embeddings:triplet-detail", args=[triplet.pk])).content.decode()
    assert "bob: C is closer" in detail  # in the letters the page shows (A, B, C)
    assert "Nothing to judge" in client.get(reverse("embeddings:triplet-judge")).content.decode()


def test_the_proposer_does_not_judge(trio: dict[str, Any], alice: Any) -> None:
    triplet = triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["c"], user=alice)
    with pytest.raises(TripletRejected, match="proposer"):
        triplet_vote(triplet=triplet, voter=alice, choice="positive")


def test_the_votes_note_tells_the_proposer_and_a_judge_of_a_decided_triplet_why_they_see_no_votes(
    client: Any, trio: dict[str, Any], alice: Any, bob: Any, hana: Any
) -> None:
    """Both were told "Votes are hidden until you have judged this triplet", which neither ever can."""
    triplet = triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["c"], user=alice)
    url = reverse("embeddings:triplet-detail", args=[triplet.pk])
    client.force_login(alice)
    page = client.get(url).content.decode()
    assert "You proposed this triplet, so you do not judge it" in page and "until you have judged" not in page
    client.force_login(bob)
    assert "Votes are hidden until you have judged this triplet." in client.get(url).content.decode()
    triplet_decide(triplet=triplet, decision="accept", user=hana)
    page = client.get(url).content.decode()
    assert "This triplet has been decided (accepted), so it is judged no more" in page and "until you have judged" not in page


def test_only_the_head_ta_decides_and_swap_flips_roles_and_votes(
    client: Any, trio: dict[str, Any], alice: Any, bob: Any, hana: Any
) -> None:
    triplet = triplet_create(anchor=trio["a"], positive=trio["c"], negative=trio["b"], user=alice)
    triplet_vote(triplet=triplet, voter=bob, choice="negative")
    client.force_login(bob)
    assert client.post(reverse("embeddings:triplet-decide", args=[triplet.pk]), {"decision": "accept"}).status_code in (302, 403)
    assert SimilarityTriplet.objects.get().status == "proposed"
    assert client.get(reverse("embeddings:triplet-consensus")).status_code in (302, 403)
    client.force_login(hana)
    page = client.get(reverse("embeddings:triplet-consensus")).content.decode()
    assert f'id="triplet-{triplet.pk}"' in page and "0 · 1 · 0" in page
    client.post(reverse("embeddings:triplet-decide", args=[triplet.pk]), {"decision": "swap"})
    triplet.refresh_from_db()
    assert (triplet.positive, triplet.negative, triplet.status, triplet.decided_by) == (trio["b"], trio["c"], "accepted", hana)
    assert TripletVote.objects.get().choice == "positive"
    with pytest.raises(TripletRejected, match="already been decided"):
        triplet_vote(triplet=triplet, voter=hana, choice="positive")


def test_the_consensus_page_flags_contradictions(client: Any, trio: dict[str, Any], alice: Any, hana: Any) -> None:
    a, b, c, d = trio["a"], trio["b"], trio["c"], trio["d"]
    t1 = triplet_create(anchor=a, positive=b, negative=c, user=alice)
    t2 = triplet_create(anchor=a, positive=c, negative=d, user=alice)
    t3 = triplet_create(anchor=a, positive=d, negative=b, user=alice)
    client.force_login(hana)
    page = client.get(reverse("embeddings:triplet-consensus")).content.decode()
    assert page.count('class="contradiction"') == 3 and "3 triplets on a contradiction cycle" in page
    triplet_decide(triplet=t3, decision="reject", user=hana)
    page = client.get(reverse("embeddings:triplet-consensus") + "?status=all").content.decode()
    assert 'class="contradiction"' not in page
    assert {t1.pk, t2.pk}


def test_proposing_through_the_page(client: Any, trio: dict[str, Any], alice: Any) -> None:
    client.force_login(alice)
    module = trio["a"].module_id
    page = client.get(reverse("embeddings:triplet-propose"), {"module": module, "anchor": trio["a"].pk, "positive": trio["b"].pk, "negative": trio["c"].pk})
    body = page.content.decode()
    assert "Anchor" in body and "Close" in body and "Far" in body and 'id="candidates"' in body
    client.post(reverse("embeddings:triplet-propose"), {"anchor": trio["a"].pk, "positive": trio["b"].pk, "negative": trio["c"].pk, "note": "both choose"})
    t = SimilarityTriplet.objects.get()
    assert (t.proposed_by, t.note, t.status) == (alice, "both choose", "proposed")


@pytest.mark.parametrize("name", ["embeddings:triplet-home", "embeddings:triplet-judge", "embeddings:triplet-propose"])
def test_students_never_see_triplets(client: Any, sam: Any, name: str) -> None:
    client.force_login(sam)
    assert client.get(reverse(name)).status_code in (302, 403)


def test_import_and_export_triplets(tmp_path: Path, trio: dict[str, Any]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([
        json.dumps({"anchor": "a", "positive": "b", "negative": "c"}),
        json.dumps({"anchor": "a", "positive": "b", "negative": "x"}),
        json.dumps({"anchor": "a", "positive": "zz", "negative": "c"}),
        json.dumps({"anchor": "a", "positive": "b"}),
        json.dumps({"anchor": "a", "positive": "b", "negative": "c"}),
    ]))
    err = io.StringIO()
    with pytest.raises(CommandError, match="4 bad line"):
        call_command("import_triplets", str(bad), "--collection", "c", stderr=err)
    assert ":2: all three problems must come from one module" in err.getvalue()
    assert ":3: no problem 'zz' in collection 'c' (positive)" in err.getvalue()
    assert ":4: missing 'negative'" in err.getvalue() and ":5: duplicate triplet (first on line 1)" in err.getvalue()
    assert not SimilarityTriplet.objects.exists()
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"anchor": "a", "positive": "b", "negative": "c", "extra": 1}) + "\n")
    out = io.StringIO()
    call_command("import_triplets", str(good), "--collection", "c", "--status", "accepted", stdout=out)
    assert "1 triplets created, 0 updated (accepted)" in out.getvalue()
    assert SimilarityTriplet.objects.get().status == "accepted"
    exported = tmp_path / "out.jsonl"
    call_command("export_triplets", str(exported), "--collection", "c", stderr=io.StringIO())
    assert json.loads(exported.read_text()) == {"anchor": "a", "positive": "b", "negative": "c", "status": "accepted"}


def test_an_import_reads_ids_with_spaces_around_them_as_the_problem_and_label_imports_do(tmp_path: Path, trio: dict[str, Any]) -> None:
    """import_problems stores " a " as "a" and import_labels finds it by " a "; a triplet line naming it
    the same way was refused as "no problem ' a '"."""
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"anchor": " a ", "positive": "b\t", "negative": "\nc"}) + "\n")
    out = io.StringIO()
    call_command("import_triplets", str(path), "--collection", "c", stdout=out, stderr=io.StringIO())
    assert "1 triplets created" in out.getvalue()
    assert SimilarityTriplet.objects.get().anchor == trio["a"]


def test_an_import_refuses_a_triplet_whose_candidates_are_the_other_way_round_by_its_line(tmp_path: Path, trio: dict[str, Any]) -> None:
    """(A, B, C) and (A, C, B) are one triplet: in one file, or against a stored one (a head TA may have
    swapped it), the line is refused with its number and nothing is written."""
    lines = [
        json.dumps({"anchor": "a", "positive": "b", "negative": "c"}),
        json.dumps({"anchor": "a", "positive": "c", "negative": "b"}),
        json.dumps({"anchor": "a", "positive": "b", "negative": "d"}),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 bad line"):
        call_command("import_triplets", str(path), "--collection", "c", stderr=err)
    assert ":2: the triplet of line 1 with its two candidates the other way round" in err.getvalue()
    assert not SimilarityTriplet.objects.exists()
    triplet_create(anchor=trio["a"], positive=trio["c"], negative=trio["b"])  # stored the other way round
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 bad line"):
        call_command("import_triplets", str(path), "--collection", "c", "--status", "accepted", stderr=err)
    assert ":1: a triplet with this anchor and these two candidates has already been proposed" in err.getvalue()
    assert SimilarityTriplet.objects.count() == 1 and SimilarityTriplet.objects.get().status == "proposed"
    path.write_text(json.dumps({"anchor": "a", "positive": "c", "negative": "b"}) + "\n")  # the stored order: no error
    call_command("import_triplets", str(path), "--collection", "c", "--status", "accepted", stdout=io.StringIO())
    assert SimilarityTriplet.objects.get().status == "accepted"


@pytest.mark.django_db(transaction=True)
def test_the_same_triplet_proposed_at_the_same_moment_in_the_other_order_is_refused(trio: dict[str, Any], alice: Any, bob: Any) -> None:
    """Real concurrency: bob's proposal waits for alice's to commit, then sees it."""
    outcome: list[object] = []

    def bobs_proposal() -> None:
        try:
            outcome.append(triplet_create(anchor=trio["a"], positive=trio["c"], negative=trio["b"], user=bob))
        except Exception as exc:  # noqa: BLE001 - the assertion below says which one was expected
            outcome.append(exc)
        finally:
            connection.close()

    with transaction.atomic():
        triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["c"], user=alice)
        other = threading.Thread(target=bobs_proposal)
        other.start()
        time.sleep(0.5)  # bob's proposal is now waiting for alice's transaction
    other.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], TripletRejected), outcome
    assert SimilarityTriplet.objects.count() == 1


def test_a_vote_read_before_the_head_ta_swapped_the_triplet_is_refused(trio: dict[str, Any], alice: Any, bob: Any, hana: Any) -> None:
    """The judge's request read the triplet, then the head TA swapped it: "positive" named the other problem."""
    triplet = triplet_create(anchor=trio["a"], positive=trio["b"], negative=trio["c"], user=alice)
    as_read = SimilarityTriplet.objects.get(pk=triplet.pk)
    triplet_decide(triplet=triplet, decision="swap", user=hana)
    with pytest.raises(TripletRejected, match="already been decided"):
        triplet_vote(triplet=as_read, voter=bob, choice="positive")
    assert not TripletVote.objects.exists()
