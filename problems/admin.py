from django.contrib import admin

from problems.models import Module, Problem


@admin.register(Module)
class ModuleAdmin(admin.ModelAdmin):
    list_display = ["order", "name"]
    ordering = ["order"]
    search_fields = ["name"]


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = ["title", "collection", "source_id", "module", "released", "updated_at"]
    list_filter = ["released", "collection", "module"]
    search_fields = ["title", "source_id"]
    list_select_related = ["module"]
    raw_id_fields = ["author"]
