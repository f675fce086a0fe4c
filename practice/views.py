"""Practice pages: the practice page (students), my progress, class progress and one student's page (course staff)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from problems.roles import permission_required
from problems.selectors import problem_get_for_user


# --- practice (students) -----------------------------------------------------------------------------

PRACTICE_SESSION_KEY = "practice"
PRACTICE_RECENT_KEY = "practice_recent"  # the problems last offered, oldest first
PRACTICE_RECENT_LENGTH = 20


def _offer(request: HttpRequest, *, mode: str = "next", current_id: int | None = None) -> dict[str, Any] | None:
    """Choose a problem for the student and remember it (and why) in the session, with a fresh key that
    the form sends back: a form submitted twice is stored once."""
    import uuid

    from practice.selectors import next_problem_for

    recent = [pid for pid in request.session.get(PRACTICE_RECENT_KEY, []) if isinstance(pid, int)]
    found = next_problem_for(request.user, mode=mode, current_id=current_id, recent_ids=recent)
    if found is None:
        request.session.pop(PRACTICE_SESSION_KEY, None)
        return None
    problem, rec = found
    offer = {"problem": problem.pk, "reason": rec.reason, "kind": rec.kind, "key": uuid.uuid4().hex}
    request.session[PRACTICE_SESSION_KEY] = offer
    # Offers moved past without an attempt ("similar") are remembered too, so no two problems alternate.
    request.session[PRACTICE_RECENT_KEY] = (recent + [problem.pk])[-PRACTICE_RECENT_LENGTH:]
    return offer


def _offered_problem(request: HttpRequest, offer: dict[str, Any] | None) -> Any:
    """The offered problem while it is still open for practice (a module may close meanwhile), else None."""
    from problems.selectors import problem_open_for_practice

    if not offer:
        return None
    try:
        problem = problem_get_for_user(request.user, offer["problem"])
    except Http404:
        return None
    return problem if problem_open_for_practice(problem) else None


@login_required
@require_http_methods(["GET", "POST"])
def practice(request: HttpRequest) -> HttpResponse:
    """The recommended problem; answer it, self-report, skip, or ask for a similar one."""
    from practice.services import AttemptRejected, attempt_record

    offer = request.session.get(PRACTICE_SESSION_KEY)
    problem = _offered_problem(request, offer)
    if problem is None:
        offer = None
    if request.method == "POST" and problem is not None and request.POST.get("problem", str(problem.pk)) != str(problem.pk):
        # A form left on screen for another problem (Back after "similar", a second tab): its answer or
        # skip is not about the problem now on offer, so it must not be recorded against it.
        error = "That form was for a problem that is no longer the one on offer (another tab, or Back): nothing was recorded. Here is your current problem."
        return render(request, "practice/practice.html", {"problem": problem, "offer": offer, "error": error}, status=409)
    if request.method == "POST" and problem is not None:
        actions = request.POST.getlist("action") or ["answer"]
        action = actions[-1]  # the hidden default comes first; a clicked button's value after it
        if action == "similar":
            _offer(request, mode="similar", current_id=problem.pk) or _offer(request)
            return redirect("practice:practice")
        try:
            recorded = attempt_record(
                student=request.user, problem=problem, answer=request.POST.get("answer", "") if action == "answer" else "",
                self_report=request.POST.get("report", ""), skip=action == "skip", because=offer["reason"],
                client_key=(request.POST.get("submission") or offer.get("key") or "")[:64], practice_only=True,
            )
        except AttemptRejected as exc:
            return render(request, "practice/practice.html", {"problem": problem, "offer": offer, "error": str(exc), "answer": request.POST.get("answer", "")}, status=400)
        request.session.pop(PRACTICE_SESSION_KEY, None)
        if action == "skip":
            return redirect("practice:practice")
        return render(request, "practice/practice.html", {"problem": problem, "offer": offer, "attempt": recorded.attempt, "check": recorded.check})
    if problem is None:
        offer = _offer(request)
        if offer is None:
            return render(request, "practice/practice.html", {"done": True})
        problem = problem_get_for_user(request.user, offer["problem"])
    return render(request, "practice/practice.html", {"problem": problem, "offer": offer})


# --- class progress (course staff) -------------------------------------------------------------------


def heat_cell(value: float | None) -> dict[str, Any]:
    """A heatmap cell: red (0) through amber to green (1); no figure is a blank cell."""
    if value is None:
        return {"value": None, "text": "·", "style": ""}
    return {"value": value, "text": f"{round(100 * value)}", "style": f"background: hsl({round(120 * value)}, 62%, 78%)"}


def _heat_row(values: dict[str, float], columns: list[str]) -> list[dict[str, Any]]:
    return [heat_cell(values.get(c)) for c in columns]


@login_required
@permission_required("practice.view_attempt")
@require_GET
def practice_class(request: HttpRequest) -> HttpResponse:
    """Mastery per concept and module for the class and each student, the problems failed most, who is stuck."""
    from practice.selectors import class_progress

    progress = class_progress()
    view = request.GET.get("by", "modules")
    if view not in ("modules", "concepts"):
        view = "modules"
    if view == "modules":
        columns = [(m.name, m.description or m.name) for m in progress.modules]
    else:
        columns = [(c.slug, f"{c.name} ({c.module})" if c.module else c.name) for c in progress.concepts]
    keys = [key for key, _ in columns]
    class_values = progress.class_modules if view == "modules" else progress.class_concepts
    rows = [
        {"student": s.student, "stuck": s.progress.stuck, "progress": s.progress, "cells": _heat_row(s.modules if view == "modules" else s.concepts, keys)}
        for s in progress.students
    ]
    return render(request, "practice/practice_class.html", {
        "progress": progress, "view": view, "columns": columns, "class_cells": _heat_row(class_values, keys), "rows": rows,
    })


@login_required
@permission_required("practice.view_attempt")
@require_GET
def practice_student(request: HttpRequest, student_id: int) -> HttpResponse:
    """One student: mastery per concept and module, their attempts, and what they are offered next."""
    from django.contrib.auth import get_user_model
    from django.shortcuts import get_object_or_404

    from concepts.models import Concept
    from practice.selectors import next_problem_for, student_progress

    student = get_object_or_404(get_user_model(), pk=student_id)
    progress, attempts = student_progress(student)
    names = dict(Concept.objects.values_list("slug", "name"))
    concepts = sorted(progress.concepts.items(), key=lambda kv: kv[1])
    return render(request, "practice/practice_student.html", {
        "student": student, "progress": progress, "attempts": attempts[:50], "attempt_count": len(attempts),
        "concepts": [(slug, names.get(slug, slug), heat_cell(m)) for slug, m in concepts],
        "modules": [(name, heat_cell(m)) for name, m in progress.modules.items()],
        "next": next_problem_for(student),
    })


# --- my progress (a student's own page) ---------------------------------------------------------------


def _bar(value: float) -> dict[str, Any]:
    """A mastery bar for the SVG picture, and the figure the table reads without it."""
    value = min(1.0, max(0.0, float(value)))
    return {"value": value, "percent": round(100 * value), "width": round(160 * value, 1), "hue": round(120 * value)}


@login_required
@require_GET
def my_progress(request: HttpRequest) -> HttpResponse:
    """The signed-in student's own progress: mastery per module and concept (bars), recent attempts, what next."""
    from concepts.models import Concept
    from practice.algorithms.recommend import Policy
    from practice.selectors import next_problem_for, student_progress

    progress, attempts = student_progress(request.user)
    # "Practise: …" leads to the practice page: name what it will show, the offer it holds (after
    # "similar" that is not the plain next problem), else what it will choose from the same history.
    offer = request.session.get(PRACTICE_SESSION_KEY)
    offered = _offered_problem(request, offer)
    if offered is not None:
        next_up: Any = (offered, offer)
    else:
        recent_ids = [pid for pid in request.session.get(PRACTICE_RECENT_KEY, []) if isinstance(pid, int)]
        next_up = next_problem_for(request.user, recent_ids=recent_ids)
    concepts = {slug: (name, module) for slug, name, module in Concept.objects.values_list("slug", "name", "module__name")}
    level = Policy().mastery_level
    concept_rows = sorted(
        ({"slug": slug, "name": concepts.get(slug, (slug, ""))[0], "module": concepts.get(slug, ("", ""))[1] or "", "bar": _bar(m), "mastered": m >= level}
         for slug, m in progress.concepts.items()),
        key=lambda r: (r["bar"]["value"], r["name"]),
    )
    recent = [
        {"attempt": a, "title": a.problem.title if a.problem.released else f"problem #{a.problem_id} (withdrawn)", "visible": a.problem.released}
        for a in attempts[:20]
    ]
    return render(request, "practice/my_progress.html", {
        "progress": progress,
        "modules": [{"name": name, "bar": _bar(m)} for name, m in progress.modules.items()],
        "concepts": concept_rows,
        "to_practise": [r for r in concept_rows if not r["mastered"]][:3],
        "mastery_level": round(100 * level),
        "recent": recent,
        "attempt_count": len(attempts),
        "next": next_up,
    })
