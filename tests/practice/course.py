"""A small practice course whose recommendations are known: used by the practice page, API, dashboard
and browser tests (registered as the `course` fixture in tests/conftest.py)."""

from __future__ import annotations

import io
from typing import Any

from django.core.management import call_command

from problems.models import Module

COUNTING, BINOMIAL, BAYES = ["nchoosek"], ["nchoosek", "binomial-distribution"], ["Bayes-formula", "conditional-probability"]

CONCEPT_NAMES = {"nchoosek": "Combinations", "binomial-distribution": "Binomial distribution", "Bayes-formula": "Bayes' formula"}


def make_practice_course(problem_factory: Any) -> dict[str, Any]:
    made = {
        "count1": problem_factory("Choose 2 of 5.", title="Count one", labels=COUNTING, answer="10"),
        "count2": problem_factory("Choose 3 of 6.", title="Count two", labels=COUNTING, answer="20"),
        "binom": problem_factory("Binomial: 2 heads in 4 tosses.", title="Binomial", labels=BINOMIAL, answer="6/16"),
        "bayes": problem_factory("A test is 99% accurate.", title="Bayes", labels=BAYES, module="bayes", answer=""),
        "hidden": problem_factory("Unreleased.", title="Draft", labels=COUNTING, released=False, answer="1"),
        "closed": problem_factory("Closed module.", title="Closed", labels=COUNTING, module="later", answer="1"),
    }
    from concepts.models import Concept

    for slug, name in CONCEPT_NAMES.items():  # reasons name concepts by name, never by slug
        Concept.objects.filter(slug=slug).update(name=name)
    for pid in ("counting", "bayes"):
        Module.objects.filter(name=pid).update(open_for_practice=True)
    # Triplet-free course: prob2vec on the labels makes count1 ~ count2 ~ binom, far from bayes.
    call_command("rebuild_embeddings", "--method", "prob2vec", stdout=io.StringIO())
    return made
