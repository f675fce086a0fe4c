"""The site's own 404, 403 and 500 pages: styled, in plain words, and never Django's debug pages."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client


@pytest.fixture
def production(settings: Any) -> None:
    settings.DEBUG = False


def test_an_unknown_address_or_id_gets_the_sites_404_page_without_the_url_list(production: None, client: Any, alice: Any) -> None:
    client.force_login(alice)
    for path in ("/no-such-page/", "/problems/999999/", "/concepts/reports/999999/"):
        response = client.get(path)
        assert response.status_code == 404, path
        page = response.content.decode()
        assert "There is no such page" in page and "<h1>" in page and 'class="skip-link"' in page
        assert "URLconf" not in page and "problems/&lt;int:pk&gt;" not in page and "Traceback" not in page


def test_the_404_page_is_shown_signed_out_too(production: None, client: Any, db: Any) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and "There is no such page" in response.content.decode()


def test_a_page_for_another_role_gets_the_403_page(production: None, client: Any, sam: Any) -> None:
    client.force_login(sam)
    response = client.get("/concepts/")
    assert response.status_code == 403
    assert "You may not open this page" in response.content.decode()


@pytest.mark.urls("tests.error_urls")
def test_a_crash_gets_the_500_page_without_a_traceback(production: None, alice: Any) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    response = client.get("/boom/")
    assert response.status_code == 500
    page = response.content.decode()
    assert "Something went wrong on our side" in page and "a bug" not in page and "Traceback" not in page
    assert "/static/css/site.css" in page


def test_a_form_without_a_valid_csrf_token_gets_the_sites_own_403_page(production: None, db: Any) -> None:
    # A sign-in form left open past its token (another tab signed out, cookies cleared) fails the CSRF
    # check: the site's own page in plain words, with the way back, not Django's bare "CSRF verification failed".
    client = Client(enforce_csrf_checks=True)
    response = client.post("/login/", {"username": "someone", "password": "anything"})
    assert response.status_code == 403
    page = response.content.decode()
    assert "This request was refused" in page and "reload the page" in page and 'class="skip-link"' in page
    assert "CSRF verification failed" not in page and "CSRF_FAILURE_VIEW" not in page


@pytest.mark.urls("tests.error_urls")
def test_pages_outside_base_html_name_the_sites_icon_so_no_browser_asks_for_a_missing_favicon_ico(production: None, ivan: Any) -> None:
    # A page without <link rel="icon"> makes the browser fetch /favicon.ico, which the site does not
    # serve: a 404 in the console of every admin page (where instructors give roles), of the API's
    # browsable pages and of the 500 page.
    assert Client().get("/favicon.ico").status_code == 404
    ivan.is_staff = ivan.is_superuser = True
    ivan.save()
    staff = Client()
    staff.force_login(ivan)
    pages = {
        "/admin/login/": Client().get("/admin/login/"),
        "/admin/": staff.get("/admin/"),
        "/admin/auth/user/": staff.get("/admin/auth/user/"),
        f"/admin/auth/user/{ivan.pk}/change/": staff.get(f"/admin/auth/user/{ivan.pk}/change/"),
        "/admin/auth/group/add/": staff.get("/admin/auth/group/add/"),
        "/api/problems/ (browsable)": staff.get("/api/problems/", HTTP_ACCEPT="text/html"),
        "/api/problems/0/ (browsable)": staff.get("/api/problems/0/", HTTP_ACCEPT="text/html"),
    }
    crashed = Client(raise_request_exception=False)
    crashed.force_login(ivan)
    pages["/boom/"] = crashed.get("/boom/")
    for path, response in pages.items():
        assert response.status_code in (200, 404, 500), path
        assert '<link rel="icon" href="/static/favicon.svg"' in response.content.decode(), path
