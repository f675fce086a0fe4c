from django.urls import path

from concepts import views

app_name = "concepts"
urlpatterns = [
    path("", views.concept_list, name="list"),
    path("rules/preview/", views.rule_preview_view, name="rule-preview"),
    path("rules/suggestions/", views.rule_suggestions_view, name="rule-suggestions"),
    path("analysis/", views.rule_analysis_view, name="rule-analysis"),
    path("extraction/", views.extraction_runs, name="extraction-runs"),
    path("extraction/<int:pk>/", views.extraction_run_detail, name="extraction-run"),
    path("reports/", views.reports, name="reports"),
    path("reports/<int:pk>/", views.report_detail, name="report"),
    path("reports/<int:pk>/<str:slug>/<str:kind>/", views.report_drilldown, name="report-drilldown"),
    path("words/", views.word_selection, name="words"),
    path("neural/", views.neural_experiments, name="neural-list"),
    path("neural/<int:pk>/", views.neural_experiment_detail, name="neural"),
    path("neural/<int:pk>/cancel/", views.neural_experiment_cancel_view, name="neural-cancel"),
    path("label/", views.label_home, name="label-home"),
    path("label/next/", views.label_next, name="label-next"),
    path("label/agreement/", views.label_agreement, name="label-agreement"),
    path("label/<int:pk>/", views.label_problem, name="label"),
    path("label/<int:pk>/held-out/", views.label_held_out, name="label-held-out"),
    path("label/hold-out/", views.label_hold_out_draw, name="label-hold-out"),
    path("<str:slug>/rule/", views.rule_edit, name="rule-edit"),
    path("<str:slug>/rule/history/", views.rule_history, name="rule-history"),
    path("<str:slug>/rule/revert/<int:number>/", views.rule_revert_view, name="rule-revert"),
]
