from django.contrib import admin

from concepts.models import Concept, GroundTruthLabel


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
