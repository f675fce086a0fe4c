from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from prob2vec_site.security import max_body_bytes
from problems import bank_io
from problems.forms import ProblemFilterForm, ProblemForm, ProblemImportForm
from problems.roles import is_course_staff, permission_required
from problems.selectors import (
    problem_attempt_counts,
    problem_collections,
    problem_delete_summary,
    problem_get_for_user,
    problem_labels,
    problem_list,
    problem_page,
    problem_records,
)
from problems.services import ImportRejected, problem_delete, problem_save, problems_import

PAGE_SIZE = 25


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Where signing in lands: students on practice, course staff on the bank."""
    from problems.roles import STUDENT, user_role

    if user_role(request.user) == STUDENT:
        return redirect("practice:practice")  # by URL name: problems/ never imports practice/
    return redirect("problems:list")


def _filtered(request: HttpRequest) -> tuple[ProblemFilterForm, Any]:
    """The filter form and the problems it selects; None when the filters are invalid (a search of
    more than 200 characters, an unknown concept): then nothing is listed, rather than everything."""
    form = ProblemFilterForm(request.GET or None)
    if form.is_bound and not form.is_valid():
        return form, None
    return form, problem_list(user=request.user, **(form.filters() if form.is_bound else {}))


def _filter_errors(form: ProblemFilterForm) -> list[str]:
    return [f"{form.fields[name].label or name.capitalize()}: {message}" for name, messages_ in form.errors.items() for message in messages_]


@login_required
def problem_list_view(request: HttpRequest) -> HttpResponse:
    form, qs = _filtered(request)
    page = None if qs is None else problem_page(qs, request.GET.get("page"), PAGE_SIZE)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "filter_errors": _filter_errors(form) if qs is None else [],
        "query": query.urlencode(),
        "collections": problem_collections() if is_course_staff(request.user) else [],
    }
    template = "problems/problem_list.html"
    if request.htmx and request.htmx.target == "problem-results":
        template += "#problem-results"
    return render(request, template, context)


@login_required
def problem_detail(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get_for_user(request.user, pk)
    staff = is_course_staff(request.user)
    return render(
        request,
        "problems/problem_detail.html",
        {"problem": problem, "labels": problem_labels(problem) if staff else []},
    )


@permission_required("problems.add_problem")
@require_http_methods(["GET", "POST"])
def problem_create(request: HttpRequest) -> HttpResponse:
    form = ProblemForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        problem = problem_save(problem=form.save(commit=False), labels=form.cleaned_data["labels"], user=request.user)
        messages.success(request, "Problem created.")
        return redirect("problems:detail", pk=problem.pk)
    return render(request, "problems/problem_form.html", {"form": form, "problem": None})


@permission_required("problems.change_problem")
@require_http_methods(["GET", "POST"])
def problem_edit(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get_for_user(request.user, pk)
    form = ProblemForm(request.POST or None, instance=problem)
    if request.method == "POST" and form.is_valid():
        problem_save(problem=form.save(commit=False), labels=form.cleaned_data["labels"], user=request.user)
        messages.success(request, "Problem saved.", extra_tags="saved")  # "saved": the page's drafts are dropped (site.js)
        return redirect("problems:detail", pk=problem.pk)
    return render(request, "problems/problem_form.html", {"form": form, "problem": problem})


@permission_required("problems.delete_problem")
@require_http_methods(["GET", "POST"])
def problem_delete_view(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get_for_user(request.user, pk)
    if request.method == "POST":
        problem_delete(problem=problem)
        messages.success(request, f"Deleted “{problem.title}”.")
        return redirect("problems:list")
    attempts, students = problem_attempt_counts(problem)
    context = {"problem": problem, "deleted_with": problem_delete_summary(problem), "attempts": attempts, "students": students}
    return render(request, "problems/problem_confirm_delete.html", context)


def _import_body_limit() -> int:
    return settings.PROBLEM_IMPORT_MAX_BYTES + 64 * 1024  # the file, plus the form's other fields and framing


@max_body_bytes(_import_body_limit)
@permission_required("problems.import_problem")
@require_http_methods(["GET", "POST"])
def problem_import(request: HttpRequest) -> HttpResponse:
    form = ProblemImportForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"form": form}
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        collection, default_collection = form.cleaned_data["collection"] or None, Path(upload.name).stem
        # Parsed with the import's own collections, so duplicates and a too-long name come with the other bad lines.
        parsed = bank_io.parse_problem_file(upload.read(), upload.name, collection=collection, default_collection=default_collection)
        try:
            if parsed.errors:
                raise ImportRejected(parsed.errors)
            report = problems_import(
                records=parsed.records,
                default_collection=default_collection,
                collection=collection,
                release=True if form.cleaned_data["release"] else None,
                author=request.user,
            )
            context["report"] = report
            from embeddings.services import text_vectors_hint

            context["text_vectors_hint"] = text_vectors_hint()
        except ImportRejected as exc:
            context["errors"] = exc.errors
            context["filename"] = upload.name
    return render(request, "problems/problem_import.html", context)


@permission_required("problems.import_problem")
def problem_export(request: HttpRequest) -> HttpResponse:
    form, qs = _filtered(request)
    if qs is None:
        return HttpResponse("Not exported: " + "; ".join(_filter_errors(form)) + "\n", status=400, content_type="text/plain; charset=utf-8")
    fmt = "csv" if request.GET.get("format") == "csv" else "jsonl"
    records = problem_records(qs)
    lines = bank_io.dump_csv(records) if fmt == "csv" else bank_io.dump_jsonl(records)
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(lines, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="problems.{fmt}"'
    return response

