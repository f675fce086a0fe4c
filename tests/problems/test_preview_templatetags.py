"""Template tags the rule preview renders many times a keystroke: `{% id_url %}` (a link to one object by
id, resolved once per URL name, the same as `{% url %}`) and the kept `latex_highlight`."""

from __future__ import annotations

from typing import Any

import pytest
from django.template import Context, Template
from django.urls import NoReverseMatch, reverse, set_script_prefix


def render(source: str, **context: object) -> str:
    return Template("{% load links %}" + source).render(Context(context))


@pytest.mark.parametrize("name", ["problems:detail", "concepts:label"])
def test_it_gives_what_url_gives(name: str) -> None:
    for object_id in (1, 7, 10_000_001):
        assert render("{% id_url name pid %}", name=name, pid=object_id) == reverse(name, args=[object_id])
        assert render(f"{{% id_url '{name}' pid %}}", pid=object_id) == render(f"{{% url '{name}' pid %}}", pid=object_id)


def test_it_follows_the_script_prefix_of_a_site_served_under_a_path() -> None:
    try:
        set_script_prefix("/course/")
        assert render("{% id_url 'problems:detail' 5 %}") == "/course/problems/5/" == reverse("problems:detail", args=[5])
    finally:
        set_script_prefix("/")
    assert render("{% id_url 'problems:detail' 5 %}") == "/problems/5/"


def test_a_url_that_takes_no_id_is_a_template_error() -> None:
    with pytest.raises(NoReverseMatch):  # the name takes no argument
        render("{% id_url 'problems:list' 5 %}")
    with pytest.raises(ValueError):  # not an id
        render("{% id_url 'problems:detail' pid %}", pid="5x")


def test_the_highlight_filter_keeps_what_it_rendered_for_the_next_keystroke(monkeypatch: Any) -> None:
    """The rule preview shows mostly the same problems with the same marks keystroke after keystroke:
    the filter renders each (text, marks) once, the same as latex_highlight itself."""
    from problems import latex_html

    calls: list[str] = []
    real = latex_html.latex_highlight
    monkeypatch.setattr(latex_html, "latex_highlight", lambda text, spans: calls.append(text) or real(text, spans))
    template = Template("{% load latex %}{{ text|latex_highlight:spans }}")
    text = "Kept between keystrokes: choose $\\binom{5}{2}$ of them (test_latex_math)."
    first = template.render(Context({"text": text, "spans": [(25, 31)]}))
    assert first == real(text, [(25, 31)]) and "<mark>choose</mark>" in first
    assert template.render(Context({"text": text, "spans": [(25, 31)]})) == first
    assert len(calls) == 1
    other = template.render(Context({"text": text, "spans": [[0, 4]]}))  # lists, as a view may give them
    assert other == real(text, [(0, 4)]) and len(calls) == 2
