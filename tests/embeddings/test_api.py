from __future__ import annotations

from typing import Any

from django.urls import reverse


def test_labels_triplets_and_votes_over_the_api(
    client: Any, alice: Any, bob: Any, hana: Any, sam: Any, problem_factory: Any, concept_factory: Any
) -> None:
    concept_factory("nchoosek")
    a, b, c = (problem_factory(f"p{i}") for i in range(3))
    client.force_login(alice)
    r = client.put(reverse("api-labels", args=[a.pk]), {"concepts": ["nchoosek"]}, content_type="application/json")
    assert r.status_code == 200 and r.json()["mine"] == ["nchoosek"] and r.json()["ground_truth"] == ["nchoosek"]
    assert "annotators" not in r.json()
    bad = client.put(reverse("api-labels", args=[a.pk]), {"concepts": []}, content_type="application/json")
    assert bad.status_code == 400 and "empty label set" in bad.json()["concepts"][0]
    assert client.post(reverse("api-labels-resolve", args=[a.pk]), {"concepts": ["nchoosek"]}, content_type="application/json").status_code == 403

    created = client.post(reverse("api-triplet-list"), {"anchor": a.pk, "positive": b.pk, "negative": c.pk}, content_type="application/json")
    assert created.status_code == 201
    tid = created.json()["id"]
    client.force_login(bob)
    nxt = client.get(reverse("api-triplet-next")).json()
    assert nxt["id"] == tid and {nxt["left"], nxt["right"]} == {b.pk, c.pk} and "positive" not in nxt
    assert "votes" not in client.get(reverse("api-triplet-detail", args=[tid])).json()  # blind before voting
    pick = "left" if nxt["left"] == b.pk else "right"
    voted = client.post(reverse("api-triplet-vote", args=[tid]), {"pick": pick}, content_type="application/json")
    assert voted.status_code == 201 and voted.json()["votes"] == [{"voter": "bob", "choice": "positive"}]
    assert client.get(reverse("api-triplet-next")).status_code == 204
    assert client.post(reverse("api-triplet-decision", args=[tid]), {"decision": "accept"}, content_type="application/json").status_code == 403

    client.force_login(hana)
    decided = client.post(reverse("api-triplet-decision", args=[tid]), {"decision": "accept"}, content_type="application/json")
    assert decided.json()["status"] == "accepted"
    assert [t["id"] for t in client.get(reverse("api-triplet-list"), {"status": "accepted"}).json()] == [tid]
    labels = client.get(reverse("api-labels", args=[a.pk])).json()
    assert labels["annotators"] == {"alice": ["nchoosek"]}

    client.force_login(sam)
    assert client.get(reverse("api-triplet-list")).status_code == 403
    assert client.get(reverse("api-labels", args=[a.pk])).status_code == 403
