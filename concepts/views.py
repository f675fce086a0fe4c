from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from concepts.forms import ReportForm, RuleForm, RulePreviewForm
from concepts.models import ConceptRule
from concepts import extraction
from prob2vec_site.htmx import reload_when_finished
from prob2vec_site.security import whole_number
from concepts.selectors import (
    concept_get,
    concept_list_with_rules,
    extraction_run_get,
    extraction_run_latest,
    report_get,
    report_history,
    report_problems,
    rule_preview,
    rule_suggestions,
    rule_versions,
    rules_analysis,
)
from concepts.services import (
    ExtractionInputError,
    RuleConflict,
    RuleRejected,
    extraction_run_start,
    extractor_report_start,
    rule_revert,
    rule_save,
)
from problems.models import Module
from problems.roles import permission_required


@permission_required("concepts.view_conceptrule")
@require_GET
def concept_list(request: HttpRequest) -> HttpResponse:
    return render(request, "concepts/concept_list.html", {"concepts": concept_list_with_rules()})


def _keep_query(*, ignore_case: bool, enabled: bool, base_version: Any, module_ids: list[int], statement_pattern: str = "") -> str:
    """The editor's state, less the pattern, for the "Append" links that work without JavaScript:
    they open the editor previewing the pattern with the branch appended, nothing saved."""
    from urllib.parse import urlencode

    # suggest=1: the page the link opens renders the next suggestions itself (no htmx to fetch them).
    pairs: list[tuple[str, Any]] = [("preview", 1), ("suggest", 1)]
    if statement_pattern:
        pairs.append(("statement_pattern", statement_pattern))
    if ignore_case:
        pairs.append(("ignore_case", "on"))
    if enabled:
        pairs.append(("enabled", "on"))
    if base_version not in (None, ""):
        pairs.append(("base_version", base_version))
    pairs += [("modules", m) for m in module_ids]
    return urlencode(pairs)


def _preview_context(
    concept: Any, pattern: str, ignore_case: bool, module_ids: list[int], *, suggest: bool = False, keep_query: str = "",
    typed: str = "", statement_pattern: str = "", typed_statement: str = "",
) -> dict[str, Any]:
    """The live panel's context. An empty pattern previews nothing (the panel is cleared). `typed` is
    the box's text (a branch per line), so that an error's position is given as its line and column.

    Mining the suggestions takes longer than the preview (up to half a second on 10,000 labelled
    problems), so htmx fetches them after each preview and after the page loads. A page without
    JavaScript offers a "Show the suggested branches" link instead (`suggest`: mined here)."""
    from urllib.parse import urlencode

    context: dict[str, Any] = {"concept": concept, "preview": None, "keep_query": keep_query}
    if keep_query:
        context["suggest_url"] = f"{reverse('concepts:rule-edit', args=[concept.slug])}?{urlencode({'pattern': pattern})}&{keep_query}"
    if pattern.strip() or statement_pattern.strip():
        context["preview"] = preview = rule_preview(
            concept=concept, pattern=pattern, ignore_case=ignore_case, module_ids=module_ids, statement_pattern=statement_pattern
        )
        if preview.error and preview.position is not None:
            context["error_line"] = extraction.where_in_lines(typed_statement if preview.in_statement else typed, preview.position)
    if suggest and not (context["preview"] and context["preview"].error):
        context["suggestions"] = rule_suggestions(
            concept=concept, pattern=pattern, ignore_case=ignore_case, module_ids=module_ids, statement_pattern=statement_pattern
        )
    return context


@permission_required("concepts.view_conceptrule")
@require_http_methods(["GET", "POST"])
def rule_edit(request: HttpRequest, slug: str) -> HttpResponse:
    concept = concept_get(slug)
    rule = ConceptRule.objects.select_related("updated_by").filter(concept=concept).first()
    initial: dict[str, Any] = {"base_version": rule.version if rule else 0}
    if rule:
        # The box holds one branch per line; what is saved is the one-line pattern (forms.PatternField).
        initial.update(
            pattern=extraction.pattern_lines(rule.pattern), statement_pattern=extraction.pattern_lines(rule.statement_pattern),
            ignore_case=rule.ignore_case, enabled=rule.enabled,
        )
    form = RuleForm(request.POST or None, initial=initial)
    module_ids = [m for m in map(whole_number, request.POST.getlist("modules") or request.GET.getlist("modules")) if m is not None]
    conflict = None
    if request.method == "POST" and request.POST.get("preview") == "1":
        # "Preview without JavaScript" (and the report's "Open in the editor") post the form, so its CSRF token
        # never lands in a URL (the request log, the history, a shared link): on to the GET preview below, unsaved.
        query = request.POST.copy()
        query.pop("csrfmiddlewaretoken", None)
        return HttpResponseRedirect(f"{request.path}?{query.urlencode()}")
    if request.method == "POST":
        if not request.user.has_perm("concepts.change_conceptrule"):
            raise Http404
        if form.is_valid():
            data = form.cleaned_data
            try:
                saved = rule_save(
                    concept=concept,
                    pattern=data["pattern"],
                    statement_pattern=data["statement_pattern"],
                    ignore_case=data["ignore_case"],
                    enabled=data["enabled"],
                    user=request.user,
                    message=data["message"],
                    base_version=data["base_version"],
                )
                if rule is not None and saved.version == rule.version:
                    # rule_save makes no version when nothing changed, so a change note alone is not kept.
                    kept = " and the change note was not kept" if data["message"].strip() else ""
                    messages.info(request, f"Nothing changed in the rule of {concept.slug}: no new version was saved{kept}.")
                else:
                    messages.success(request, f"Saved the rule of {concept.slug}.", extra_tags="saved")
                return redirect("concepts:rule-edit", slug=concept.slug)
            except RuleRejected as exc:
                form.add_error(exc.field, f"Invalid pattern: {exc}")
            except RuleConflict as exc:
                # Keep what the TA typed, now based on the saved version: saving again is a deliberate overwrite.
                conflict, rule = exc, exc.rule
                resubmit = request.POST.copy()
                resubmit["base_version"] = str(exc.version)
                form = RuleForm(resubmit, initial=initial)
    if request.method == "GET" and "pattern" in request.GET:
        # "Preview without JavaScript": the typed pattern comes back as a GET, previewed and not saved.
        # An "Append" link carries the one-line pattern: shown, like a saved one, a branch per line.
        query = request.GET.copy()
        query["pattern"] = extraction.pattern_lines(extraction.join_lines(query["pattern"]))
        if "statement_pattern" in query:
            query["statement_pattern"] = extraction.pattern_lines(extraction.join_lines(query["statement_pattern"]))
        form = RuleForm(query, initial=initial)
    typed = form.data.get("pattern", "") if form.is_bound else initial.get("pattern", "")
    pattern = extraction.join_lines(typed)
    typed_statement = form.data.get("statement_pattern", "") if form.is_bound else initial.get("statement_pattern", "")
    statement_pattern = extraction.join_lines(typed_statement)
    ignore_case = bool(form.data.get("ignore_case")) if form.is_bound else initial.get("ignore_case", True)
    enabled = bool(form.data.get("enabled")) if form.is_bound else initial.get("enabled", True)
    base_version = form.data.get("base_version") if form.is_bound else initial["base_version"]
    keep = _keep_query(
        ignore_case=ignore_case, enabled=enabled, base_version=base_version, module_ids=module_ids, statement_pattern=statement_pattern
    )
    context = {
        "form": form,
        "rule": rule,
        "modules": Module.objects.all(),
        "module_ids": module_ids,
        "conflict": conflict,
        **_preview_context(
            concept, pattern, ignore_case, module_ids, suggest=request.GET.get("suggest") == "1", keep_query=keep, typed=typed,
            statement_pattern=statement_pattern, typed_statement=typed_statement,
        ),
        # A line to point at in the preview's Branches table (the rule analysis page links to `?line=N#branch-line-N`).
        "chosen_line": whole_number(request.GET.get("line", "")),
        "reads_solutions": settings.RULES_READ_SOLUTIONS,
    }
    # A plain form POST (htmx only drives the preview), so the conflict can say 409 and still be a full page.
    return render(request, "concepts/rule_edit.html", context, status=409 if conflict else 200)


@permission_required("concepts.preview_conceptrule")
@require_POST
def rule_preview_view(request: HttpRequest) -> HttpResponse:
    form = RulePreviewForm(request.POST)
    if not form.is_valid():
        return render(request, "concepts/_rule_preview.html", {"preview": None, "form_errors": form.errors})
    data = form.cleaned_data
    concept = concept_get(data["concept"])
    context = _preview_context(
        concept, data["pattern"], data["ignore_case"], [m.id for m in data["modules"]], typed=request.POST.get("pattern", ""),
        statement_pattern=data["statement_pattern"], typed_statement=request.POST.get("statement_pattern", ""),
    )
    # Errors come back with status 200 so htmx swaps them into the panel.
    return render(request, "concepts/_rule_preview.html", context)


@permission_required("concepts.preview_conceptrule")
@require_POST
def rule_suggestions_view(request: HttpRequest) -> HttpResponse:
    """The mined phrases and suggested branches for the pattern as typed (fetched after each preview)."""
    form = RulePreviewForm(request.POST)
    if not form.is_valid():
        # A line that is not a pattern is the preview's to say (beside it); here, only other errors.
        errors = {field: e for field, e in form.errors.items() if field not in ("pattern", "statement_pattern")}
        pattern_error = "pattern" in form.errors or "statement_pattern" in form.errors
        return render(request, "concepts/_rule_suggestions.html", {"suggestions": None, "form_errors": errors, "pattern_error": pattern_error})
    data = form.cleaned_data
    concept = concept_get(data["concept"])
    module_ids = [m.id for m in data["modules"]]
    suggestions = rule_suggestions(
        concept=concept, pattern=data["pattern"], ignore_case=data["ignore_case"], module_ids=module_ids,
        statement_pattern=data["statement_pattern"],
    )
    keep = _keep_query(
        ignore_case=data["ignore_case"], enabled=bool(request.POST.get("enabled")),
        base_version=_base_version(request.POST.get("base_version")), module_ids=module_ids,
        statement_pattern=data["statement_pattern"],
    )
    return render(request, "concepts/_rule_suggestions.html", {"concept": concept, "suggestions": suggestions, "keep_query": keep})


def _base_version(value: str | None) -> int | None:
    """The version a page was loaded from, sent back in a hidden field; None (no check) if absent."""
    return whole_number(value)


@permission_required("concepts.view_conceptruleversion")
@require_GET
def rule_history(request: HttpRequest, slug: str) -> HttpResponse:
    """The versions of a rule, and a diff between any two (`?a=3&b=5`; the two latest by default)."""
    from concepts.rule_analysis import version_diff

    concept = concept_get(slug)
    rule = ConceptRule.objects.filter(concept=concept).first()
    versions = list(rule_versions(rule)) if rule else []
    by_number = {v.number: v for v in versions}
    a, b = _base_version(request.GET.get("a")), _base_version(request.GET.get("b"))
    if a is None and b is None and len(versions) >= 2:
        a, b = versions[1].number, versions[0].number
    compare = None
    if a is not None or b is not None:
        older, newer = by_number.get(a or -1), by_number.get(b or -1)
        if older is None or newer is None:
            messages.error(request, f"No version {a if older is None else b} of {slug} to compare.")
        else:
            lines = version_diff(
                (older.pattern, older.ignore_case, older.enabled, older.statement_pattern),
                (newer.pattern, newer.ignore_case, newer.enabled, newer.statement_pattern),
            )
            compare = {
                "a": older, "b": newer, "lines": lines,
                "added": sum(1 for line in lines if line.kind == "+"), "removed": sum(1 for line in lines if line.kind == "-"),
            }
    return render(
        request, "concepts/rule_history.html", {"concept": concept, "rule": rule, "versions": versions, "compare": compare}
    )


ANALYSIS_SORT_LABELS = [
    ("fn", "FN rate"), ("fp", "FP rate"), ("precision", "precision"), ("coverage", "coverage"),
    ("overlap", "overlaps"), ("conflicts", "conflicts"), ("slug", "name"),
]
ANALYSIS_SORTS = {
    "slug": lambda r: r.slug.lower(),
    "coverage": lambda r: -r.coverage,
    "overlap": lambda r: -(r.overlap_share or 0),
    "conflicts": lambda r: -r.conflicts,
    "fn": lambda r: (-(r.fn_rate if r.fn_rate is not None else -1), -r.fn),
    "fp": lambda r: (-(r.fp_rate if r.fp_rate is not None else -1), -r.fp),
    "precision": lambda r: (r.precision if r.precision is not None else 2),
}


ANALYSIS_LINES_SHOWN = 40


@permission_required("concepts.view_conceptrule")
@require_GET
def rule_analysis_view(request: HttpRequest) -> HttpResponse:
    """Every enabled rule over the bank: coverage, overlaps, conflicts, FN/FP, and what no rule matches."""
    from concepts.rule_analysis import MIN_POSITIVES
    from problems.models import Problem

    collection = request.GET.get("collection", "").strip()
    sort = request.GET.get("sort", "fn")
    if sort not in ANALYSIS_SORTS:
        sort = "fn"
    result = rules_analysis(collection=collection)
    rows = sorted(result.analysis.rules, key=lambda r: (ANALYSIS_SORTS[sort](r), r.slug))
    titles = dict(zip(result.ids, result.titles))
    conflicts = [
        (c, [(result.ids[i], titles[result.ids[i]]) for i in c.examples]) for c in result.analysis.conflicts[:30]
    ]
    collections = list(Problem.objects.order_by().values_list("collection", flat=True).distinct().order_by("collection"))
    lines = result.lines_to_look_at
    return render(
        request,
        "concepts/rule_analysis.html",
        {
            "result": result, "analysis": result.analysis, "rows": rows, "sort": sort, "conflicts": conflicts,
            "collection": collection, "collections": collections, "sorts": ANALYSIS_SORT_LABELS,
            "min_positives": MIN_POSITIVES,
            "no_concept": [(pid, titles[pid]) for pid in result.no_concept_ids[:20]],
            "lines": [(line, result.wrong_in_context(line)) for line in lines[:ANALYSIS_LINES_SHOWN]],
            "lines_more": max(0, len(lines) - ANALYSIS_LINES_SHOWN),
        },
    )


@permission_required("concepts.change_conceptrule")
@require_POST
def rule_revert_view(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    concept = concept_get(slug)
    rule = ConceptRule.objects.filter(concept=concept).first()
    if rule is None:
        raise Http404("No rule")
    try:
        rule_revert(rule=rule, number=number, user=request.user, base_version=_base_version(request.POST.get("base_version")))
        messages.success(request, f"Reverted {slug} to version {number}.")
    except RuleRejected as exc:
        messages.error(request, str(exc))
    except RuleConflict as exc:
        messages.error(request, f"{exc.message} Check the history below and revert again if you still want to.")
    return redirect("concepts:rule-history", slug=slug)


@permission_required("concepts.view_extractionrun")
@require_http_methods(["GET", "POST"])
def extraction_runs(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        if not request.user.has_perm("concepts.add_extractionrun"):
            raise Http404
        try:
            run = extraction_run_start(user=request.user, source=request.POST.get("source") or "rules")
        except ExtractionInputError as exc:
            messages.error(request, str(exc))
            return redirect("concepts:extraction-runs")
        return redirect("concepts:extraction-run", pk=run.pk)
    from concepts.models import ExtractionRun

    return render(request, "concepts/extraction_runs.html", {"runs": ExtractionRun.objects.select_related("created_by")[:30], "latest": extraction_run_latest()})


@permission_required("concepts.view_extractionrun")
@require_GET
def extraction_run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = extraction_run_get(pk)
    template = "concepts/extraction_run.html"
    if request.htmx and not run.is_active:
        # Finished while watched: the hybrid source's details lie outside the polled status card.
        return reload_when_finished()
    if request.htmx:
        template += "#run-status"
    return render(request, template, {"run": run})


@permission_required("concepts.view_extractorreport")
@require_http_methods(["GET", "POST"])
def reports(request: HttpRequest) -> HttpResponse:
    form = ReportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if not request.user.has_perm("concepts.add_extractorreport"):
            raise Http404
        report = extractor_report_start(
            user=request.user, collection=form.cleaned_data["collection"], source=form.cleaned_data["source"] or "rules",
            held_out=form.cleaned_data["held_out"],
        )
        return redirect("concepts:report", pk=report.pk)
    from concepts.models import ExtractorReport

    from concepts.charts import report_history_chart

    history = report_history()
    # A concept of the history, else the average over concepts; an unknown slug draws an empty chart, not an error.
    concept = request.GET.get("concept", "")[:100]
    chart, chart_rows = report_history_chart(history, concept)
    concepts_in_history = sorted({slug for r in history for slug in (r.concepts or {})})
    return render(
        request,
        "concepts/reports.html",
        {
            "form": form, "reports": ExtractorReport.objects.select_related("created_by")[:30], "chart": chart,
            "chart_rows": chart_rows, "concept": concept, "history_concepts": concepts_in_history,
        },
    )


@permission_required("concepts.view_extractorreport")
@require_GET
def report_detail(request: HttpRequest, pk: int) -> HttpResponse:
    report = report_get(pk)
    if request.htmx and not report.is_active:
        # The poll swaps the status card alone; the figures and the table lie outside it.
        return reload_when_finished()
    template = "concepts/report.html"
    if request.htmx:
        template += "#run-status"
    rows = sorted(report.concepts.items(), key=lambda kv: (-(kv[1]["fn_rate"] or 0), kv[0]))
    context: dict[str, Any] = {"report": report, "run": report, "rows": rows}
    if report.status == "done" and not request.htmx:
        from concepts.charts import report_concepts_chart

        context["chart"], context["chart_left_out"] = report_concepts_chart(report, rows)
        if not report.held_out:
            from concepts.selectors import held_out_labelled_count

            # Whether these figures can be told apart from a fit to the problems the rules were written from.
            context["held_out_labelled"] = held_out_labelled_count(report.collection)
    return render(request, template, context)


@permission_required("concepts.view_extractorreport")
@require_GET
def report_drilldown(request: HttpRequest, pk: int, slug: str, kind: str) -> HttpResponse:
    if kind not in ("fp", "fn"):
        raise Http404
    report = report_get(pk)
    concept = concept_get(slug)
    if report.held_out:
        # Listing them would show the very problems kept aside to measure the rules to whoever writes them.
        messages.info(request, "A held-out report lists no problems: they measure the rules and are never shown to write them.")
        return redirect("concepts:report", pk=report.pk)
    error = ""
    try:
        problems = report_problems(concept=concept, kind=kind, collection=report.collection, source=report.source)
    except extraction.RuleTimeout as exc:  # a fallback rule too slow for the bank: say which, not a 500
        problems, error = [], str(exc)
    from concepts.selectors import held_out_labelled_count

    rule = ConceptRule.objects.select_related("updated_by").filter(concept=concept).first()
    statement_pattern = rule.statement_pattern if rule else ""
    form = RuleForm(
        initial={"pattern": extraction.pattern_lines(rule.pattern) if rule else "", "ignore_case": rule.ignore_case if rule else True,
                 "statement_pattern": extraction.pattern_lines(statement_pattern),
                 "enabled": rule.enabled if rule else True, "base_version": rule.version if rule else 0}
    )
    # The same live preview as the editor, on the current rule, so the TA can fix it from here.
    context = {
        "report": report, "kind": kind, "problems": problems, "rule": rule, "form": form, "error": error,
        # The report counted them; the list never shows them, so its count may be smaller than the report's.
        "held_out_labelled": held_out_labelled_count(report.collection),
        **_preview_context(
            concept, rule.pattern if rule else "", rule.ignore_case if rule else True, [],
            keep_query=_keep_query(ignore_case=rule.ignore_case if rule else True, enabled=rule.enabled if rule else True,
                                   base_version=rule.version if rule else 0, module_ids=[], statement_pattern=statement_pattern),
            statement_pattern=statement_pattern,
        ),
    }
    return render(request, "concepts/report_drilldown.html", context)


# --- expert labels ------------------------------------------------------------------------------


def _label_scope(request: HttpRequest) -> tuple[str, str]:
    """The queue and collection a labelling page works through (GET or POST), made safe: an unknown
    queue is "mine", an unknown collection is every collection."""
    from concepts.selectors import LABEL_QUEUES
    from problems.models import Problem

    queue = request.GET.get("queue") or request.POST.get("queue") or "mine"
    collection = request.GET.get("collection") or request.POST.get("collection") or ""
    known = bool(collection) and Problem.objects.filter(collection=collection).exists()
    return (queue if queue in LABEL_QUEUES else "mine"), (collection if known else "")


def _label_url(pk: int, queue: str, collection: str) -> str:
    return f"{reverse('concepts:label', args=[pk])}?{_scope_query(queue, collection)}"


def _scope_query(queue: str, collection: str) -> str:
    return urlencode({"queue": queue, **({"collection": collection} if collection else {})})


@permission_required("concepts.add_labelset")
@require_GET
def label_home(request: HttpRequest) -> HttpResponse:
    from concepts.selectors import LABEL_QUEUES, label_queue_counts
    from problems.selectors import problem_collections

    _, collection = _label_scope(request)
    counts = label_queue_counts(request.user, collection)
    queues = [(key, title, counts[key], _scope_query(key, collection)) for key, title in LABEL_QUEUES.items()]
    return render(request, "concepts/label_home.html", {"queues": queues, "collection": collection, "collections": problem_collections()})


def _queue_neighbours(ids: list[int], pk: int) -> tuple[int | None, int | None, int]:
    if pk in ids:
        i = ids.index(pk)
        return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None), i + 1
    later = [x for x in ids if x > pk]
    return None, (later[0] if later else (ids[0] if ids else None)), 0


@permission_required("concepts.add_labelset")
@require_GET
def label_next(request: HttpRequest) -> HttpResponse:
    from concepts.selectors import label_queue_ids

    queue, collection = _label_scope(request)
    ids = label_queue_ids(queue=queue, user=request.user, collection=collection)
    if not ids:
        messages.success(request, "This queue is empty.")
        return redirect(f"{reverse('concepts:label-home')}{'?' + urlencode({'collection': collection}) if collection else ''}")
    return redirect(_label_url(ids[0], queue, collection))


@permission_required("concepts.add_labelset")
@require_http_methods(["GET", "POST"])
def label_problem(request: HttpRequest, pk: int) -> HttpResponse:
    from concepts.models import Concept
    from concepts.selectors import LABEL_QUEUES, concepts_for_picker, label_page, label_queue_ids
    from concepts.services import LabelsConflict, LabelsRejected, labels_resolve, labels_set
    from problems.selectors import problem_get_for_user

    problem = problem_get_for_user(request.user, pk)
    queue, collection = _label_scope(request)
    can_resolve = request.user.has_perm("concepts.resolve_labels")
    conflict, checked = None, None
    if request.method == "POST":
        slugs = request.POST.getlist("concepts")
        concepts = list(Concept.objects.filter(slug__in=slugs))
        try:
            if request.POST.get("action") == "resolve":
                if not can_resolve:
                    raise Http404
                labels_resolve(
                    problem=problem, concepts=concepts, user=request.user,
                    base_version=_base_version(request.POST.get("resolution_base_version")),
                )
                messages.success(request, "Ground truth resolved.")
            else:
                labels_set(
                    problem=problem, annotator=request.user, concepts=concepts,
                    base_version=_base_version(request.POST.get("base_version")),
                )
                messages.success(request, f"Saved {len(concepts)} label{'s' if len(concepts) != 1 else ''}.")
        except LabelsRejected as exc:
            messages.error(request, str(exc).capitalize() + ".")
            return redirect(_label_url(pk, queue, collection))
        except LabelsConflict as exc:
            # Re-render with the submitted choice still ticked and the current versions as the new base.
            conflict, checked = exc, sorted(c.slug for c in concepts)
        else:
            ids = label_queue_ids(queue=queue, user=request.user, collection=collection)
            _, following, _ = _queue_neighbours(ids, pk)
            target = following if request.POST.get("then") != "stay" and following else pk
            return redirect(_label_url(target, queue, collection))
    ids = label_queue_ids(queue=queue, user=request.user, collection=collection)
    previous, following, position = _queue_neighbours(ids, pk)
    page = label_page(problem=problem, user=request.user, show_others=can_resolve)
    return render(
        request,
        "concepts/label_problem.html",
        {
            "problem": problem,
            "page": page,
            "conflict": conflict,
            # A head TA starts from the resolution, or from what the annotators agree on.
            "checked": (page.resolution_start if can_resolve else page.mine) if checked is None else checked,
            "picker": concepts_for_picker(),
            "queue": queue,
            "collection": collection,
            "scope_query": _scope_query(queue, collection),
            "queue_title": LABEL_QUEUES[queue],
            "queue_size": len(ids),
            "position": position,
            "previous": previous,
            "following": following,
            "can_resolve": can_resolve,
        },
        status=409 if conflict else 200,
    )


@permission_required("concepts.resolve_labels")
@require_POST
def label_hold_out_draw(request: HttpRequest) -> HttpResponse:
    """Hold out a random draw of a collection's unlabelled problems (a head TA's call)."""
    from concepts.forms import HoldOutForm
    from concepts.services import HeldOutRejected, held_out_draw

    form = HoldOutForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a collection and how many problems to hold out (1 to 1,000).")
    else:
        collection = form.cleaned_data["collection"]
        try:
            modules = held_out_draw(collection=collection, count=form.cleaned_data["count"], seed=0, user=request.user)
        except HeldOutRejected as exc:
            messages.error(request, str(exc).capitalize() + ".")
        else:
            spread = ", ".join(f"{module} {n}" for module, n in modules.items())
            messages.success(request, f"Held out {sum(modules.values())} unlabelled problems of {collection} from rule writing ({spread}). "
                                      "Label them from the queue below: their pages show no suggestions.")
    _, known = _label_scope(request)
    return redirect(f"{reverse('concepts:label-home')}{'?' + urlencode({'collection': known}) if known else ''}")


@permission_required("concepts.resolve_labels")
@require_POST
def label_held_out(request: HttpRequest, pk: int) -> HttpResponse:
    """Hold a problem out of rule writing, or return it (a head TA's call), then back to its labelling
    page, which then shows (or no longer shows) the extractors' suggestions."""
    from concepts.services import held_out_set
    from problems.selectors import problem_get_for_user

    problem = problem_get_for_user(request.user, pk)
    hold = request.POST.get("held_out") == "1"
    held_out_set(problem_ids=[problem.pk], held_out=hold, user=request.user)
    queue, collection = _label_scope(request)
    messages.success(request, "Held out from rule writing." if hold else "Returned to rule writing.")
    return redirect(_label_url(pk, queue, collection))


@permission_required("concepts.view_labelset")
@require_GET
def label_agreement(request: HttpRequest) -> HttpResponse:
    from concepts.selectors import labels_agreement_table

    rows, problems, annotators = labels_agreement_table()
    rated = [r for r in rows if r.problems and r.alpha is not None]
    mean_alpha = sum(r.alpha for r in rated) / len(rated) if rated else None
    rows = sorted(rows, key=lambda r: (r.alpha is None, r.alpha if r.alpha is not None else 0))
    from concepts.charts import agreement_chart

    return render(
        request,
        "concepts/label_agreement.html",
        {"rows": rows, "problems": problems, "annotators": annotators, "mean_alpha": mean_alpha, "rated": len(rated), "chart": agreement_chart(rows)},
    )


@permission_required("concepts.view_selectedword")
@require_http_methods(["GET", "POST"])
def word_selection(request: HttpRequest) -> HttpResponse:
    from django.core.paginator import Paginator

    from concepts.selectors import bank_vocabulary, selected_words
    from concepts.services import words_select

    if request.method == "POST":
        if not request.user.has_perm("concepts.add_selectedword"):
            raise Http404
        shown = request.POST.getlist("shown")
        action = request.POST.get("action", "save")
        ticked = shown if action == "select_all" else [] if action == "clear_all" else request.POST.getlist("words")
        # The page offers the bank's words: anything else a request sends is no word to select.
        vocabulary, chosen = {w for w, _ in bank_vocabulary()}, selected_words()
        size = words_select(
            add=[w for w in ticked if w in shown and w in vocabulary],
            remove=[w for w in shown if w not in ticked and w in chosen],
            user=request.user,
        )
        messages.success(request, f"Saved: {size} words selected.")
        return redirect(f"{reverse('concepts:words')}?{request.POST.get('query', '')}")
    q = request.GET.get("q", "").strip().lower()
    vocabulary = bank_vocabulary()
    chosen = selected_words()
    rows = [(w, c) for w, c in vocabulary if q in w] if q else vocabulary
    if request.GET.get("only") == "selected":
        rows = [(w, c) for w, c in rows if w in chosen]
    page = Paginator(rows, 100).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "concepts/word_selection.html",
        {"page": page, "chosen": chosen, "q": q, "vocabulary_size": len(vocabulary), "selected_size": len(chosen),
         "query": query.urlencode(), "full_query": request.GET.urlencode()},
    )


# --- the neural extractor (Table 3) ----------------------------------------------------------------


@permission_required("concepts.view_neuralexperiment")
@require_http_methods(["GET", "POST"])
def neural_experiments(request: HttpRequest) -> HttpResponse:
    from concepts.forms import NeuralExperimentForm
    from concepts.models import NeuralExperiment
    from concepts.selectors import concept_positive_counts
    from concepts.services import ExperimentInputError, neural_experiment_start

    form = NeuralExperimentForm(request.POST or None, positive_counts=concept_positive_counts())
    if request.method == "POST":
        if not request.user.has_perm("concepts.add_neuralexperiment"):
            raise Http404
        if form.is_valid():
            data = form.cleaned_data
            try:
                experiment = neural_experiment_start(
                    concepts=data["concepts"], schemes=data["schemes"], rounds=data["rounds"], seed=data["seed"],
                    suggest=data["suggest"], user=request.user,
                )
            except ExperimentInputError as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("concepts:neural", pk=experiment.pk)
    experiments = NeuralExperiment.objects.select_related("created_by")[:30]
    return render(request, "concepts/neural_experiments.html", {"form": form, "experiments": experiments})


def _neural_table(experiment: Any) -> dict[str, Any]:
    """Rows of the Table 3 layout: one per scheme, FN/FP per concept, averages and reductions."""
    from concepts.selectors import neural_results

    results = neural_results(experiment)
    slugs = list(results.get("concepts", {}))
    rows = []
    for key, row in results.get("schemes", {}).items():
        rows.append({"key": key, **row, "cells": [row["concepts"][s] for s in slugs]})
    best = results.get("best", {})
    return {"slugs": slugs, "rows": rows, "best": best, "results": results}


@permission_required("concepts.view_neuralexperiment")
@require_GET
def neural_experiment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    from concepts.selectors import neural_experiment_get, neural_suggestion_lists

    experiment = neural_experiment_get(pk)
    context: dict[str, Any] = {"run": experiment, "experiment": experiment}
    if request.htmx and not experiment.is_active:
        return reload_when_finished()
    if request.htmx:
        return render(request, "concepts/neural_experiment.html#run-status", context)
    if experiment.status == "done":
        from concepts.charts import neural_chart

        context["table"] = _neural_table(experiment)
        context["chart"] = neural_chart(context["table"])
        context["lists"] = neural_suggestion_lists(experiment)
    return render(request, "concepts/neural_experiment.html", context)


@permission_required("concepts.add_neuralexperiment")
@require_POST
def neural_experiment_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    from concepts.selectors import neural_experiment_get
    from concepts.services import neural_experiment_cancel

    experiment = neural_experiment_get(pk)
    if neural_experiment_cancel(experiment=experiment):
        messages.success(request, f"Experiment #{pk} cancelled.")
    else:  # it ended between the page and the press: say so, rather than nothing
        experiment.refresh_from_db(fields=["status"])
        messages.info(request, f"Experiment #{pk} had already ended ({experiment.get_status_display().lower()}): there was nothing to cancel.")
    return redirect("concepts:neural", pk=pk)
