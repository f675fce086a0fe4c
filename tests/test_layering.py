"""Pure modules import no Django, DRF, Celery or app models, so they run and test alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE_MODULES = [
    "problems/bank_io.py",
    "problems/latex_html.py",
    "problems/demo_course/__init__.py",
    "problems/demo_course/check_bank.py",
    "concepts/learned.py",
    "concepts/extraction.py",
    "concepts/mining.py",
    "concepts/rule_analysis.py",
    "concepts/agreement.py",
    "concepts/sampling.py",
    "embeddings/algorithms/triplets.py",
    "embeddings/algorithms/cooccurrence.py",
    "embeddings/algorithms/skipgram.py",
    "embeddings/algorithms/problems.py",
    "embeddings/algorithms/similarity.py",
    "embeddings/algorithms/svd.py",
    "embeddings/algorithms/metrics.py",
    "embeddings/algorithms/text.py",
    "concepts/neural/features.py",
    "concepts/neural/network.py",
    "concepts/neural/schemes.py",
    "concepts/neural/experiment.py",
    "charts/geometry.py",
    "charts/figures.py",
    "embeddings/algorithms/projection.py",
    "practice/answers.py",
    "practice/algorithms/recommend.py",
    "practice/algorithms/progress.py",
]
FORBIDDEN = ("django", "rest_framework", "celery", "problems.models", "concepts.models", "embeddings.models", "practice.models")


def imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_module_imports_nothing_from_django(module: str) -> None:
    bad = [n for n in imported_names(ROOT / module) if n.startswith(FORBIDDEN)]
    assert bad == [], f"{module} imports {bad}"


def test_pure_modules_import_without_settings() -> None:
    names = [m.removesuffix(".py").replace("/", ".") for m in PURE_MODULES]
    code = "import sys\n" + "".join(f"import {n}\n" for n in names) + "assert 'django.conf' not in sys.modules\n"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)


# Apps depend one way: problems <- concepts <- embeddings <- practice. An app never imports one above it
# (a page of a lower app reaches a higher one by URL name only, as the problem page pulls "similar problems").
ABOVE = {"problems": ("practice",), "concepts": ("practice",), "embeddings": ("practice",)}


@pytest.mark.parametrize("app", sorted(ABOVE))
def test_an_app_never_imports_one_above_it(app: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / app).rglob("*.py"))
        for name in sorted(imported_names(path))
        if name.split(".")[0] in ABOVE[app]
    ]
    assert bad == []
