"""Screenshots of the charts for the README: `python docs/chart_screenshots.py` writes docs/chart-*.png.

It builds the demo course in a throwaway SQLite database (load_demo, the rule extraction, two extractor
reports, a few embedding methods, a small neural experiment), serves it with `manage.py runserver` on
127.0.0.1, and photographs each chart in Debian's Chromium through Playwright. Nothing outside the temp
directory and docs/ is written. Takes a few minutes (the neural experiment trains small networks on the CPU);
SCREENSHOT_DB=/path/demo.sqlite3 keeps the database there and reuses it on the next run (retake the pictures only).
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PORT = int(os.getenv("SCREENSHOT_PORT", "8765"))
CHROMIUM = os.getenv("CHROMIUM_PATH", "/usr/bin/chromium")
METHODS = ["prob2vec", "onehot", "blend", "svd", "glove-avg", "sif"]
NEURAL_CONCEPTS = "nchoosek,conditional-probability,Bayes-formula"


def manage(env: dict[str, str], *args: str) -> None:
    print("manage.py", " ".join(args), flush=True)
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def build(env: dict[str, str]) -> None:
    manage(env, "migrate", "--noinput", "-v", "0")
    manage(env, "load_demo")
    manage(env, "extract_concepts")
    manage(env, "extractor_report")
    manage(env, "extractor_report")
    for method in METHODS:
        manage(env, "rebuild_embeddings", "--method", method)
    manage(env, "nn_extractor_experiment", "--concepts", NEURAL_CONCEPTS, "--rounds", "5", "--no-suggest")


def serve(env: dict[str, str]) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{PORT}", "--noreload"],
        cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
            conn.request("GET", "/login/")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.5)
    os.killpg(server.pid, signal.SIGTERM)
    sys.exit("runserver did not answer within 60 s")


def shoot(base: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
        page.goto(f"{base}/login/")
        page.fill("#id_username", "headta")
        page.fill("#id_password", "demo-headta")
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/problems/")

        def snap(path: str, selector: str, name: str) -> None:
            page.goto(f"{base}{path}")
            target = page.locator(selector).first
            target.scroll_into_view_if_needed()
            target.screenshot(path=str(DOCS / f"chart-{name}.png"))
            print(f"docs/chart-{name}.png  ({path} {selector})", flush=True)

        snap("/concepts/reports/", "#report-chart", "report-history")
        page.goto(f"{base}/concepts/reports/")
        report = page.locator("table.list a[href*='/concepts/reports/']").first.get_attribute("href")
        snap(report, "#report-concepts-chart", "report-concepts")
        snap("/concepts/label/agreement/", "#agreement-chart", "agreement")
        page.goto(f"{base}/concepts/neural/")
        experiment = page.locator("table.list a[href*='/concepts/neural/']").first.get_attribute("href")
        snap(experiment, "#neural-chart", "table3")
        snap("/lab/", "#accuracy-chart", "accuracy")
        snap("/lab/", "#gap-histograms", "gap-histograms")
        page.goto(f"{base}/lab/")
        run = page.locator("#lab-runs a[href*='/lab/runs/']").last.get_attribute("href")  # the oldest: prob2vec
        snap(run, "#loss-chart", "loss")
        snap("/lab/concepts/?concept=conditional-probability", "#concept-map", "continuity-map")
        browser.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(os.getenv("SCREENSHOT_DB") or f"{tmp}/demo.sqlite3")
        env = dict(
            os.environ, DATABASE_URL=f"sqlite:///{db}", DEBUG="True", CELERY_BROKER_URL="",
            DJANGO_SETTINGS_MODULE="prob2vec_site.settings", LOG_LEVEL="WARNING",
        )
        if not db.exists():
            build(env)
        server = serve(env)
        try:
            shoot(f"http://127.0.0.1:{PORT}")
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
