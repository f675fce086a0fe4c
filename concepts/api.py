"""JSON API for rules (with versions), the live preview, extraction runs and extractor reports.

Same services and selectors as the pages; permissions are the Django model permissions of the roles.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from concepts import extraction
from concepts.models import ConceptRule, ExtractionRun, ExtractorReport
from concepts.selectors import concept_get, extraction_run_get, report_get, rule_preview, rule_suggestions, rule_versions
from concepts.services import (
    ExtractionInputError,
    LabelsConflict,
    RuleConflict,
    RuleRejected,
    extraction_run_start,
    extractor_report_start,
    rule_revert,
    rule_save,
)
from problems.roles import HasCourseRole, has_course_role


def perm(read: str, write: str | None = None) -> type[BasePermission]:
    class HasPerm(BasePermission):
        def has_permission(self, request: Request, view: Any) -> bool:
            # These views replace the default HasCourseRole: an account with no role is told to ask for one here too.
            if not has_course_role(request.user):
                self.message = HasCourseRole.message
                return False
            needed = read if request.method in ("GET", "HEAD", "OPTIONS") or write is None else write
            return bool(request.user and request.user.is_authenticated and request.user.has_perm(needed))

    return HasPerm


class RuleVersionOutput(serializers.Serializer):
    number = serializers.IntegerField()
    pattern = serializers.CharField()
    statement_pattern = serializers.CharField(help_text="branches matched in a problem's statement alone (README \"Where a branch reads\"); may be empty")
    ignore_case = serializers.BooleanField()
    enabled = serializers.BooleanField()
    message = serializers.CharField()
    author = serializers.CharField(source="author.username", default=None, allow_null=True, help_text="null for a version nobody signed (load_demo, an import)")
    created_at = serializers.DateTimeField()


class RuleOutput(serializers.Serializer):
    concept = serializers.CharField(source="concept.slug")
    pattern = serializers.CharField(help_text="matched in everything the rules read of a problem: its statement, then its solution")
    statement_pattern = serializers.CharField(help_text="branches matched in a problem's statement alone (README \"Where a branch reads\"); may be empty")
    ignore_case = serializers.BooleanField()
    enabled = serializers.BooleanField()
    version = serializers.IntegerField()
    updated_by = serializers.CharField(source="updated_by.username", default=None, allow_null=True, help_text="null for a rule nobody signed (load_demo, an import)")
    updated_at = serializers.DateTimeField()


STATEMENT_PATTERN_INPUT = dict(
    trim_whitespace=False, max_length=extraction.MAX_PATTERN_LENGTH, allow_blank=True, default="",
    help_text="branches matched in the statement alone; either pattern may be blank, not both",
)


class RuleInput(serializers.Serializer):
    pattern = serializers.CharField(trim_whitespace=False, max_length=extraction.MAX_PATTERN_LENGTH, allow_blank=True)
    statement_pattern = serializers.CharField(**STATEMENT_PATTERN_INPUT)
    ignore_case = serializers.BooleanField(default=True)
    enabled = serializers.BooleanField(default=True)
    message = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)
    base_version = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)


class RevertInput(serializers.Serializer):
    base_version = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)


class RuleDetailOutput(RuleOutput):
    versions = RuleVersionOutput(many=True)


class ConflictOutput(serializers.Serializer):
    """409: the object changed since `base_version`; nothing was saved."""

    detail = serializers.CharField()
    current = serializers.DictField()
    diff = serializers.CharField()


ERROR = OpenApiTypes.OBJECT  # {"detail": "..."} or {"field": ["..."]}


def _rule_conflict(exc: RuleConflict) -> Response:
    current = RuleOutput(exc.rule).data if exc.rule else None
    return Response({"detail": exc.message, "current": current, "diff": exc.diff}, status=status.HTTP_409_CONFLICT)


class ModulesField(serializers.ListField):
    """Module ids to limit a preview to; an id that is no module is a 400 naming it, not an empty preview."""

    def __init__(self, **kwargs: Any) -> None:
        from prob2vec_site.security import BIGINT_MAX

        kwargs.setdefault("child", serializers.IntegerField(min_value=0, max_value=BIGINT_MAX))
        super().__init__(required=False, default=list, help_text="module ids; blank for every module", **kwargs)

    def to_internal_value(self, data: Any) -> list[int]:
        from problems.models import Module

        ids = super().to_internal_value(data)
        unknown = sorted(set(ids) - set(Module.objects.filter(pk__in=ids).values_list("pk", flat=True)))
        if unknown:
            raise serializers.ValidationError(f"no module with id {', '.join(map(str, unknown))}")
        return ids


class PreviewInput(serializers.Serializer):
    concept = serializers.CharField()
    pattern = serializers.CharField(trim_whitespace=False, max_length=extraction.MAX_PATTERN_LENGTH, allow_blank=True)
    statement_pattern = serializers.CharField(**STATEMENT_PATTERN_INPUT)
    ignore_case = serializers.BooleanField(default=True)
    modules = ModulesField()


class RunOutput(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.CharField(help_text="rules, or hybrid: a rules run plus the learned extractor")
    status = serializers.CharField()
    problems_total = serializers.IntegerField()
    problems_done = serializers.IntegerField()
    concepts_found = serializers.IntegerField()
    rule_versions = serializers.DictField()
    details = serializers.DictField(help_text="rules: reads_solutions (whether the rules read each problem's solution after its statement); hybrid: the learned model, its thresholds and what it added")
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True, help_text="null until the run is done or failed")


class ReportOutput(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.CharField()
    status = serializers.CharField()
    collection = serializers.CharField()
    held_out = serializers.BooleanField(help_text="measured on the problems held out from rule writing only")
    problems = serializers.IntegerField()
    average = serializers.SerializerMethodField()
    concepts = serializers.DictField()
    rule_versions = serializers.DictField()
    error = serializers.CharField()
    created_at = serializers.DateTimeField()

    def get_average(self, report: ExtractorReport) -> dict[str, float | None]:
        return {"fp_rate": report.fp_rate, "fn_rate": report.fn_rate}


@extend_schema(operation_id="rules_list", summary="Every concept rule", responses={200: RuleOutput(many=True)})
@api_view(["GET"])
@permission_classes([perm("concepts.view_conceptrule")])
def rule_list_api(request: Request) -> Response:
    rules = ConceptRule.objects.select_related("concept", "updated_by").order_by("concept__slug")
    return Response(RuleOutput(rules, many=True).data)


@extend_schema(methods=["GET"], summary="A rule with its versions", responses={200: RuleDetailOutput, 404: ERROR})
@extend_schema(
    methods=["PUT"], summary="Save a rule (a new version)", request=RuleInput,
    responses={200: RuleOutput, 400: ERROR, 404: ERROR, 409: ConflictOutput},
)
@api_view(["GET", "PUT"])
@permission_classes([perm("concepts.view_conceptrule", "concepts.change_conceptrule")])
def rule_detail_api(request: Request, slug: str) -> Response:
    concept = concept_get(slug)
    if request.method == "PUT":
        data = RuleInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            rule = rule_save(concept=concept, user=request.user, **data.validated_data)
        except RuleRejected as exc:
            return Response({exc.field: [str(exc)], "position": exc.position}, status=status.HTTP_400_BAD_REQUEST)
        except RuleConflict as exc:
            return _rule_conflict(exc)
        return Response(RuleOutput(rule).data)
    rule = get_object_or_404(ConceptRule.objects.select_related("concept", "updated_by"), concept=concept)
    return Response({**RuleOutput(rule).data, "versions": RuleVersionOutput(rule_versions(rule), many=True).data})


@extend_schema(
    summary="Revert a rule to an earlier version (a new version)", request=RevertInput,
    responses={200: RuleOutput, 400: ERROR, 404: ERROR, 409: ConflictOutput},
)
@api_view(["POST"])
@permission_classes([perm("concepts.change_conceptrule", "concepts.change_conceptrule")])
def rule_revert_api(request: Request, slug: str, number: int) -> Response:
    rule = get_object_or_404(ConceptRule, concept=concept_get(slug))
    data = RevertInput(data=request.data)
    data.is_valid(raise_exception=True)
    try:
        rule = rule_revert(rule=rule, number=number, user=request.user, **data.validated_data)
    except RuleRejected as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    except RuleConflict as exc:
        return _rule_conflict(exc)
    return Response(RuleOutput(rule).data)


class PreviewStatsOutput(serializers.Serializer):
    tp = serializers.IntegerField()
    fp = serializers.IntegerField()
    fn = serializers.IntegerField()
    tn = serializers.IntegerField()
    fp_rate = serializers.FloatField(allow_null=True)
    fn_rate = serializers.FloatField(allow_null=True)


class PreviewMatchOutput(serializers.Serializer):
    problem = serializers.IntegerField()
    spans = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))
    verdict = serializers.CharField(allow_null=True)


class PreviewChangeOutput(serializers.Serializer):
    problem = serializers.IntegerField()
    right = serializers.BooleanField(allow_null=True)


class PreviewOutput(serializers.Serializer):
    matched = serializers.IntegerField()
    total = serializers.IntegerField()
    engine = serializers.CharField()
    stats = PreviewStatsOutput(allow_null=True)
    matches = PreviewMatchOutput(many=True)
    newly_matched = PreviewChangeOutput(many=True)
    no_longer_matched = PreviewChangeOutput(many=True)
    missed = serializers.ListField(child=serializers.IntegerField(), help_text="labelled problems of the concept the pattern does not match (FN)")
    false_positives = serializers.ListField(child=serializers.IntegerField(), help_text="matched problems labelled without the concept (FP)")


@extend_schema(summary="Preview a pattern over the bank", request=PreviewInput, responses={200: PreviewOutput, 400: ERROR, 404: ERROR})
@api_view(["POST"])
@permission_classes([perm("concepts.preview_conceptrule", "concepts.preview_conceptrule")])
def rule_preview_api(request: Request) -> Response:
    data = PreviewInput(data=request.data)
    data.is_valid(raise_exception=True)
    v = data.validated_data
    result = rule_preview(
        concept=concept_get(v["concept"]), pattern=v["pattern"], ignore_case=v["ignore_case"], module_ids=v["modules"],
        statement_pattern=v["statement_pattern"],
    )
    if result.error:
        # The shape stays {error, position}; an error in the statement-only pattern says so in its message.
        return Response({"error": result.error, "position": result.position}, status=status.HTTP_400_BAD_REQUEST)
    stats = result.stats.as_dict() if result.stats else None
    return Response(
        {
            "matched": result.matched,
            "total": result.total,
            "engine": result.engine,
            "stats": stats,
            "matches": [{"problem": r.problem_id, "spans": r.spans, "verdict": r.verdict} for r in result.rows],
            "newly_matched": [{"problem": pid, "right": right} for pid, _, right in result.newly_matched],
            "no_longer_matched": [{"problem": pid, "right": right} for pid, _, right in result.no_longer_matched],
            "missed": result.missed_ids,
            "false_positives": result.false_positive_ids,
        }
    )


class SuggestionsInput(serializers.Serializer):
    concept = serializers.CharField()
    pattern = serializers.CharField(trim_whitespace=False, max_length=extraction.MAX_PATTERN_LENGTH, allow_blank=True, default="",
                                    help_text="the pattern as typed; blank for a concept with no rule yet")
    statement_pattern = serializers.CharField(**STATEMENT_PATTERN_INPUT)
    ignore_case = serializers.BooleanField(default=True)
    modules = ModulesField()


class AlternativeOutput(serializers.Serializer):
    text = serializers.CharField()
    branch = serializers.CharField()


class PhraseOutput(serializers.Serializer):
    text = serializers.CharField(help_text="the phrase; # stands for any number")
    branch = serializers.CharField(help_text="the regex alternative to append")
    fn_recovered = serializers.IntegerField()
    fp_added = serializers.IntegerField()
    positives = serializers.IntegerField(help_text="labelled problems with the concept it matches")
    negatives = serializers.IntegerField(help_text="labelled problems without the concept it matches")
    unlabelled = serializers.IntegerField(help_text="unlabelled problems it would newly match")
    precision = serializers.FloatField(help_text="expected precision on new problems")
    recovered = serializers.ListField(child=serializers.IntegerField(), source="recovered_ids")
    false_positives = serializers.ListField(child=serializers.IntegerField(), source="false_positive_ids")
    pattern = serializers.CharField(source="appended", help_text="the pattern with this branch appended")
    alternatives = serializers.SerializerMethodField(help_text="other phrases with exactly the same effect")

    @extend_schema_field(AlternativeOutput(many=True))
    def get_alternatives(self, row: Any) -> list[dict[str, str]]:
        return [{"text": text, "branch": branch} for text, branch, _ in row.alternatives]


class SuggestionOutput(PhraseOutput):
    fn_left = serializers.IntegerField(help_text="FN left once this and the suggestions before it are appended")


class SuggestionsOutput(serializers.Serializer):
    positives = serializers.IntegerField()
    negatives = serializers.IntegerField()
    missed = serializers.IntegerField()
    suggestions = SuggestionOutput(many=True)
    phrases = PhraseOutput(many=True)


@extend_schema(
    summary="Mined phrases and suggested branches for a pattern",
    description="Phrases of the labelled problems the pattern misses that would recover them, each with the FN it "
    "recovers and the FP it adds on the labelled problems; `suggestions` are chosen greedily, in order.",
    request=SuggestionsInput, responses={200: SuggestionsOutput, 400: ERROR, 404: ERROR},
)
@api_view(["POST"])
@permission_classes([perm("concepts.preview_conceptrule", "concepts.preview_conceptrule")])
def rule_suggestions_api(request: Request) -> Response:
    data = SuggestionsInput(data=request.data)
    data.is_valid(raise_exception=True)
    v = data.validated_data
    result = rule_suggestions(
        concept=concept_get(v["concept"]), pattern=v["pattern"], ignore_case=v["ignore_case"], module_ids=v["modules"],
        statement_pattern=v["statement_pattern"],
    )
    if result.error:
        return Response({"error": result.error}, status=status.HTTP_400_BAD_REQUEST)
    return Response(SuggestionsOutput(result).data)


class RunInput(serializers.Serializer):
    source = serializers.ChoiceField(choices=["rules", "hybrid"], default="rules", required=False,
                                     help_text="rules (default), or hybrid: the latest rules run plus the learned extractor")


@extend_schema(methods=["GET"], operation_id="extraction_runs_list", summary="The latest 50 extraction runs", responses={200: RunOutput(many=True)})
@extend_schema(
    methods=["POST"],
    summary="Start an extraction run",
    description="202: queued (or the earlier run of identical inputs). 400: a hybrid run with no finished rules run to "
    "add to. 503: the job queue is unavailable; the run is failed with that error, and nothing was queued.",
    request=RunInput,
    responses={202: RunOutput, 400: ERROR, 503: RunOutput},
)
@api_view(["GET", "POST"])
@permission_classes([perm("concepts.view_extractionrun", "concepts.add_extractionrun")])
def extraction_run_list_api(request: Request) -> Response:
    if request.method == "POST":
        data = RunInput(data=request.data)  # a body, when sent, is an object (README Security): [] or null is a 400
        data.is_valid(raise_exception=True)
        try:
            run = extraction_run_start(user=request.user, source=data.validated_data["source"])
        except ExtractionInputError as exc:
            return Response({"source": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(RunOutput(run).data, status=status.HTTP_503_SERVICE_UNAVAILABLE if run.not_queued else status.HTTP_202_ACCEPTED)
    return Response(RunOutput(ExtractionRun.objects.all()[:50], many=True).data)


@extend_schema(summary="One extraction run", responses={200: RunOutput, 404: ERROR})
@api_view(["GET"])
@permission_classes([perm("concepts.view_extractionrun")])
def extraction_run_detail_api(request: Request, pk: int) -> Response:
    return Response(RunOutput(extraction_run_get(pk)).data)


class ReportInput(serializers.Serializer):
    collection = serializers.CharField(required=False, allow_blank=True, default="", max_length=100,
                                       help_text="only problems of this collection; blank for all")
    source = serializers.ChoiceField(choices=["rules", "hybrid"], default="rules", required=False,
                                     help_text="the rules (default), or the hybrid source (judged out of fold)")
    held_out = serializers.BooleanField(default=False, required=False,
                                        help_text="measure on the problems held out from rule writing only")

    def validate_collection(self, name: str) -> str:
        from problems.selectors import unknown_collection

        message = unknown_collection(name) if name else ""  # a typo: said now, not by a report that fails later
        if message:
            raise serializers.ValidationError(message)
        return name


@extend_schema(methods=["GET"], operation_id="reports_list", summary="The latest 50 extractor reports", responses={200: ReportOutput(many=True)})
@extend_schema(
    methods=["POST"],
    summary="Start an extractor report",
    description="503: the job queue is unavailable; the report is failed with that error, and nothing was queued.",
    request=ReportInput,
    responses={202: ReportOutput, 400: ERROR, 503: ReportOutput},
)
@api_view(["GET", "POST"])
@permission_classes([perm("concepts.view_extractorreport", "concepts.add_extractorreport")])
def report_list_api(request: Request) -> Response:
    if request.method == "POST":
        data = ReportInput(data=request.data)
        data.is_valid(raise_exception=True)
        collection = data.validated_data["collection"]
        report = extractor_report_start(
            user=request.user, collection=collection, source=data.validated_data["source"], held_out=data.validated_data["held_out"]
        )
        return Response(ReportOutput(report).data, status=status.HTTP_503_SERVICE_UNAVAILABLE if report.not_queued else status.HTTP_202_ACCEPTED)
    return Response(ReportOutput(ExtractorReport.objects.all()[:50], many=True).data)


@extend_schema(summary="One extractor report", responses={200: ReportOutput, 404: ERROR})
@api_view(["GET"])
@permission_classes([perm("concepts.view_extractorreport")])
def report_detail_api(request: Request, pk: int) -> Response:
    return Response(ReportOutput(report_get(pk)).data)


# --- expert labels ------------------------------------------------------------------------------


class LabelsInput(serializers.Serializer):
    concepts = serializers.ListField(child=serializers.CharField(), allow_empty=True)
    base_version = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)


class LabelsOutput(serializers.Serializer):
    problem = serializers.IntegerField()
    ground_truth = serializers.ListField(child=serializers.CharField())
    mine = serializers.ListField(child=serializers.CharField())
    mine_version = serializers.IntegerField()
    suggestions = serializers.JSONField()
    held_out = serializers.BooleanField(help_text="held out from rule writing: labelled without suggestions, which are then empty")
    annotators = serializers.JSONField(required=False, help_text="head TAs only")
    resolution = serializers.JSONField(required=False, help_text="head TAs only")
    resolution_version = serializers.IntegerField(required=False, help_text="head TAs only")


class ResolutionOutput(serializers.Serializer):
    problem = serializers.IntegerField()
    ground_truth = serializers.ListField(child=serializers.CharField())
    resolution_version = serializers.IntegerField()


class LabelsConflictOutput(ConflictOutput):
    add = serializers.ListField(child=serializers.CharField())
    remove = serializers.ListField(child=serializers.CharField())


def _labels_conflict(exc: LabelsConflict) -> Response:
    current = {"concepts": exc.saved, "version": exc.version, "updated_by": exc.updated_by, "updated_at": exc.updated_at}
    body = {"detail": exc.message, "current": current, "diff": exc.diff, "add": exc.add, "remove": exc.remove}
    return Response(body, status=status.HTTP_409_CONFLICT)


def _concepts_from_slugs(slugs: list[str]) -> tuple[list[Any], list[str]]:
    from concepts.models import Concept

    found = list(Concept.objects.filter(slug__in=slugs))
    unknown = sorted(set(slugs) - {c.slug for c in found})
    return found, unknown


@extend_schema(methods=["GET"], summary="A problem's labels", responses={200: LabelsOutput, 404: ERROR})
@extend_schema(
    methods=["PUT"], summary="Set my labels for a problem", request=LabelsInput,
    responses={200: LabelsOutput, 400: ERROR, 404: ERROR, 409: LabelsConflictOutput},
)
@api_view(["GET", "PUT"])
@permission_classes([perm("concepts.view_labelset", "concepts.add_labelset")])
def labels_api(request: Request, pk: int) -> Response:
    """GET the problem's ground truth and my labels (head TAs: everyone's); PUT my label set."""
    from concepts.selectors import label_page
    from concepts.services import LabelsRejected, labels_set
    from problems.selectors import problem_get_for_user

    problem = problem_get_for_user(request.user, pk)
    if request.method == "PUT":
        data = LabelsInput(data=request.data)
        data.is_valid(raise_exception=True)
        concepts, unknown = _concepts_from_slugs(data.validated_data["concepts"])
        if unknown:
            return Response({"concepts": [f"unknown concept(s): {', '.join(unknown)}"]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            labels_set(problem=problem, annotator=request.user, concepts=concepts, base_version=data.validated_data["base_version"])
        except LabelsRejected as exc:
            return Response({"concepts": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        except LabelsConflict as exc:
            return _labels_conflict(exc)
    page = label_page(problem=problem, user=request.user, show_others=request.user.has_perm("concepts.resolve_labels"))
    body: dict[str, Any] = {
        "problem": problem.pk, "ground_truth": page.truth, "mine": page.mine, "mine_version": page.mine_version, "suggestions": page.suggestions,
        "held_out": page.held_out is not None,
    }
    if request.user.has_perm("concepts.resolve_labels"):
        body.update(annotators=page.others, resolution=page.resolution, resolution_version=page.resolution_version)
    return Response(body)


@extend_schema(
    summary="Resolve a problem's ground truth (head TA)", request=LabelsInput,
    responses={200: ResolutionOutput, 400: ERROR, 404: ERROR, 409: LabelsConflictOutput},
)
@api_view(["POST"])
@permission_classes([perm("concepts.resolve_labels", "concepts.resolve_labels")])
def labels_resolve_api(request: Request, pk: int) -> Response:
    from concepts.services import LabelsRejected, labels_resolve
    from problems.selectors import problem_get_for_user

    problem = problem_get_for_user(request.user, pk)
    data = LabelsInput(data=request.data)
    data.is_valid(raise_exception=True)
    concepts, unknown = _concepts_from_slugs(data.validated_data["concepts"])
    if unknown:
        return Response({"concepts": [f"unknown concept(s): {', '.join(unknown)}"]}, status=status.HTTP_400_BAD_REQUEST)
    try:
        resolution = labels_resolve(problem=problem, concepts=concepts, user=request.user, base_version=data.validated_data["base_version"])
    except LabelsRejected as exc:
        return Response({"concepts": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
    except LabelsConflict as exc:
        return _labels_conflict(exc)
    return Response(
        {"problem": problem.pk, "ground_truth": sorted(resolution.concepts.values_list("slug", flat=True)), "resolution_version": resolution.version}
    )
