from __future__ import annotations

from typing import Any

from django import forms

from concepts import extraction
from problems.models import Module


class PatternField(forms.CharField):
    """A rule pattern, compiled on validation so errors show the engine's message and position."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", extraction.MAX_PATTERN_LENGTH)
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)


class RuleForm(forms.Form):
    pattern = PatternField(
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "mono", "autocomplete": "off"})
    )
    ignore_case = forms.BooleanField(required=False, initial=True)
    enabled = forms.BooleanField(required=False, initial=True)
    message = forms.CharField(required=False, max_length=300, label="Change note")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if "pattern" in data:
            try:
                extraction.check_pattern(data["pattern"], data.get("ignore_case", False))
            except extraction.RuleError as exc:
                where = f" (at position {exc.position})" if exc.position is not None else ""
                self.add_error("pattern", f"Invalid pattern: {exc.message}{where}")
        return data


class RulePreviewForm(forms.Form):
    concept = forms.CharField(max_length=100)
    pattern = PatternField(required=False)
    ignore_case = forms.BooleanField(required=False)
    modules = forms.ModelMultipleChoiceField(queryset=Module.objects.all(), required=False)


class ReportForm(forms.Form):
    collection = forms.CharField(required=False, max_length=100)
