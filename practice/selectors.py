"""Reads for practice: the practice bank (every problem's active-embedding vector and concepts, kept in
process memory), a student's attempts, the next problem, and a student's and the class's progress."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
from django.db.models import Q

from embeddings.models import ActiveEmbedding, ConceptSource
from embeddings.selectors import active_run, run_arrays

_PRACTICE_MEMO: dict[str, Any] = {}


@dataclass
class PracticeBank:
    ids: np.ndarray  # problem ids, row order
    row: dict[int, int]
    bank: Any  # practice.algorithms.recommend.Bank
    open_mask: np.ndarray  # released and in a module open for practice
    run_id: int | None
    released: np.ndarray  # (n,) bool
    modules: list[str | None]  # module name per row
    concept_slugs: list[str] = field(default_factory=list)  # per concept index; bank.concept_names holds the names

    def module_rows(self, names: Iterable[str]) -> dict[str, np.ndarray]:
        """Rows of each module's released problems."""
        wanted = set(names)
        rows: dict[str, list[int]] = {name: [] for name in wanted}
        for i, module in enumerate(self.modules):
            if module in wanted and self.released[i]:
                rows[module].append(i)
        return {name: np.array(r, dtype=np.int64) for name, r in rows.items()}


def practice_bank() -> PracticeBank:
    """Every problem with its active-embedding vector and concepts; rebuilt when the embedding,
    the labels or the bank change, else reused from process memory (a request reads it, never builds it twice).

    Whether anything changed is asked of the database at most every PRACTICE_BANK_RECHECK_SECONDS,
    with index seeks and the few module and concept rows only (edits, additions, a new embedding,
    modules opened, closed, renamed or reordered, concepts renamed: a change reaches practice within
    that many seconds). Deletions show only in row counts, which scan the tables (~25 ms at 100,000
    problems, more than a whole recommendation), so those are taken every PRACTICE_BANK_COUNT_SECONDS;
    a problem deleted in between is caught by `next_problem_offer`.

    A bank read again is a new object: row numbers mean rows of the bank they were computed with only
    (`NextProblem` keeps the two together)."""
    import time

    from django.conf import settings
    from django.db.models import Max

    from concepts.models import Concept, GroundTruthLabel
    from practice.algorithms.recommend import Bank
    from embeddings.algorithms.similarity import normalize
    from problems.models import Module, Problem

    now = time.monotonic()
    memo = _PRACTICE_MEMO.get("current")
    if memo is not None and now - memo["checked"] < settings.PRACTICE_BANK_RECHECK_SECONDS:
        return memo["bank"]
    recount = memo is None or now - memo["counted"] >= settings.PRACTICE_BANK_COUNT_SECONDS
    counts = (Problem.objects.count(), GroundTruthLabel.objects.count()) if recount else memo["counts"]
    state = (
        ActiveEmbedding.objects.filter(pk=1).values_list("run_id", flat=True).first(),  # not the run's blobs
        Problem.objects.aggregate(last=Max("updated_at"), top=Max("id")),
        GroundTruthLabel.objects.aggregate(top=Max("id")),
        # Every module's (id, name, open flag, order), one query over a table of a few dozen rows: the
        # highest id and the number open missed a rename (its rows kept the old name: a blank
        # class-progress column) and one module closed as another opened (the closed one still offered).
        tuple(Module.objects.order_by("id").values_list("id", "name", "open_for_practice", "order")),
        # The concepts' names, which reasons name them by ("this one adds Combinations"): a rename (the
        # admin, a dictionary import) changes no problem or label row. A few hundred short rows.
        tuple(Concept.objects.order_by("id").values_list("id", "name")),
        counts,
    )
    key = repr(state)
    if memo is not None and memo["key"] == key:
        memo["checked"] = now
        if recount:
            memo["counted"] = now
        return memo["bank"]
    run = active_run()
    rows = list(Problem.objects.order_by("module__order", "id").values_list("id", "title", "released", "module__open_for_practice", "module__name"))
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    row = {int(pid): i for i, pid in enumerate(ids)}
    slugs: dict[str, int] = {}
    sets: list[set[int]] = [set() for _ in rows]
    for pid, slug in GroundTruthLabel.objects.values_list("problem_id", "concept__slug"):
        if pid in row:
            sets[row[pid]].add(slugs.setdefault(slug, len(slugs)))
    if run is not None and run.source in (ConceptSource.RULES, ConceptSource.HYBRID) and run.extraction_run_id:
        # An active embedding on extracted concepts: a problem nobody labelled has the concepts that run
        # found (a book just imported has hundreds), not none. Labels, where there are any, stay truth.
        # The run's extraction is fixed, so the active run's id in the state above covers it.
        from concepts.models import ExtractedConcept

        labelled = [bool(s) for s in sets]
        for pid, slug in ExtractedConcept.objects.filter(run_id=run.extraction_run_id).values_list("problem_id", "concept__slug"):
            r = row.get(pid)
            if r is not None and not labelled[r]:
                sets[r].add(slugs.setdefault(slug, len(slugs)))
    dim = run.dim if run else 1
    # float32 like the stored run: a 100,000-problem bank with the MiniLM fallback (434 dimensions) holds
    # 174 MB per process instead of 347 MB; cosines need no more precision.
    vectors = np.zeros((len(rows), max(dim, 1)), dtype=np.float32)
    if run is not None:
        run_ids, run_vectors = run_arrays(run)
        for i, pid in enumerate(run_ids):
            r = row.get(int(pid))
            if r is not None:
                vectors[r] = run_vectors[i]
    # Reasons name concepts by their names ("It also brings Combinations"), never by slug.
    display = dict(Concept.objects.filter(slug__in=list(slugs)).values_list("slug", "name"))
    concept_slugs = [""] * len(slugs)
    for slug, i in slugs.items():
        concept_slugs[i] = slug
    names = [display.get(slug) or slug for slug in concept_slugs]
    # Titles are what recommendations name ("You solved “…”"): a problem withdrawn from students since
    # they tried it is never named to them.
    titles = [title if released else f"problem #{pid} (withdrawn)" for pid, title, released, _, _ in rows]
    bank = Bank(normalize(vectors), [frozenset(s) for s in sets], titles, names)
    practice = PracticeBank(
        ids, row, bank, np.array([bool(r[2] and r[3]) for r in rows], dtype=bool), run.pk if run else None,
        released=np.array([bool(r[2]) for r in rows], dtype=bool), modules=[r[4] for r in rows], concept_slugs=concept_slugs,
    )
    bank.incidence  # built now, not by the first request (and before gunicorn forks its workers)
    _PRACTICE_MEMO["current"] = {"key": key, "checked": now, "counted": now, "counts": counts, "bank": practice}
    return practice


def student_attempts(student: Any, practice: PracticeBank) -> list[Any]:
    from practice.algorithms.recommend import Attempt as PureAttempt
    from practice.models import Attempt

    out = []
    for pid, verdict, outcome in Attempt.objects.filter(student=student).order_by("created_at", "id").values_list("problem_id", "verdict", "outcome"):
        if pid in practice.row:
            out.append(PureAttempt(practice.row[pid], outcome, skipped=verdict == "skipped"))
    return out


def practice_bank_forget() -> None:
    """Forget the bank kept in process memory: the next `practice_bank()` reads it again."""
    _PRACTICE_MEMO.clear()


@dataclass
class NextProblem:
    """A recommendation with the bank it was computed from. Its row numbers (``recommendation.problem``,
    ``because_of``, ``new_concepts``) are rows of ``practice`` and of no other bank: a bank read again
    (a problem deleted, added or edited meanwhile) numbers its rows anew, so they are turned into ids
    and slugs here, never through another `practice_bank()` call. ``problem`` and ``recommendation``
    are None when no open problem is left."""

    practice: PracticeBank
    problem: Any = None  # problems.models.Problem
    recommendation: Any = None  # practice.algorithms.recommend.Recommendation

    @property
    def because_of_id(self) -> int | None:
        """The id of the problem the choice builds on."""
        rec = self.recommendation
        return int(self.practice.ids[rec.because_of]) if rec is not None and rec.because_of is not None else None

    @property
    def new_concept_slugs(self) -> list[str]:
        """The slugs of the concepts the problem adds."""
        rec = self.recommendation
        return [self.practice.concept_slugs[c] for c in rec.new_concepts] if rec is not None else []


def next_problem_offer(
    student: Any, *, mode: str = "next", current_id: int | None = None, recent_ids: Iterable[int] = (), retry: bool = True
) -> NextProblem:
    """The next problem for a student with its recommendation and the bank both came from (see
    `NextProblem`). ``recent_ids``: the problems last shown to them, oldest first (the practice page
    remembers its offers)."""
    from practice.algorithms.recommend import recommend
    from problems.models import Problem

    practice = practice_bank()
    attempts = student_attempts(student, practice)
    current = practice.row.get(current_id) if current_id is not None else None
    recent = [practice.row[pid] for pid in recent_ids if pid in practice.row]
    rec = recommend(practice.bank, attempts, practice.open_mask, mode=mode, current=current, recent=recent)
    if rec is None:
        return NextProblem(practice)
    problem = Problem.objects.select_related("module").filter(pk=int(practice.ids[rec.problem])).first()
    if problem is None and retry:  # deleted since the bank was read: read it again (a new bank, new rows)
        practice_bank_forget()
        return next_problem_offer(student, mode=mode, current_id=current_id, recent_ids=recent_ids, retry=False)
    return NextProblem(practice, problem, rec) if problem is not None else NextProblem(practice)


def next_problem_for(
    student: Any, *, mode: str = "next", current_id: int | None = None, recent_ids: Iterable[int] = (), retry: bool = True
) -> tuple[Any, Any] | None:
    """(Problem, Recommendation) for a student, or None when no open problem is left. The recommendation's
    row numbers belong to a bank the caller no longer holds: callers that turn them into ids or slugs
    use `next_problem_offer`. Its reason is complete text, right as it stands."""
    found = next_problem_offer(student, mode=mode, current_id=current_id, recent_ids=recent_ids, retry=retry)
    return (found.problem, found.recommendation) if found.problem is not None else None


# --- class progress (instructors) -------------------------------------------------------------------


@dataclass
class StudentProgress:
    student: Any
    progress: Any  # practice.algorithms.progress.LearnerProgress
    last_active: Any
    concepts: dict[str, float]  # slug -> mastery, concepts met
    modules: dict[str, float]  # module -> projected mastery


@dataclass
class ClassProgress:
    students: list[StudentProgress]
    concepts: list[Any]  # Concept rows met by some student, in syllabus order
    modules: list[Any]  # Module rows open for practice or with attempts, in order
    class_concepts: dict[str, float]
    class_modules: dict[str, float]
    failed_problems: list[dict[str, Any]]
    run_id: int | None

    @property
    def stuck(self) -> list[StudentProgress]:
        return [s for s in self.students if s.progress.stuck]


def _progress_of(student: Any, attempts: list[Any], practice: PracticeBank, module_rows: dict[str, np.ndarray], last_active: Any) -> StudentProgress:
    from practice.algorithms.progress import learner_progress

    progress = learner_progress(practice.bank, attempts, module_rows)
    concepts = {practice.concept_slugs[c]: m for c, m in progress.concept_mastery.items()}
    return StudentProgress(student, progress, last_active, concepts, progress.module_mastery)


def class_progress() -> ClassProgress:
    """Every student's progress (members of the student role and anyone who practised), the class
    means, and the problems failed most."""
    from django.contrib.auth import get_user_model
    from django.db.models import Count

    from concepts.models import Concept
    from practice.algorithms.progress import class_means
    from practice.algorithms.recommend import Attempt as PureAttempt
    from problems.models import Module
    from practice.models import Attempt
    from problems.roles import STUDENT

    practice = practice_bank()
    by_student: dict[int, list[Any]] = {}
    last_active: dict[int, Any] = {}
    for sid, pid, verdict, outcome, at in Attempt.objects.order_by("created_at", "id").values_list("student_id", "problem_id", "verdict", "outcome", "created_at"):
        last_active[sid] = at
        if pid in practice.row:
            by_student.setdefault(sid, []).append(PureAttempt(practice.row[pid], outcome, skipped=verdict == "skipped"))
    users = get_user_model().objects.filter(Q(groups__name=STUDENT) | Q(pk__in=last_active.keys())).distinct().order_by("username")
    modules = list(Module.objects.filter(Q(open_for_practice=True) | Q(problems__attempts__isnull=False)).distinct().order_by("order", "name"))
    rows = practice.module_rows(m.name for m in modules)  # once: it walks the whole bank
    students = [_progress_of(u, by_student.get(u.pk, []), practice, rows, last_active.get(u.pk)) for u in users]
    met = set().union(*(s.concepts.keys() for s in students)) if students else set()
    failed = list(
        Attempt.objects.exclude(verdict="skipped")
        .values("problem_id", "problem__title", "problem__module__name")
        .annotate(tries=Count("id"), failures=Count("id", filter=Q(outcome__lt=0.5)), students=Count("student", distinct=True))
        .filter(failures__gt=0)
        .order_by("-failures", "-tries", "problem_id")[:10]
    )
    for row in failed:
        row["fail_rate"] = row["failures"] / row["tries"]
    return ClassProgress(
        students=students,
        concepts=[c for c in Concept.objects.select_related("module").order_by("module__order", "slug") if c.slug in met],
        modules=modules,
        class_concepts=class_means(s.concepts for s in students),
        class_modules=class_means(s.modules for s in students),
        failed_problems=failed,
        run_id=practice.run_id,
    )


def student_progress(student: Any) -> tuple[StudentProgress, list[Any]]:
    """One student's progress and their attempts, newest first."""
    from problems.models import Module
    from practice.models import Attempt

    practice = practice_bank()
    modules = [m.name for m in Module.objects.filter(Q(open_for_practice=True) | Q(problems__attempts__student=student)).distinct().order_by("order", "name")]
    attempts = list(Attempt.objects.filter(student=student).select_related("problem", "problem__module").order_by("-created_at", "-id"))
    progress = _progress_of(student, student_attempts(student, practice), practice, practice.module_rows(modules), attempts[0].created_at if attempts else None)
    return progress, attempts
