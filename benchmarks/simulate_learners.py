"""Benchmark: does the recommendation policy help? Simulated learners on the demo course.

What it measures
    Synthetic learners with a hidden skill per concept practise the demo course's problems, one
    attempt at a time, under three policies, each learner meeting the same start and the same
    random numbers under every policy (common random numbers):
      recommend  our `practice.algorithms.recommend.recommend()` (mode "next", default Policy),
                 on Prob2Vec vectors of the whole bank, eligible = the problems of the first
                 --modules modules (as the app does with the modules open for practice);
      random     a uniformly random unsolved eligible problem each time (a failed one may come again);
      book       the bank's order (module order, then id): a failed problem is retried once at
                 once, then the learner moves on; after the last problem the learner starts another
                 pass over the problems still unsolved.
    No policy ever gives a problem the learner has solved. Per policy:
      problems-to-mastery  attempts until every target concept's hidden skill reaches --threshold;
                           a learner who does not get there within --max-attempts (or whose policy
                           runs out of problems first) counts as the cap, so median and IQR are
                           exact rank statistics while fewer than a quarter / half are censored, and
                           the mean is a lower bound; "not mastered" says how many were censored;
      success rate         share of all attempts that were solved;
      frustrating          share of all attempts whose true p(solve) was below 0.2.
    Target concepts: those whose home module (concepts.tsv) is among the first --modules modules and
    that label at least one eligible problem. Problems there also carry a few later-module concepts
    (pmf, Gaussian-distribution, ...): they count for p(solve) and learning, not for the target.

Learner model (LearnerModel; the same for every policy, nothing in it reads the embedding)
    skill s_c in [0, 1]: the chance of applying concept c correctly. Initial s_c ~ U(0.05, 0.45),
    independent per concept (no prerequisite structure); a learner speed r ~ U(0.75, 1.25).
    p(solve problem) = guess + (1 - slip - guess) * prod_{c in problem} s_c, guess 0.05, slip 0.10
    (every concept must be applied: a noisy AND).
    After an attempt, for every concept c of the problem:
        s_c += min(1, r * g / load ** 0.5) * (1 - s_c),  g = 1.0 if solved, 0.5 if not (the learner
        reads the worked solution), load = max(1, number of the problem's concepts still below the
        mastery threshold).
    So learning is faster on success and on problems with few unmastered concepts (attention is split
    over what is new); skills never fall (no forgetting), and a solved problem is never seen again.
    Calibration, said plainly: the first choice was g = 0.5 / 0.2 divided by load (power 1). With it
    no learner under any policy reached 0.9 on all 40 target concepts of modules 1-6 before every
    eligible problem was solved: most concepts label only 2-3 of the 66 problems, and a solved problem
    is never repeated, so the bank ran out first and every policy scored "not mastered". The gains and
    the load power were then raised until most learners under every policy (about 3 in 4) reach
    mastery within the bank, looking at that share only, not at which policy wins. --gain-success,
    --gain-failure, --load-power and --threshold change them; the ranking of the policies does depend
    on the load power (how much a problem with several new concepts slows learning).
    Extra figure: "mastered share @k": the mean share of target concepts mastered after k attempts
    (--checkpoint, default the number of eligible problems), which needs no learner to finish.

How to run (from the project folder)
    .venv/bin/python benchmarks/simulate_learners.py                 # 200 learners, modules 1-6
    .venv/bin/python benchmarks/simulate_learners.py --learners 50 --modules 3 --json

Pure code only: numpy, and torch through `embed("prob2vec", ...)` for the vectors (trained once,
before the clock of the simulation starts; its time is printed). No database or services.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from practice.algorithms.recommend import SOLVED, Attempt, Bank, Policy, recommend  # noqa: E402

FRUSTRATING = 0.2  # an attempt with a true p(solve) below this is frustrating


# ---------------------------------------------------------------------------------------------- learners


@dataclass(frozen=True)
class LearnerModel:
    init_low: float = 0.05
    init_high: float = 0.45
    speed_low: float = 0.75
    speed_high: float = 1.25
    guess: float = 0.05
    slip: float = 0.10
    gain_success: float = 1.0
    gain_failure: float = 0.5
    load_power: float = 0.5  # learning is divided by load ** load_power
    threshold: float = 0.9  # hidden mastery of a concept: skill >= threshold


@dataclass
class Learner:
    skill: np.ndarray  # (n_concepts,) hidden, in [0, 1]
    speed: float
    model: LearnerModel

    def p_solve(self, concepts: frozenset[int]) -> float:
        m = self.model
        product = float(np.prod(self.skill[list(concepts)])) if concepts else 1.0
        return m.guess + (1.0 - m.slip - m.guess) * product

    def practise(self, concepts: frozenset[int], solved: bool) -> None:
        """Learning from one attempt: never lowers a skill."""
        if not concepts:
            return
        m = self.model
        rows = np.fromiter(concepts, dtype=np.int64)
        load = max(1, int((self.skill[rows] < m.threshold).sum()))
        rate = self.speed * (m.gain_success if solved else m.gain_failure) / load**m.load_power
        self.skill[rows] += min(1.0, rate) * (1.0 - self.skill[rows])

    def mastered(self, target: np.ndarray) -> bool:
        return bool((self.skill[target] >= self.model.threshold).all())

    def mastered_share(self, target: np.ndarray) -> float:
        return float((self.skill[target] >= self.model.threshold).mean()) if target.any() else 1.0


def new_learner(n_concepts: int, model: LearnerModel, rng: np.random.Generator) -> Learner:
    skill = rng.uniform(model.init_low, model.init_high, size=n_concepts)
    return Learner(skill, float(rng.uniform(model.speed_low, model.speed_high)), model)


# ---------------------------------------------------------------------------------------------- the bank


@dataclass(frozen=True)
class SimBank:
    bank: Bank  # what the recommender reads; rows in book order (module order, then id)
    eligible: np.ndarray  # (n,) bool: the problems the learners may get
    target: np.ndarray  # (n_concepts,) bool: the concepts whose mastery counts
    module: np.ndarray | None = None  # (n,) module order per row, for reports


def _solved(attempts: Sequence[Attempt]) -> set[int]:
    latest: dict[int, float] = {}
    for a in attempts:
        if not a.skipped:
            latest[a.problem] = a.outcome
    return {p for p, y in latest.items() if y >= SOLVED}


def _open(sim: SimBank, attempts: Sequence[Attempt]) -> np.ndarray:
    """Eligible rows not yet solved, ascending (= book order)."""
    solved = _solved(attempts)
    return np.array([j for j in np.flatnonzero(sim.eligible) if j not in solved], dtype=np.int64)


# ---------------------------------------------------------------------------------------------- policies

Chooser = Callable[[SimBank, Sequence[Attempt], np.random.Generator], "int | None"]


def choose_recommend(sim: SimBank, attempts: Sequence[Attempt], rng: np.random.Generator, policy: Policy = Policy()) -> int | None:
    """Our policy. None when it has nothing to give (every eligible problem solved, or only the one just tried)."""
    rec = recommend(sim.bank, list(attempts), sim.eligible, mode="next", policy=policy)
    return None if rec is None else rec.problem


def choose_random(sim: SimBank, attempts: Sequence[Attempt], rng: np.random.Generator) -> int | None:
    rows = _open(sim, attempts)
    return None if rows.size == 0 else int(rng.choice(rows))


def choose_book(sim: SimBank, attempts: Sequence[Attempt], rng: np.random.Generator) -> int | None:
    """Book order: a failed problem once more at once, then the next unsolved one; passes wrap around."""
    rows = _open(sim, attempts)
    if rows.size == 0:
        return None
    if not attempts:
        return int(rows[0])
    last = attempts[-1]
    if last.outcome < SOLVED and (len(attempts) < 2 or attempts[-2].problem != last.problem):
        return last.problem
    later = rows[rows > last.problem]
    return int(later[0]) if later.size else int(rows[0])


POLICIES: dict[str, Chooser] = {"recommend": choose_recommend, "random": choose_random, "book": choose_book}


# ---------------------------------------------------------------------------------------------- runs


@dataclass
class LearnerRun:
    attempts_to_mastery: int | None  # None: not mastered within the cap (or out of problems)
    stopped: str  # "mastered", "cap", "out of problems"
    problems: list[int]
    outcomes: list[bool]
    p_solve: list[float]  # the true p(solve) of each attempt
    skills: list[np.ndarray] | None = None  # the hidden skills before the first and after each attempt (record=True)
    share_at_checkpoint: float | None = None  # share of target concepts mastered after `checkpoint` attempts (or at the end, if sooner)

    @property
    def attempts(self) -> int:
        return len(self.problems)


def learner_rngs(seed: int, learner: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """(start, outcomes, policy) streams: the same for a learner under every policy."""
    return tuple(np.random.default_rng([seed, learner, k]) for k in range(3))  # type: ignore[return-value]


def run_learner(
    sim: SimBank,
    choose: Chooser,
    seed: int,
    learner: int,
    model: LearnerModel = LearnerModel(),
    max_attempts: int = 400,
    record: bool = False,
    checkpoint: int | None = None,
) -> LearnerRun:
    start, outcomes_rng, policy_rng = learner_rngs(seed, learner)
    person = new_learner(len(sim.bank.concept_names), model, start)
    run = LearnerRun(None, "cap", [], [], [], [person.skill.copy()] if record else None)
    attempts: list[Attempt] = []
    while True:
        if checkpoint is not None and len(attempts) == checkpoint:
            run.share_at_checkpoint = person.mastered_share(sim.target)
        if person.mastered(sim.target):
            run.attempts_to_mastery, run.stopped = len(attempts), "mastered"
            break
        if len(attempts) >= max_attempts:
            break
        j = choose(sim, attempts, policy_rng)
        if j is None:
            run.stopped = "out of problems"
            break
        concepts = sim.bank.concepts[j]
        p = person.p_solve(concepts)
        solved = bool(outcomes_rng.random() < p)  # one draw per attempt, whatever the policy
        person.practise(concepts, solved)
        attempts.append(Attempt(int(j), 1.0 if solved else 0.0))
        run.problems.append(int(j))
        run.outcomes.append(solved)
        run.p_solve.append(p)
        if record:
            run.skills.append(person.skill.copy())  # type: ignore[union-attr]
    if checkpoint is not None and run.share_at_checkpoint is None:
        run.share_at_checkpoint = person.mastered_share(sim.target)  # the run ended first: skills stay as they are
    return run


SUMMARY_KEYS = (
    "policy", "learners", "mastered", "not_mastered", "out_of_problems", "median", "q1", "q3", "mean",
    "mean_mastered", "success_rate", "frustrating_share", "attempts", "checkpoint", "mastered_share_at_checkpoint",
)


def summarize(policy: str, runs: Sequence[LearnerRun], max_attempts: int, checkpoint: int | None = None) -> dict[str, object]:
    """The figures of one policy (keys SUMMARY_KEYS). Problems-to-mastery counts an unmastered learner as the cap."""
    to_mastery = np.array([r.attempts_to_mastery if r.attempts_to_mastery is not None else max_attempts for r in runs], dtype=np.float64)
    done = [r.attempts_to_mastery for r in runs if r.attempts_to_mastery is not None]
    total = sum(r.attempts for r in runs)
    q1, median, q3 = (float(x) for x in np.percentile(to_mastery, [25, 50, 75])) if runs else (None, None, None)
    return {
        "policy": policy,
        "learners": len(runs),
        "mastered": len(done),
        "not_mastered": len(runs) - len(done),
        "out_of_problems": sum(r.stopped == "out of problems" for r in runs),
        "median": median,
        "q1": q1,
        "q3": q3,
        "mean": float(to_mastery.mean()) if runs else None,
        "mean_mastered": float(np.mean(done)) if done else None,
        "success_rate": (sum(sum(r.outcomes) for r in runs) / total) if total else None,
        "frustrating_share": (sum(sum(p < FRUSTRATING for p in r.p_solve) for r in runs) / total) if total else None,
        "attempts": total,
        "checkpoint": checkpoint,
        "mastered_share_at_checkpoint": float(np.mean([r.share_at_checkpoint for r in runs])) if checkpoint is not None and runs else None,
    }


def simulate(
    sim: SimBank,
    learners: int,
    seed: int,
    max_attempts: int,
    model: LearnerModel = LearnerModel(),
    policies: Sequence[str] = tuple(POLICIES),
    checkpoint: int | None = None,
) -> list[dict[str, object]]:
    """One summary per policy (SUMMARY_KEYS + "seconds"), learners 0 .. learners - 1 under each."""
    out = []
    for name in policies:
        started = time.perf_counter()
        runs = [run_learner(sim, POLICIES[name], seed, i, model, max_attempts, checkpoint=checkpoint) for i in range(learners)]
        out.append({**summarize(name, runs, max_attempts, checkpoint), "seconds": round(time.perf_counter() - started, 2)})
    return out


# ---------------------------------------------------------------------------------------------- the demo course


def demo_sim_bank(modules: int, embed_seed: int = 0) -> tuple[SimBank, dict[str, object]]:
    """The demo course as the app sees it: Prob2Vec on every problem's expert labels, rows in module
    then id order, eligible = the problems of the first `modules` modules."""
    from embeddings.algorithms.methods import BankData, embed
    from problems.demo_course import bank_files, read_tsv

    order = {r["module"]: int(r["order"]) for r in read_tsv("modules.tsv")}
    home = {r["slug"]: order[r["module"]] for r in read_tsv("concepts.tsv")}
    rows = [json.loads(line) for path in bank_files() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows.sort(key=lambda r: (order[r["module"]], r["id"]))
    slugs = list(home)
    index = {s: i for i, s in enumerate(slugs)}
    for r in rows:
        for s in r.get("labels") or []:
            if s not in index:
                index[s] = len(slugs)
                slugs.append(s)
    sets = [sorted({index[s] for s in r.get("labels") or []}) for r in rows]
    started = time.perf_counter()
    emb = embed("prob2vec", BankData(sets, len(slugs)), {"seed": embed_seed})
    embed_s = time.perf_counter() - started
    vectors = emb.vectors.astype(np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    module = np.array([order[r["module"]] for r in rows])
    eligible = module <= modules
    target = np.zeros(len(slugs), dtype=bool)
    for j in np.flatnonzero(eligible):
        for c in sets[j]:
            target[c] = home.get(slugs[c], 10**6) <= modules
    bank = Bank(vectors, [frozenset(s) for s in sets], [r["id"] for r in rows], slugs)
    info = {
        "problems": len(rows), "eligible_problems": int(eligible.sum()), "modules": modules,
        "concepts_in_eligible": len({c for j in np.flatnonzero(eligible) for c in sets[j]}),
        "target_concepts": int(target.sum()), "embedding": "prob2vec", "embed_seconds": round(embed_s, 2),
    }
    return SimBank(bank, eligible, target, module), info


def _fmt(x: object, spec: str = ".0f") -> str:
    return "—" if x is None else format(x, spec)


def print_table(results: Sequence[dict[str, object]], max_attempts: int) -> None:
    k = results[0]["checkpoint"] if results else None
    at = f"@{k}" if k is not None else "@—"
    print(
        f"{'policy':<11}{'learners':>9}{'median':>8}{'IQR':>11}{'mean':>8}{'mean*':>8}{'not mastered':>14}{'(out of pr.)':>13}"
        f"{'success':>9}{'frustr.':>9}{'mastered ' + at:>14}"
    )
    for r in results:
        iqr = f"{_fmt(r['q1'])}–{_fmt(r['q3'])}"
        print(
            f"{r['policy']:<11}{r['learners']:>9}{_fmt(r['median']):>8}{iqr:>11}{_fmt(r['mean'], '.1f'):>8}{_fmt(r['mean_mastered'], '.1f'):>8}"
            f"{r['not_mastered']:>14}{r['out_of_problems']:>13}{_fmt(r['success_rate'], '.1%'):>9}{_fmt(r['frustrating_share'], '.1%'):>9}"
            f"{_fmt(r['mastered_share_at_checkpoint'], '.1%'):>14}"
        )
    print(f"median / IQR / mean: problems-to-mastery (attempts until every target concept's hidden skill >= threshold), not mastered within {max_attempts} counted as {max_attempts}")
    print("mean* = mean over mastered learners only; (out of pr.) = of the not mastered, those whose policy had no problem left")
    print(f"success = share of all attempts solved; frustr. = share of attempts with true p(solve) < {FRUSTRATING}")
    print(f"mastered {at} = mean share of target concepts mastered after {k} attempts (or when the run ended, if sooner)")


def main() -> None:
    d = LearnerModel()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-attempts", type=int, default=400)
    parser.add_argument("--modules", type=int, default=6, help="the first k modules by order are eligible (default 6, as the demo opens 1-6)")
    parser.add_argument("--threshold", type=float, default=d.threshold, help=f"hidden skill counted as mastery (default {d.threshold})")
    parser.add_argument("--gain-success", type=float, default=d.gain_success, help=f"learning rate after a success (default {d.gain_success})")
    parser.add_argument("--gain-failure", type=float, default=d.gain_failure, help=f"learning rate after a failure (default {d.gain_failure})")
    parser.add_argument("--load-power", type=float, default=d.load_power, help=f"learning divided by (unmastered concepts) ** this (default {d.load_power})")
    parser.add_argument("--checkpoint", type=int, default=None, help="attempts for the 'mastered share' figure (default: the number of eligible problems)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads for the embedding")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of the table")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    wall = time.perf_counter()
    sim, info = demo_sim_bank(args.modules)
    model = LearnerModel(threshold=args.threshold, gain_success=args.gain_success, gain_failure=args.gain_failure, load_power=args.load_power)
    checkpoint = args.checkpoint if args.checkpoint is not None else int(info["eligible_problems"])
    started = time.perf_counter()
    results = simulate(sim, args.learners, args.seed, args.max_attempts, model, checkpoint=checkpoint)
    sim_s = time.perf_counter() - started
    wall_s = time.perf_counter() - wall
    if args.json:
        settings = {
            "learners": args.learners, "seed": args.seed, "max_attempts": args.max_attempts, "modules": args.modules,
            "checkpoint": checkpoint, "model": asdict(model), "policy": asdict(Policy()),
        }
        print(json.dumps({"settings": settings, "bank": info, "policies": results, "simulation_seconds": round(sim_s, 2), "wall_seconds": round(wall_s, 2)}, indent=2))
        return
    print(
        f"demo course: {info['eligible_problems']} eligible problems of {info['problems']} (modules 1-{args.modules}), "
        f"{info['concepts_in_eligible']} concepts in them, {info['target_concepts']} target concepts; "
        f"Prob2Vec vectors in {info['embed_seconds']} s"
    )
    print(f"{args.learners} learners, seed {args.seed}, cap {args.max_attempts} attempts; learner model {asdict(model)}\n")
    print_table(results, args.max_attempts)
    per_policy = ", ".join(f"{r['policy']} {r['seconds']} s" for r in results)
    print(f"\nsimulation {sim_s:.1f} s ({per_policy}); wall time {wall_s:.1f} s")


if __name__ == "__main__":
    main()
