from __future__ import annotations

from typing import Any

from django import forms

from concepts import extraction
from problems.models import Module


class PatternField(forms.CharField):
    """A rule pattern as the editor shows it, one branch per line (`extraction.pattern_lines`):
    cleaned into the one-line pattern that is stored (the lines joined with `|`), each line checked
    on its own first so that an error names the line. The length limit is the stored pattern's."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", extraction.MAX_PATTERN_LENGTH)
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)
        # The box takes as many characters as the stored pattern may hold: a line break stands for a `|`.
        self.widget.attrs.setdefault("maxlength", str(extraction.MAX_PATTERN_LENGTH))

    def to_python(self, value: Any) -> str:
        typed = super().to_python(value)
        try:
            extraction.check_lines(typed)
        except extraction.RuleError as exc:
            raise forms.ValidationError(f"Invalid pattern: {exc.message}", code="invalid_line") from None
        return extraction.join_lines(typed)


def _pattern_box(rows: int) -> forms.Textarea:
    # Grows with the pattern (CSS field-sizing, and static/js/rule_editor.js where that is missing).
    # data-draft: what is typed is kept in the browser until saved (static/js/site.js), e.g. across
    # an expired session.
    return forms.Textarea(attrs={"rows": rows, "spellcheck": "false", "class": "mono pattern-box", "autocomplete": "off", "data-draft": ""})


class RuleForm(forms.Form):
    # Either box may be empty, not both (clean).
    pattern = PatternField(required=False, widget=_pattern_box(4), label="Pattern (matched in the statement and the solution)")
    statement_pattern = PatternField(required=False, widget=_pattern_box(2), label="Matched in the statement only")
    ignore_case = forms.BooleanField(required=False, initial=True)
    enabled = forms.BooleanField(required=False, initial=True)
    message = forms.CharField(required=False, max_length=300, label="Change note")
    # The version the page was loaded from; the save is refused if the rule has moved on since.
    base_version = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        boxes = [name for name in ("pattern", "statement_pattern") if name in data]
        if len(boxes) == 2 and not data["pattern"] and not data["statement_pattern"]:
            self.add_error("pattern", "Write a pattern, in either box.")
            return data
        for name in boxes:
            if data[name]:
                try:
                    extraction.check_pattern(data[name], data.get("ignore_case", False))
                except extraction.RuleError as exc:
                    self.add_error(name, f"Invalid pattern: {exc.message}{self._where(exc.position, name)}")
        return data

    def _where(self, position: int | None, box: str = "pattern") -> str:
        """Where in the box an error of the joined pattern is: its line and column when there are lines."""
        if position is None:
            return ""
        at = extraction.where_in_lines(self.data.get(box, "") or "", position)
        return f" (at position {position})" if at is None else f" (line {at[0]}, column {at[1] + 1})"


class RulePreviewForm(forms.Form):
    concept = forms.CharField(max_length=100)
    pattern = PatternField(required=False)
    statement_pattern = PatternField(required=False)
    ignore_case = forms.BooleanField(required=False)
    modules = forms.ModelMultipleChoiceField(queryset=Module.objects.all(), required=False)


class ReportForm(forms.Form):
    collection = forms.CharField(required=False, max_length=100)
    source = forms.ChoiceField(
        choices=[("rules", "the rules"), ("hybrid", "hybrid: rules + the extractor learned from labels (cross-validated)")],
        initial="rules",
        required=False,
    )
    held_out = forms.BooleanField(required=False, label="Only the problems held out from rule writing")

    def clean_collection(self) -> str:
        from problems.selectors import unknown_collection

        name = self.cleaned_data["collection"]
        message = unknown_collection(name) if name else ""
        if message:
            raise forms.ValidationError(message)
        return name


class HoldOutForm(forms.Form):
    """Hold out a random draw of a collection's unlabelled problems (services.held_out_draw)."""

    collection = forms.CharField(max_length=100)
    count = forms.IntegerField(min_value=1, max_value=1000, initial=60)


class NeuralExperimentForm(forms.Form):
    """Start an experiment; concept choices are the concepts that have expert labels (with their counts)."""

    concepts = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="Concepts to study (labelled positives in brackets).")
    schemes = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    rounds = forms.IntegerField(min_value=1, max_value=1000, initial=100, help_text="Random train/test splits per concept and scheme.")
    seed = forms.IntegerField(initial=0)
    suggest = forms.BooleanField(required=False, initial=True, label="Suggest labels with each concept's best extractor")

    def __init__(self, *args: Any, positive_counts: list[tuple[str, int]], **kwargs: Any) -> None:
        from concepts.neural.schemes import SCHEMES

        super().__init__(*args, **kwargs)
        self.fields["concepts"].choices = [(slug, f"{slug} ({n})") for slug, n in positive_counts if n >= 2]
        self.fields["concepts"].initial = [slug for slug, n in positive_counts[:5] if n >= 2]
        self.fields["schemes"].choices = [(key, s.label) for key, s in SCHEMES.items()]
        self.fields["schemes"].initial = list(SCHEMES)
