from django.contrib import admin

from concepts.models import Concept, GroundTruthLabel, HeldOutProblem


@admin.register(Concept)
class ConceptAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "module"]
    list_filter = ["module"]
    search_fields = ["slug", "name", "description"]


@admin.register(GroundTruthLabel)
class GroundTruthLabelAdmin(admin.ModelAdmin):
    list_display = ["problem", "concept", "created_by", "created_at"]
    list_select_related = ["problem", "concept", "created_by"]
    raw_id_fields = ["problem"]
    list_filter = ["concept__module"]


@admin.register(HeldOutProblem)
class HeldOutProblemAdmin(admin.ModelAdmin):
    list_display = ["problem", "marked_by", "marked_at"]
    list_select_related = ["problem", "marked_by"]
    raw_id_fields = ["problem"]
    list_filter = ["problem__collection"]
