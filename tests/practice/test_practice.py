"""Students practise: the recommended problem, checked answers and self-reports, similar and skip."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from practice.models import Attempt
from tests.practice.course import COUNTING


def offered(client: Any) -> tuple[int, str]:
    page = client.get(reverse("practice:practice"))
    assert page.status_code == 200
    html = page.content.decode()
    pid = int(html.split('data-problem="')[1].split('"')[0])
    reason = html.split('id="reason">')[1].split("</p>")[0]
    return pid, reason


@pytest.mark.django_db
def test_a_wrong_answer_brings_a_similar_problem_and_a_right_one_a_new_concept(client: Any, sam: Any, course: dict[str, Any]) -> None:
    client.force_login(sam)
    first, reason = offered(client)
    assert "first problem" in reason and first in (course["count1"].pk, course["count2"].pk)
    feedback = client.post(reverse("practice:practice"), {"action": "answer", "answer": "7"}).content.decode()
    assert "Not quite." in feedback and 'id="next-problem"' in feedback
    assert Attempt.objects.get().verdict == "incorrect" and Attempt.objects.get().outcome == 0.0

    second, reason = offered(client)
    other = course["count2"].pk if first == course["count1"].pk else course["count1"].pk
    assert second == other and "You did not solve" in reason and "same ideas" in reason
    answer = "20" if second == course["count2"].pk else "10"
    assert "Correct!" in client.post(reverse("practice:practice"), {"action": "answer", "answer": answer}).content.decode()

    third, reason = offered(client)
    assert third == course["binom"].pk and "You solved" in reason and "adds Binomial distribution" in reason and "binomial-distribution" not in reason
    assert "Correct!" in client.post(reverse("practice:practice"), {"action": "answer", "answer": "0.375"}).content.decode()
    fourth, _ = offered(client)
    assert fourth in (first, course["bayes"].pk)  # never a solved problem, never a draft or a closed module


@pytest.mark.django_db
def test_money_in_a_title_a_reason_names_is_a_dollar_sign_not_math(client: Any, sam: Any, course: dict[str, Any]) -> None:
    """The reason sits in a math container (a title may hold a formula): a bare dollar before a digit
    is money there too, in a span KaTeX skips, as the title is everywhere else ("spent $150, $200")."""
    for name in ("count1", "count2"):
        course[name].title = "Three students spent $150, $200, and $225"
        course[name].save()
    client.force_login(sam)
    offered(client)
    client.post(reverse("practice:practice"), {"action": "answer", "answer": "7"})
    _, reason = offered(client)
    dollar = '<span class="no-math">$</span>'
    assert f"You did not solve \u201cThree students spent {dollar}150, {dollar}200, and {dollar}225\u201d" in reason, reason
    progress = client.get(reverse("practice:my-progress")).content.decode()
    assert f"spent {dollar}150" in progress and "spent $150" not in progress

@pytest.mark.django_db
def test_self_reports_skip_and_similar(client: Any, sam: Any, course: dict[str, Any]) -> None:
    client.force_login(sam)
    first, _ = offered(client)
    client.post(reverse("practice:practice"), {"action": "similar"})
    similar, reason = offered(client)
    assert similar != first and "Similar to" in reason
    client.post(reverse("practice:practice"), {"action": "skip"})
    assert Attempt.objects.get().verdict == "skipped"
    after_skip, _ = offered(client)
    assert after_skip != similar
    # A problem without an answer asks for a self-report; an empty submission is refused, nothing stored.
    session = client.session
    session["practice"] = {"problem": course["bayes"].pk, "reason": "test", "kind": "start"}
    session.save()
    page = client.get(reverse("practice:practice")).content.decode()
    assert "no answer to check" in page
    refused = client.post(reverse("practice:practice"), {"action": "answer"})
    assert refused.status_code == 400 and "say whether you solved" in refused.content.decode()
    assert Attempt.objects.count() == 1
    client.post(reverse("practice:practice"), {"action": "answer", "report": "partly"})
    assert Attempt.objects.last().verdict == "partly" and Attempt.objects.last().outcome == 0.5


@pytest.mark.django_db
def test_nothing_left_and_anonymous_users(client: Any, sam: Any, problem_factory: Any) -> None:
    assert client.get(reverse("practice:practice")).status_code == 302  # login first
    client.force_login(sam)
    problem_factory("Closed.", module="closed", labels=COUNTING)
    assert "solved every problem open for practice" in client.get(reverse("practice:practice")).content.decode()


@pytest.mark.django_db
def test_a_problem_deleted_while_the_bank_is_remembered_is_never_offered(settings: Any, sam: Any, course: dict[str, Any]) -> None:
    from practice.selectors import next_problem_for, practice_bank

    practice_bank()
    settings.PRACTICE_BANK_RECHECK_SECONDS = settings.PRACTICE_BANK_COUNT_SECONDS = 3600  # the process keeps its bank
    first, _ = next_problem_for(sam)
    first.delete()
    again, rec = next_problem_for(sam)
    assert again.pk != first.pk and rec.kind == "start"
    assert first.pk not in practice_bank().row  # the bank was read again


@pytest.mark.django_db
def test_the_practice_bank_holds_the_active_runs_unit_vectors_in_float32(course: dict[str, Any]) -> None:
    import numpy as np

    from embeddings.selectors import active_run, run_arrays
    from practice.selectors import practice_bank

    bank = practice_bank()
    ids, stored = run_arrays(active_run())
    assert bank.bank.vectors.dtype == np.float32  # half the memory of float64, per worker process
    rows = [bank.row[int(pid)] for pid in ids]
    norms = np.linalg.norm(stored, axis=1, keepdims=True)
    assert np.allclose(bank.bank.vectors[rows], stored / np.where(norms > 0, norms, 1), atol=1e-6)


@pytest.mark.django_db
def test_similar_and_skip_never_alternate_between_two_problems(client: Any, sam: Any, course: dict[str, Any]) -> None:
    client.force_login(sam)
    shown = [offered(client)[0]]
    for _ in range(2):  # "Show me a similar problem" twice: three different problems (three are open)
        client.post(reverse("practice:practice"), {"action": "similar"})
        shown.append(offered(client)[0])
    assert len(set(shown)) == 3
    client.post(reverse("practice:practice"), {"action": "answer", "report": "not_solved"})
    after, reason = offered(client)
    assert after not in shown[-1:]
    client.post(reverse("practice:practice"), {"action": "skip"})
    _, reason = offered(client)
    assert "You skipped “" in reason and "You solved" not in reason


@pytest.mark.django_db
def test_partly_says_partly(client: Any, sam: Any, course: dict[str, Any]) -> None:
    client.force_login(sam)
    offered(client)
    client.post(reverse("practice:practice"), {"action": "answer", "report": "partly"})
    _, reason = offered(client)
    assert "You partly solved “" in reason and "You solved" not in reason


@pytest.mark.django_db
def test_feedback_repeats_what_was_read_and_checks_each_part(client: Any, sam: Any, course: dict[str, Any]) -> None:
    from problems.models import Problem

    client.force_login(sam)
    first, _ = offered(client)
    Problem.objects.filter(pk=first).update(answer="1365; 0.0923")
    page = client.post(reverse("practice:practice"), {"action": "answer", "answer": "1365, 0.0923"}).content.decode()
    assert "Correct!" in page and "we read <strong>1365; 0.0923</strong>" in page and "<code>1365, 0.0923</code>" in page
    assert "<strong>Answer:</strong>" in page  # the module is open for practice: the answer is shown
    second, _ = offered(client)
    Problem.objects.filter(pk=second).update(answer="0.00144")
    page = client.post(reverse("practice:practice"), {"action": "answer", "answer": "0.002"}).content.decode()
    assert "Not quite." in page and "we read <strong>0.002</strong>" in page


@pytest.mark.django_db
def test_a_form_left_behind_by_back_or_another_tab_never_records_on_the_problem_now_offered(client: Any, sam: Any, course: dict[str, Any]) -> None:
    """The page shows X; "similar" (in another tab, or before Back) moves the offer on to Y. The form
    still on screen for X must not record its answer, or its skip, against Y."""
    client.force_login(sam)
    first, _ = offered(client)
    stale_key = client.session["practice"]["key"]
    client.post(reverse("practice:practice"), {"action": "similar"})
    now, _ = offered(client)
    assert now != first
    answer = "10" if first == course["count1"].pk else "20"  # right for X, wrong for Y
    for action in ("answer", "skip"):
        page = client.post(reverse("practice:practice"), {"action": action, "answer": answer, "problem": first, "submission": stale_key})
        assert page.status_code == 409
        html = page.content.decode()
        assert "nothing was recorded" in html and f'data-problem="{now}"' in html and 'id="feedback"' not in html
    assert not Attempt.objects.exists()
    # The form of the problem on offer still records, on that problem.
    client.post(reverse("practice:practice"), {"action": "answer", "report": "solved", "problem": now})
    assert list(Attempt.objects.values_list("problem_id", "verdict")) == [(now, "solved")]
