"""Take the README's screenshots of the navigation and of pages at phone width (Playwright, Chromium).

Against a running site with the demo course (`make run`, or any URL):

    .venv/bin/python docs/screenshots.py [--url http://127.0.0.1:8000] [--chromium /usr/bin/chromium]

It signs in as the demo TA (demo logins exist while DEBUG is on) and writes PNGs into docs/.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

DOCS = Path(__file__).resolve().parent


def sign_in(page: Page, url: str, username: str, password: str) -> None:
    page.goto(f"{url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/problems/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    url = args.url.rstrip("/")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])

        # The navigation at 1,366 px: grouped by role, one line, the current page marked, a group open.
        desktop = browser.new_context(viewport={"width": 1366, "height": 420}, device_scale_factor=1)
        page = desktop.new_page()
        sign_in(page, url, "headta", "demo-headta")
        page.goto(f"{url}/concepts/reports/")
        page.wait_for_load_state("networkidle")
        page.click(".navgroup.current > summary")
        page.screenshot(path=str(DOCS / "screenshot-navigation.png"))
        desktop.close()

        # Phone width (390 px): the problem bank with its filters folded, then the menu open.
        phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True, has_touch=True)
        page = phone.new_page()
        sign_in(page, url, "ta", "demo-ta")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(DOCS / "screenshot-phone-problem-bank.png"))
        page.click(".nav-toggle")
        page.click("#site-nav summary:text-is('Concepts')")
        page.screenshot(path=str(DOCS / "screenshot-phone-menu.png"))
        page.goto(f"{url}/practice/class/")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(DOCS / "screenshot-phone-class-progress.png"))
        phone.close()
        browser.close()
    for name in ("navigation", "phone-problem-bank", "phone-menu", "phone-class-progress"):
        print(DOCS / f"screenshot-{name}.png")


if __name__ == "__main__":
    main()
