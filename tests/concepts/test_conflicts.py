"""Two people saving the same rule or label set from stale pages: the second gets a conflict with a
diff, nothing is overwritten, and resubmitting on the new base is a deliberate overwrite."""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Callable

import pytest
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse

from concepts.models import ConceptRule, ConceptRuleVersion, LabelResolution, LabelSet
from concepts.services import (
    LabelsConflict,
    RuleConflict,
    labels_resolve,
    labels_set,
    rule_diff,
    rule_save,
)


@pytest.fixture
def nchoosek(concept_factory: Any) -> Any:
    return concept_factory("nchoosek")


@pytest.fixture
def concepts(concept_factory: Any) -> dict[str, Any]:
    return {s: concept_factory(s) for s in ["nchoosek", "permutations", "Bayes-formula", "Poisson-distribution"]}


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def hidden(html: str, name: str) -> str:
    found = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)"', html)
    assert found, f"no hidden {name} in the page"
    return found.group(1)


def rule_form(page: Any, pattern: str, **extra: Any) -> dict[str, Any]:
    data = {"pattern": pattern, "ignore_case": "on", "enabled": "on", "base_version": hidden(page.content.decode(), "base_version")}
    data.update(extra)
    return {k: v for k, v in data.items() if v is not None}


# --- rules: the editor page ----------------------------------------------------------------------


def test_the_second_stale_save_gets_a_conflict_with_a_diff_and_overwrites_nothing(nchoosek: Any, alice: Any, bob: Any) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom", user=alice)
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    a, b = logged_in(alice), logged_in(bob)
    page_a, page_b = a.get(url), b.get(url)
    assert hidden(page_a.content.decode(), "base_version") == "1"

    assert a.post(url, rule_form(page_a, r"\\binom|\bchoose\b")).status_code == 302
    response = b.post(url, rule_form(page_b, r"\\binom|\\choose"))

    assert response.status_code == 409
    html = response.content.decode()
    assert 'id="rule-conflict"' in html
    assert "changed by alice" in html and "it is now version 2" in html and "you started from version 1" in html
    diff = re.search(r'<pre class="diff" id="rule-conflict-diff">(.*?)</pre>', html, re.S).group(1)
    assert diff.splitlines() == [
        "--- saved (version 2)",
        "+++ yours",
        "@@ -1,2 +1,2 @@",  # one line per branch: the diff says which branch changed
        r" \\binom",
        r"-\bchoose\b",
        r"+\\choose",
    ]
    rule = ConceptRule.objects.get(concept=nchoosek)
    assert (rule.pattern, rule.version, rule.updated_by) == (r"\\binom|\bchoose\b", 2, alice)
    assert ConceptRuleVersion.objects.filter(rule=rule).count() == 2  # exactly one new version: alice's

    # Bob's pattern is kept in the form, now on the saved version, so saving again is deliberate.
    assert r"\\binom|\\choose</textarea>" in html
    assert hidden(html, "base_version") == "2"
    assert b.post(url, rule_form(response, r"\\binom|\\choose")).status_code == 302
    rule.refresh_from_db()
    assert (rule.pattern, rule.version, rule.updated_by) == (r"\\binom|\\choose", 3, bob)


def test_two_first_saves_of_a_new_rule_conflict_too(nchoosek: Any, alice: Any, bob: Any) -> None:
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    a, b = logged_in(alice), logged_in(bob)
    page_a, page_b = a.get(url), b.get(url)
    assert hidden(page_b.content.decode(), "base_version") == "0"
    assert a.post(url, rule_form(page_a, "binom")).status_code == 302
    response = b.post(url, rule_form(page_b, "choose"))
    assert response.status_code == 409 and "changed by alice" in response.content.decode()
    assert ConceptRule.objects.get(concept=nchoosek).pattern == "binom"
    assert ConceptRuleVersion.objects.count() == 1


def test_a_flag_change_shows_in_the_diff(nchoosek: Any, alice: Any, bob: Any) -> None:
    rule_save(concept=nchoosek, pattern="binom", user=alice)
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    a, b = logged_in(alice), logged_in(bob)
    page_a, page_b = a.get(url), b.get(url)
    a.post(url, rule_form(page_a, "binom|choose"))
    response = b.post(url, rule_form(page_b, "binom", enabled=None))  # bob only unticks "enabled"
    assert response.status_code == 409
    html = response.content.decode()
    assert " binom\n-choose\n-[enabled = yes]\n+[enabled = no]" in html  # a line per branch, then the flag
    assert "ignore_case" not in re.search(r'<pre class="diff"[^>]*>(.*?)</pre>', html, re.S).group(1)


def test_a_stale_page_that_submits_what_is_already_saved_is_not_a_conflict(nchoosek: Any, alice: Any, bob: Any) -> None:
    rule_save(concept=nchoosek, pattern="binom", user=alice)
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    a, b = logged_in(alice), logged_in(bob)
    page_a, page_b = a.get(url), b.get(url)
    a.post(url, rule_form(page_a, "binom|choose"))
    assert b.post(url, rule_form(page_b, "binom|choose")).status_code == 302  # nothing of alice's is lost
    assert ConceptRule.objects.get(concept=nchoosek).version == 2


def test_a_revert_from_a_stale_history_page_is_refused(nchoosek: Any, alice: Any, bob: Any) -> None:
    rule_save(concept=nchoosek, pattern="binom", user=alice)
    rule_save(concept=nchoosek, pattern="binom|choose", user=alice)
    history = logged_in(bob).get(reverse("concepts:rule-history", args=["nchoosek"])).content.decode()
    base = hidden(history, "base_version")
    rule_save(concept=nchoosek, pattern="binom|choose|nCr", user=alice)  # v3 after bob opened the history
    b = logged_in(bob)
    response = b.post(reverse("concepts:rule-revert", args=["nchoosek", 1]), {"base_version": base}, follow=True)
    assert "changed by alice" in response.content.decode() and "it is now version 3" in response.content.decode()
    assert ConceptRule.objects.get(concept=nchoosek).version == 3
    b.post(reverse("concepts:rule-revert", args=["nchoosek", 1]), {"base_version": "3"})
    assert ConceptRule.objects.get(concept=nchoosek).pattern == "binom"


def test_rule_diff_runs_from_the_saved_rule_to_the_submitted_one(nchoosek: Any) -> None:
    assert rule_diff(saved=None, pattern="binom", ignore_case=True, enabled=True).splitlines() == [
        "--- saved (no rule)",
        "+++ yours",
        "@@ -0,0 +1,3 @@",
        "+binom",
        "+[ignore_case = yes]",
        "+[enabled = yes]",
    ]
    saved = rule_save(concept=nchoosek, pattern="binom")
    assert rule_diff(saved=saved, pattern="binom", ignore_case=True, enabled=True) == ""


@pytest.mark.django_db(transaction=True)
def test_two_saves_at_the_same_moment_queue_on_the_lock_and_the_second_conflicts(concept_factory: Any, make_user: Callable[..., Any]) -> None:
    """Real concurrency: the second save waits for the first to commit, then sees its version."""
    concept = concept_factory("nchoosek")
    alice, bob = make_user("alice", "ta"), make_user("bob", "ta")
    rule_save(concept=concept, pattern="binom", user=alice)
    outcome: list[object] = []

    def bobs_save() -> None:
        try:
            outcome.append(rule_save(concept=concept, pattern="choose", user=bob, base_version=1))
        except Exception as exc:  # noqa: BLE001 - the assertion below says which one was expected
            outcome.append(exc)
        finally:
            connection.close()

    with transaction.atomic():
        rule_save(concept=concept, pattern="binom|choose", user=alice, base_version=1)
        other = threading.Thread(target=bobs_save)
        other.start()
        time.sleep(0.5)  # bob's save is now waiting for alice's transaction
        assert outcome == []
    other.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], RuleConflict), outcome
    assert ConceptRule.objects.get(concept=concept).pattern == "binom|choose"
    assert ConceptRuleVersion.objects.count() == 2


# --- rules: the API ------------------------------------------------------------------------------


def test_the_api_answers_409_with_the_current_rule_and_a_diff(nchoosek: Any, alice: Any, bob: Any) -> None:
    url = reverse("api-rule-detail", args=["nchoosek"])
    a, b = logged_in(alice), logged_in(bob)
    assert a.put(url, {"pattern": "binom"}, content_type="application/json").json()["version"] == 1
    base = b.get(url).json()["version"]
    assert a.put(url, {"pattern": "binom|choose", "base_version": base}, content_type="application/json").status_code == 200

    response = b.put(url, {"pattern": "binom|nCr", "base_version": base}, content_type="application/json")
    assert response.status_code == 409
    body = response.json()
    assert "changed by alice" in body["detail"]
    assert {k: body["current"][k] for k in ("pattern", "version", "updated_by", "enabled")} == {
        "pattern": "binom|choose", "version": 2, "updated_by": "alice", "enabled": True,
    }
    assert body["diff"].splitlines()[-3:] == [" binom", "-choose", "+nCr"]  # a line per branch
    assert ConceptRuleVersion.objects.count() == 2

    again = b.put(url, {"pattern": "binom|nCr", "base_version": body["current"]["version"]}, content_type="application/json")
    assert again.status_code == 200 and again.json()["version"] == 3


def test_the_api_without_base_version_saves_as_before(nchoosek: Any, alice: Any, bob: Any) -> None:
    url = reverse("api-rule-detail", args=["nchoosek"])
    logged_in(alice).put(url, {"pattern": "binom"}, content_type="application/json")
    response = logged_in(bob).put(url, {"pattern": "choose"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["version"] == 2


def test_the_revert_api_takes_a_base_version(nchoosek: Any, alice: Any) -> None:
    rule_save(concept=nchoosek, pattern="binom")
    rule_save(concept=nchoosek, pattern="choose")
    url = reverse("api-rule-revert", args=["nchoosek", 1])
    stale = logged_in(alice).post(url, {"base_version": 1}, content_type="application/json")
    assert stale.status_code == 409 and stale.json()["current"]["pattern"] == "choose"
    assert stale.json()["diff"].splitlines()[-2:] == ["-choose", "+binom"]
    ok = logged_in(alice).post(url, {"base_version": 2}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["pattern"] == "binom"


# --- label sets and resolutions ------------------------------------------------------------------


def label_form(page: Any, slugs: list[str], **extra: str) -> dict[str, Any]:
    html = page.content.decode()
    data: dict[str, Any] = {"queue": "mine", "concepts": slugs, "then": "stay", "base_version": hidden(html, "base_version")}
    if 'name="resolution_base_version"' in html:
        data["resolution_base_version"] = hidden(html, "resolution_base_version")
    data.update(extra)
    return data


def saved_set(**lookup: Any) -> set[str]:
    label_set = LabelSet.objects.get(**lookup)
    return {c.slug for c in label_set.concepts.all()}


def test_a_label_set_saved_from_two_tabs_conflicts_with_a_set_diff(problem_factory: Any, concepts: dict[str, Any], alice: Any) -> None:
    p = problem_factory("Choose 3 of 10.")
    labels_set(problem=p, annotator=alice, concepts=[concepts["nchoosek"], concepts["Poisson-distribution"]])
    url = reverse("concepts:label", args=[p.pk])
    client = logged_in(alice)
    tab1, tab2 = client.get(url), client.get(url)
    assert hidden(tab1.content.decode(), "base_version") == "1"

    assert client.post(url, label_form(tab1, ["nchoosek", "Poisson-distribution", "permutations"])).status_code == 302
    response = client.post(url, label_form(tab2, ["nchoosek", "Bayes-formula"]))

    assert response.status_code == 409
    html = response.content.decode()
    assert "Your labels of this problem were changed by alice" in html
    assert "+ Bayes-formula, − Poisson-distribution, − permutations" in html
    assert saved_set(problem=p, annotator=alice) == {"nchoosek", "Poisson-distribution", "permutations"}
    assert LabelSet.objects.get(problem=p, annotator=alice).version == 2
    # The second tab's choice stays ticked, on the new base.
    assert 'value="Bayes-formula" checked' in html and 'value="permutations" checked' not in html
    assert hidden(html, "base_version") == "2"
    assert client.post(url, label_form(response, ["nchoosek", "Bayes-formula"])).status_code == 302
    assert saved_set(problem=p, annotator=alice) == {"nchoosek", "Bayes-formula"}


def test_two_head_tas_resolving_the_same_problem_conflict(
    problem_factory: Any, concepts: dict[str, Any], hana: Any, make_user: Callable[..., Any]
) -> None:
    harry = make_user("harry", "head_ta")
    p = problem_factory("Choose 3 of 10.")
    url = reverse("concepts:label", args=[p.pk])
    h, r = logged_in(hana), logged_in(harry)
    page_h, page_r = h.get(url), r.get(url)
    assert hidden(page_r.content.decode(), "resolution_base_version") == "0"

    assert h.post(url, label_form(page_h, ["nchoosek"], action="resolve")).status_code == 302
    response = r.post(url, label_form(page_r, ["permutations"], action="resolve"))

    assert response.status_code == 409
    html = response.content.decode()
    assert "The resolution of this problem was changed by hana" in html and "+ permutations, − nchoosek" in html
    resolution = LabelResolution.objects.get(problem=p)
    assert ({c.slug for c in resolution.concepts.all()}, resolution.resolved_by, resolution.version) == ({"nchoosek"}, hana, 1)
    assert hidden(html, "resolution_base_version") == "1"
    assert r.post(url, label_form(response, ["permutations"], action="resolve")).status_code == 302
    resolution.refresh_from_db()
    assert ({c.slug for c in resolution.concepts.all()}, resolution.resolved_by, resolution.version) == ({"permutations"}, harry, 2)


def test_the_labels_api_answers_409_with_the_saved_set_and_a_diff(problem_factory: Any, concepts: dict[str, Any], alice: Any) -> None:
    p = problem_factory("x")
    url = reverse("api-labels", args=[p.pk])
    client = logged_in(alice)
    base = client.get(url).json()["mine_version"]
    assert base == 0
    assert client.put(url, {"concepts": ["nchoosek"], "base_version": base}, content_type="application/json").json()["mine_version"] == 1
    response = client.put(url, {"concepts": ["permutations"], "base_version": base}, content_type="application/json")
    assert response.status_code == 409
    body = response.json()
    assert body["current"]["concepts"] == ["nchoosek"] and body["current"]["version"] == 1
    assert (body["diff"], body["add"], body["remove"]) == ("+ permutations, − nchoosek", ["permutations"], ["nchoosek"])
    assert saved_set(problem=p, annotator=alice) == {"nchoosek"}
    ok = client.put(url, {"concepts": ["permutations"], "base_version": 1}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["mine"] == ["permutations"]
    # Without base_version the API saves as before.
    assert client.put(url, {"concepts": ["Bayes-formula"]}, content_type="application/json").status_code == 200


def test_the_resolve_api_answers_409(problem_factory: Any, concepts: dict[str, Any], hana: Any, make_user: Callable[..., Any]) -> None:
    harry = make_user("harry", "head_ta")
    p = problem_factory("x")
    url = reverse("api-labels-resolve", args=[p.pk])
    assert logged_in(hana).post(url, {"concepts": ["nchoosek"], "base_version": 0}, content_type="application/json").json()["resolution_version"] == 1
    stale = logged_in(harry).post(url, {"concepts": ["permutations"], "base_version": 0}, content_type="application/json")
    assert stale.status_code == 409 and stale.json()["current"]["updated_by"] == "hana" and stale.json()["diff"] == "+ permutations, − nchoosek"
    assert {c.slug for c in LabelResolution.objects.get(problem=p).concepts.all()} == {"nchoosek"}


def test_label_services_skip_the_check_without_a_base_and_when_nothing_differs(
    problem_factory: Any, concepts: dict[str, Any], alice: Any, hana: Any
) -> None:
    p = problem_factory("x")
    labels_set(problem=p, annotator=alice, concepts=[concepts["nchoosek"]])
    labels_set(problem=p, annotator=alice, concepts=[concepts["nchoosek"]], base_version=0)  # same set: nothing to lose
    assert LabelSet.objects.get(problem=p).version == 1
    with pytest.raises(LabelsConflict):
        labels_set(problem=p, annotator=alice, concepts=[concepts["permutations"]], base_version=0)
    labels_set(problem=p, annotator=alice, concepts=[concepts["permutations"]])  # scripts and imports: no check
    assert LabelSet.objects.get(problem=p).version == 2
    labels_resolve(problem=p, concepts=[concepts["nchoosek"]], user=hana, base_version=0)
    with pytest.raises(LabelsConflict, match="resolution of this problem was changed by hana"):
        labels_resolve(problem=p, concepts=[concepts["permutations"]], user=hana, base_version=0)
