from django.urls import path

from embeddings import views

app_name = "embeddings"
urlpatterns = [
    path("triplets/", views.triplet_home, name="triplet-home"),
    path("triplets/new/", views.triplet_propose, name="triplet-propose"),
    path("triplets/judge/", views.triplet_judge, name="triplet-judge"),
    path("triplets/consensus/", views.triplet_consensus, name="triplet-consensus"),
    path("triplets/<int:pk>/", views.triplet_detail, name="triplet-detail"),
    path("triplets/<int:pk>/decide/", views.triplet_decide_view, name="triplet-decide"),
    path("lab/", views.lab_home, name="lab"),
    path("lab/runs/<int:pk>/", views.lab_run, name="lab-run"),
    path("lab/runs/<int:pk>/cancel/", views.lab_run_cancel, name="lab-run-cancel"),
    path("lab/runs/<int:pk>/activate/", views.lab_run_activate, name="lab-run-activate"),
    path("lab/default/", views.lab_default, name="lab-default"),
    path("lab/concepts/", views.lab_concepts, name="lab-concepts"),
    path("lab/problems/<int:pk>/similar/", views.problem_similar, name="problem-similar"),
]
