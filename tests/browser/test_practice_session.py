"""Issue 16 in Chromium: a student's 15-step session with skips, wrong answers and "similar" never loops;
an instructor's "Rebuild every method" leaves the active embedding as it was."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db(transaction=True)

STEPS = 15
WINDOW = 5


def test_a_student_session_with_skips_and_wrong_answers_never_loops(page: Any, live_server: Any, login: Any, demo_course: None, sam: Any) -> None:
    from embeddings.selectors import active_run

    call_command("rebuild_embeddings", stdout=io.StringIO())
    run = active_run()
    login("sam")
    assert page.url.endswith("/practice/")
    shown: list[int] = []
    last = ""
    for step in range(STEPS):
        pid = int(page.get_attribute("#practice-problem", "data-problem"))
        reason = page.inner_text("#reason")
        assert pid not in shown[-WINDOW:], f"step {step}: problem {pid} again within {WINDOW} steps ({shown})"
        # The reason says what happened, calls a problem similar only at a positive stated similarity.
        if last == "skip":
            assert "You skipped “" in reason, reason
        elif last == "wrong":
            assert "You did not solve “" in reason, reason
        elif last == "similar":
            assert "Similar to “" in reason or "No problem you have not just seen" in reason, reason
        for stated in re.findall(r"similarity (-?[0-9.]+)", reason):
            assert float(stated) > 0, reason
        assert f'data-run="{run.pk}"' in page.inner_html("#active-run")
        shown.append(pid)
        action = ("wrong", "skip", "similar")[step % 3]
        if action == "wrong":
            if page.locator("#answer").count():
                page.fill("#answer", "987654321")
                page.click("button[value=answer]")
                assert "Not quite." in page.inner_text("#feedback")
                assert "we read 987654321" in page.inner_text("#answer-read")
            else:
                page.click("button[value=not_solved]")
            page.click("#next-problem")
        elif action == "skip":
            page.click("#skip")
        else:
            page.click("#similar")
        page.wait_for_selector("#reason")
        last = action
    assert len(set(shown)) >= STEPS - 2  # walks through new problems (only the missed ones may come back later)
    page.click("#nav-my-progress")
    assert page.locator("#recent-attempts tbody tr").count() == 10  # 5 wrong answers and 5 skips; "similar" stores nothing
    assert page.locator("#concept-mastery svg").count() >= 1


def test_an_instructor_rebuilds_every_method_and_the_active_run_stays(
    page: Any, live_server: Any, login: Any, ivan: Any, hana: Any, problem_factory: Any, settings: Any
) -> None:
    from concepts.models import Concept
    from concepts.services import rule_save
    from embeddings.models import EmbeddingRun
    from embeddings.selectors import active_run
    from embeddings.services import triplet_create, triplet_decide

    counting, bayes = ["nchoosek", "permutations"], ["Bayes-formula", "conditional-probability"]
    made = [problem_factory(f"Count {i}: choose", module="m", labels=counting[: 1 + i % 2]) for i in range(4)]
    made += [problem_factory(f"Bayes {i}: posterior", module="m", labels=bayes[: 1 + i % 2]) for i in range(4)]
    triplet_decide(triplet=triplet_create(anchor=made[0], positive=made[1], negative=made[4]), decision="accept", user=hana)
    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bchoose\b", user=ivan, message="r")
    rule_save(concept=Concept.objects.get(slug="Bayes-formula"), pattern=r"\bposterior\b", user=ivan, message="r")
    call_command("extract_concepts", stdout=io.StringIO())
    call_command("rebuild_embeddings", stdout=io.StringIO())
    before = active_run()
    login("ivan")
    page.goto(f"{live_server.url}/lab/")
    assert page.inner_text("#site-default") == "prob2vec on labels"
    assert f'data-run="{before.pk}"' in page.inner_html("#active-run")
    page.set_default_timeout(240_000)  # eager in tests: the request runs every method before it answers
    page.click("#rebuild-all")
    page.wait_for_selector(".messages")
    body = page.inner_text("body")
    assert "rebuilds queued" in body and "The active embedding changes only" in body
    rules = EmbeddingRun.objects.filter(method="prob2vec", source="rules", status="done").first()
    assert rules is not None and rules.pk > before.pk  # a newer Prob2Vec run exists, on another source
    assert active_run() == before
    assert f'data-run="{before.pk}"' in page.inner_html("#active-run") and page.locator("#in-use").count() == 1
    # Making another run active is explicit, and the page compares both accuracies first.
    page.goto(f"{live_server.url}/lab/runs/{rules.pk}/")
    assert page.locator("#this-run-accuracy").count() == 1 and page.locator("#active-run-accuracy").count() == 1
    page.click("#make-active-button")
    page.wait_for_selector("text=is now the active embedding")
    assert active_run() == rules
