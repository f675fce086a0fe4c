from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from embeddings.selectors import (
    candidates_swapped,
    consensus_rows,
    triplet_counts,
    triplet_get,
    triplet_next_to_judge,
    votes_visible,
)
from embeddings.services import TripletRejected, triplet_create, triplet_decide, triplet_vote
from problems.models import Module
from problems.selectors import problem_get_for_user, problem_list


@permission_required("embeddings.view_similaritytriplet")
@require_GET
def triplet_home(request: HttpRequest) -> HttpResponse:
    next_one = triplet_next_to_judge(request.user)
    return render(request, "embeddings/triplet_home.html", {"counts": triplet_counts(), "next_one": next_one})


def _slot(request: HttpRequest, name: str) -> Any:
    value = request.GET.get(name) or request.POST.get(name)
    if value and value.isdigit():
        try:
            return problem_get_for_user(request.user, int(value))
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
    module = Module.objects.filter(pk=module_id).first() if str(module_id).isdigit() else None
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
        triplet = triplet_get(int(request.POST.get("triplet", "0") or 0))
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
        return redirect("embeddings:triplet-judge")
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
    show_votes = votes_visible(triplet, request.user)
    votes = list(triplet.votes.select_related("voter")) if show_votes else []
    return render(request, "embeddings/triplet_detail.html", {"triplet": triplet, "votes": votes, "show_votes": show_votes})


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
    return redirect(f"{request.POST.get('back') or '/triplets/consensus/'}")
