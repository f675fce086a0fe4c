from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings

from concepts.models import Concept
from problems.models import Module, Problem
from problems.selectors import SORTS

MATCH_CHOICES = [("all", "all of"), ("any", "any of")]
SORT_CHOICES = [("module", "Module"), ("title", "Title"), ("updated", "Recently updated"), ("collection", "Collection")]


class ProblemFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search")
    module = forms.ModelMultipleChoiceField(queryset=Module.objects.all(), required=False)
    concepts = forms.ModelMultipleChoiceField(
        queryset=Concept.objects.select_related("module"), required=False, to_field_name="slug"
    )
    match = forms.ChoiceField(choices=MATCH_CHOICES, required=False, initial="all")
    collection = forms.CharField(required=False, max_length=100)
    released = forms.ChoiceField(choices=[("", "any"), ("yes", "released"), ("no", "unreleased")], required=False)
    sort = forms.ChoiceField(choices=SORT_CHOICES, required=False)

    def filters(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "q": data.get("q") or "",
            "modules": list(data.get("module") or []),
            "concepts": list(data.get("concepts") or []),
            "match": data.get("match") or "all",
            "collection": data.get("collection") or "",
            "released": data.get("released") or "",
            "sort": data.get("sort") if data.get("sort") in SORTS else "module",
        }


class ProblemForm(forms.ModelForm):
    labels = forms.ModelMultipleChoiceField(
        queryset=Concept.objects.select_related("module"),
        required=False,
        to_field_name="slug",
        help_text="Ground-truth concepts a solver has to use.",
        widget=forms.SelectMultiple(attrs={"size": 10}),
    )

    class Meta:
        model = Problem
        fields = ["title", "text", "module", "level", "answer", "solution", "released", "collection", "source_id"]
        widgets = {"text": forms.Textarea(attrs={"rows": 10}), "solution": forms.Textarea(attrs={"rows": 4})}
        help_texts = {"source_id": "Leave empty for a new problem to get a generated id."}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A new problem gets the default collection and a generated id; an existing one keeps the
        # (collection, id) that import and export find it by, so neither may be blanked on edit.
        self.fields["collection"].required = bool(self.instance.pk)
        self.fields["source_id"].required = bool(self.instance.pk)
        self.fields["title"].required = False
        if self.instance.pk:
            # Kept in the browser until saved (static/js/site.js), e.g. across an expired session.
            for name in ("text", "solution"):
                self.fields[name].widget.attrs["data-draft"] = ""
            self.fields["labels"].initial = [
                lab.concept.slug for lab in self.instance.ground_truth_labels.select_related("concept")
            ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("collection") and not self.instance.pk:
            # The default collection, set now so that the (collection, id) uniqueness check sees it:
            # a taken id is then a form error, not an IntegrityError when saving.
            data["collection"] = self.instance.collection = "course"
        if not data.get("title") and data.get("text"):
            from problems.bank_io import derive_title

            data["title"] = derive_title(data["text"])
            self.instance.title = data["title"]
        return data


class ProblemImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL (one problem per line) or CSV with a header row.")
    collection = forms.CharField(
        required=False, max_length=100, help_text="Defaults to each record's 'collection', else the file name."
    )
    release = forms.BooleanField(required=False, label="Release imported problems to students")

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > settings.PROBLEM_IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size} bytes; the limit is {settings.PROBLEM_IMPORT_MAX_BYTES} bytes."
            )
        if Path(upload.name).suffix.lower() not in {".jsonl", ".json", ".ndjson", ".csv"}:
            raise forms.ValidationError("Upload a .jsonl or .csv file.")
        return upload
