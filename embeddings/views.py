from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from embeddings.selectors import (
    candidates_swapped,
    consensus_rows,
    triplet_candidates_for,
    triplet_counts,
    triplet_get,
    triplet_next_to_judge,
    triplet_order_visible,
    votes_visible,
)
from embeddings.services import TripletRejected, triplet_create, triplet_decide, triplet_vote
from prob2vec_site.htmx import reload_when_finished
from prob2vec_site.security import whole_number
from problems.models import Module
from problems.roles import permission_required
from problems.selectors import problem_get_for_user, problem_list


@permission_required("embeddings.view_similaritytriplet")
@require_GET
def triplet_home(request: HttpRequest) -> HttpResponse:
    next_one = triplet_next_to_judge(request.user)
    return render(request, "embeddings/triplet_home.html", {"counts": triplet_counts(), "next_one": next_one})


def _slot(request: HttpRequest, name: str) -> Any:
    pk = whole_number(request.GET.get(name) or request.POST.get(name))
    if pk is not None:
        try:
            return problem_get_for_user(request.user, pk)
        except Http404:
            return None
    return None


@permission_required("embeddings.add_similaritytriplet")
@require_http_methods(["GET", "POST"])
def triplet_propose(request: HttpRequest) -> HttpResponse:
    chosen = {role: _slot(request, role) for role in ("anchor", "positive", "negative")}
    if request.method == "POST":
        if not all(chosen.values()):
            messages.error(request, "Choose an anchor and two candidates first.")
        else:
            try:
                triplet = triplet_create(user=request.user, note=request.POST.get("note", ""), **chosen)
                messages.success(request, f"Triplet #{triplet.pk} proposed; other TAs will judge it blind.")
                return redirect(f"{request.path}?module={triplet.module_id or ''}")
            except TripletRejected as exc:
                messages.error(request, str(exc).capitalize() + ".")
    module_id = request.GET.get("module") or (chosen["anchor"].module_id if chosen["anchor"] else "")
    module_pk = whole_number(str(module_id))
    module = Module.objects.filter(pk=module_pk).first() if module_pk is not None else None
    q = request.GET.get("q", "")
    results = problem_list(user=request.user, q=q, modules=[module] if module else None)[:30] if module else []
    keep = {role: (p.pk if p else "") for role, p in chosen.items()}
    return render(
        request,
        "embeddings/triplet_propose.html",
        {"modules": Module.objects.all(), "module": module, "q": q, "results": results, "chosen": chosen, "keep": keep},
    )


@permission_required("embeddings.add_tripletvote")
@require_http_methods(["GET", "POST"])
def triplet_judge(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        triplet = triplet_get(whole_number(request.POST.get("triplet", "")) or 0)
        swapped = candidates_swapped(triplet, request.user)
        pick = request.POST.get("pick")
        choice = {
            "left": "negative" if swapped else "positive",
            "right": "positive" if swapped else "negative",
            "cant_tell": "cant_tell",
        }.get(pick or "")
        if choice is None:
            messages.error(request, "Pick the closer problem, or can't tell.")
        else:
            try:
                triplet_vote(triplet=triplet, voter=request.user, choice=choice)
                messages.success(request, f"Vote on triplet #{triplet.pk} saved.")
            except TripletRejected as exc:
                messages.error(request, str(exc).capitalize() + ".")
        back = request.POST.get("back", "")
        return redirect(back if url_has_allowed_host_and_scheme(back, allowed_hosts=None) and back.startswith("/triplets/") else reverse("embeddings:triplet-judge"))
    triplet = triplet_next_to_judge(request.user)
    context: dict[str, Any] = {"triplet": triplet}
    if triplet is not None:
        left, right = (triplet.negative, triplet.positive) if candidates_swapped(triplet, request.user) else (triplet.positive, triplet.negative)
        context.update(left=left, right=right)
    return render(request, "embeddings/triplet_judge.html", context)


@permission_required("embeddings.view_similaritytriplet")
@require_GET
def triplet_detail(request: HttpRequest, pk: int) -> HttpResponse:
    triplet = triplet_get(pk)
    context: dict[str, Any] = {"triplet": triplet, "blind": not triplet_order_visible(triplet, request.user)}
    if context["blind"]:
        # Judging is blind: the candidates in this judge's own order, and a way to judge it here.
        context["left"], context["right"] = triplet_candidates_for(triplet, request.user)
        context["may_judge"] = request.user.has_perm("embeddings.add_tripletvote")
    context["show_votes"] = votes_visible(triplet, request.user)
    context["votes"] = list(triplet.votes.select_related("voter")) if context["show_votes"] else []
    return render(request, "embeddings/triplet_detail.html", context)


@permission_required("embeddings.decide_similaritytriplet")
@require_GET
def triplet_consensus(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "proposed")
    rows = consensus_rows(status if status in ("proposed", "accepted", "rejected") else "")
    return render(
        request,
        "embeddings/triplet_consensus.html",
        {"rows": rows, "status": status, "counts": triplet_counts(), "contradictions": sum(r.contradiction for r in rows)},
    )


@permission_required("embeddings.decide_similaritytriplet")
@require_POST
def triplet_decide_view(request: HttpRequest, pk: int) -> HttpResponse:
    triplet = triplet_get(pk)
    decision = request.POST.get("decision", "")
    try:
        triplet = triplet_decide(triplet=triplet, decision=decision, user=request.user)
        messages.success(request, f"Triplet #{triplet.pk} {triplet.status}{' after a swap' if decision == 'swap' else ''}.")
    except TripletRejected as exc:
        messages.error(request, str(exc).capitalize() + ".")
    back = request.POST.get("back", "")
    return redirect(back if back.startswith("/triplets/") else reverse("embeddings:triplet-consensus"))


# --- the embedding lab --------------------------------------------------------------------------

CONCEPT_SOURCES = ["labels", "rules", "hybrid"]


@permission_required("embeddings.view_embeddingrun")
@require_http_methods(["GET", "POST"])
def lab_home(request: HttpRequest) -> HttpResponse:
    from embeddings.algorithms.methods import METHODS
    from embeddings.selectors import TEXT_SOURCE, accepted_triplets, gap_histogram, recent_runs, triplet_results
    from embeddings.services import EmbeddingInputError, embedding_run_start

    if request.method == "POST":
        if not request.user.has_perm("embeddings.add_embeddingrun"):
            raise Http404
        wanted = request.POST.getlist("method") or list(METHODS)
        pairs = [(m, s) for m in wanted if m in METHODS for s in (["labels"] if METHODS[m].kind == "text" else CONCEPT_SOURCES)]
        started = 0
        for method, source in pairs:
            try:
                run = embedding_run_start(method=method, source=source, user=request.user)
            except EmbeddingInputError as exc:
                messages.error(request, f"{method}/{source}: {exc}")
                continue
            if run.not_queued:  # Redis is down: say so once, rather than wait on it for every other method
                messages.error(request, run.error)
                break
            started += 1
        else:
            from embeddings.services import embedding_default_get

            method, source = embedding_default_get()
            messages.success(
                request,
                f"{started} rebuilds queued (identical inputs reuse earlier runs). The active embedding changes only "
                f"when a new {method} run on {source} finishes; make any other run active from its page.",
            )
        return redirect("embeddings:lab")
    runs = recent_runs()
    template = "embeddings/lab.html"
    if request.htmx and request.htmx.target == "lab-runs":
        from embeddings.models import ActiveEmbedding

        active_run_id = ActiveEmbedding.objects.filter(pk=1).values_list("run_id", flat=True).first()
        return render(request, template + "#lab-runs", {"runs": runs, "active_run_id": active_run_id, "text_methods": _text_methods()})
    triplets = accepted_triplets()
    table = triplet_results(triplets)
    rows = []
    for name, method in METHODS.items():
        sources = [TEXT_SOURCE] if method.kind == "text" else CONCEPT_SOURCES
        # One cell per column of Table 1: (source, applies to this method, {accuracy, low, high} or None).
        cells = [(s, s in sources, table.get(name, {}).get(s)) for s in [*CONCEPT_SOURCES, TEXT_SOURCE]]
        rows.append({"name": name, "label": method.label, "kind": method.kind, "cells": cells})
    from embeddings.charts import accuracy_chart, gap_histogram_charts
    from embeddings.selectors import active_embedding_summary

    summary = active_embedding_summary()
    return render(
        request,
        template,
        {
            "rows": rows, "triplets": len(triplets), "runs": runs, "histogram": gap_histogram_charts(gap_histogram(triplets)),
            "accuracy_chart": accuracy_chart(rows), "methods": METHODS, "text_methods": _text_methods(),
            "summary": summary, "sources": CONCEPT_SOURCES, "active_run_id": summary.run.pk if summary.run else None,
        },
    )


def _text_methods() -> list[str]:
    """Methods that read the text only: their runs have no concept source to show."""
    from embeddings.algorithms.methods import METHODS

    return [name for name, m in METHODS.items() if m.kind == "text"]


@permission_required("embeddings.view_embeddingrun")
@require_GET
def lab_run(request: HttpRequest, pk: int) -> HttpResponse:
    from embeddings.models import EmbeddingRun

    run = EmbeddingRun.objects.defer("vectors", "problem_ids", "concept_vectors").filter(pk=pk).first()
    if run is None:
        raise Http404("No such run")
    if request.htmx and not run.is_active:
        return reload_when_finished()  # the Cancel button, "Make active" and the accuracy lie outside the card
    from embeddings.charts import loss_chart

    template = "embeddings/lab_run.html"
    context = {"run": run, "text_methods": _text_methods(), "loss_chart": loss_chart(run.losses) if run.losses else None}
    if request.htmx:
        return render(request, template + "#run-status", context)
    from embeddings.selectors import active_embedding_summary, run_accuracy

    context["accuracy"] = run_accuracy(run.pk) if run.status == "done" else None
    context["summary"] = active_embedding_summary()
    return render(request, template, context)


@permission_required("embeddings.change_activeembedding")
@require_POST
def lab_run_activate(request: HttpRequest, pk: int) -> HttpResponse:
    """ "Make active": the one way a run other than the site default's newest becomes the active embedding."""
    from embeddings.services import EmbeddingPolicyError, embedding_activate

    try:
        run = embedding_activate(run_id=pk, user=request.user)
    except EmbeddingPolicyError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Run #{run.pk} ({run.method} on {run.get_source_display()}) is now the active embedding.")
    return redirect("embeddings:lab-run", pk=pk)


@permission_required("embeddings.change_activeembedding")
@require_POST
def lab_default(request: HttpRequest) -> HttpResponse:
    """The instructor's site default: (method, source) whose finished runs become active by themselves."""
    from embeddings.services import EmbeddingPolicyError, embedding_default_set

    try:
        method, source = embedding_default_set(method=request.POST.get("method", ""), source=request.POST.get("source", ""), user=request.user)
    except EmbeddingPolicyError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Site default: {method} on {source}. Its next finished run becomes active; the active run is unchanged until then.")
    return redirect("embeddings:lab")


@permission_required("embeddings.add_embeddingrun")
@require_POST
def lab_run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    from embeddings.models import EmbeddingRun
    from embeddings.services import embedding_run_cancel

    run = EmbeddingRun.objects.filter(pk=pk).only("id", "status").first()
    if run is None:
        raise Http404("No such run")
    if embedding_run_cancel(run=run):
        messages.success(request, f"Run #{pk} cancelled.")
    else:  # it ended between the page and the press: say so, rather than nothing
        run.refresh_from_db(fields=["status"])
        messages.info(request, f"Run #{pk} had already ended ({run.get_status_display().lower()}): there was nothing to cancel.")
    return redirect("embeddings:lab-run", pk=pk)


@permission_required("embeddings.view_embeddingrun")
@require_GET
def lab_concepts(request: HttpRequest) -> HttpResponse:
    from concepts.models import Concept
    from embeddings.selectors import concept_neighbours

    from embeddings.charts import concept_map_chart
    from embeddings.selectors import concept_map

    slug = request.GET.get("concept", "")[:100]
    k = min(whole_number(request.GET.get("k", "")) or 10, 100)
    run, neighbours = concept_neighbours(slug, k=k) if slug else (None, [])
    run, points = concept_map(run)
    chart = concept_map_chart(points, selected=slug, neighbours=[name for name, _ in neighbours], base_url=request.path) if points else None
    return render(
        request,
        "embeddings/lab_concepts.html",
        {"concepts": Concept.objects.select_related("module"), "slug": slug, "neighbours": neighbours, "run": run, "chart": chart, "points": points},
    )


@login_required
@require_GET
def problem_similar(request: HttpRequest, pk: int) -> HttpResponse:
    """The "similar problems" fragment of a problem page (pulled by URL, so problems/ never imports us)."""
    from embeddings.selectors import problem_similar_list
    from problems.roles import is_course_staff

    problem = problem_get_for_user(request.user, pk)
    run, similar, borrowed, in_run, hidden = problem_similar_list(problem, k=5, user=request.user)
    show_why = is_course_staff(request.user)
    borrowed = show_why and borrowed and bool(similar)
    # A problem imported after the run was built is not in it: that is not "no concepts" (a new book's
    # every problem, until the next rebuild).
    newer_than_run = run is not None and not in_run
    template = "embeddings/_similar.html" if request.htmx else "embeddings/similar_page.html"
    return render(request, template, {"run": run, "similar": similar, "problem": problem, "show_why": show_why,
                                      "borrowed": borrowed, "newer_than_run": newer_than_run, "hidden": hidden})
