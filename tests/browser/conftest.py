"""Real Chromium (Debian's package) driven by Playwright against pytest-django's live server."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = os.getenv("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium chromium-driver (or set CHROMIUM_PATH)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls in fixtures are still synchronous.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def login(page: Any, live_server: Any) -> Any:
    def do(username: str, password: str = "password-123") -> None:
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)  # students land on practice, staff on the bank

    return do


@pytest.fixture
def dismissed_dialogs(page: Any) -> list[str]:
    """The types of the dialogs the page opens ("beforeunload", ...), each dismissed: leaving a page
    with unsaved changes asks first, and dismissing stays on it."""
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return dialogs


@pytest.fixture
def two_concept_families(problem_factory: Any, hana: Any) -> list[Any]:
    """Eight problems in two concept families (counting, Bayes), one accepted triplet, and the onehot
    and Prob2Vec embeddings built on them: the lab's and the charts' browser tests start here."""
    from django.core.management import call_command

    from embeddings.services import triplet_create, triplet_decide

    # In skip-gram two concepts are near when they share contexts, so each family has three concepts.
    counting = ["nchoosek", "permutations", "counting-principle"]
    bayes = ["Bayes-formula", "conditional-probability", "law-of-total-probability"]
    made = [problem_factory(f"Count {i}", module="m", labels=counting[:2] if i == 0 else counting) for i in range(4)]
    made += [problem_factory(f"Bayes {i}", module="m", labels=bayes[:2] if i == 0 else bayes) for i in range(4)]
    triplet_decide(triplet=triplet_create(anchor=made[0], positive=made[1], negative=made[4]), decision="accept", user=hana)
    call_command("rebuild_embeddings", "--method", "onehot", stdout=io.StringIO())
    call_command("rebuild_embeddings", "--method", "prob2vec", stdout=io.StringIO())
    return made
