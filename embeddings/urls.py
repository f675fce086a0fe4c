from django.urls import path

from embeddings import views

app_name = "embeddings"
urlpatterns = [
    path("", views.triplet_home, name="triplet-home"),
    path("new/", views.triplet_propose, name="triplet-propose"),
    path("judge/", views.triplet_judge, name="triplet-judge"),
    path("consensus/", views.triplet_consensus, name="triplet-consensus"),
    path("<int:pk>/", views.triplet_detail, name="triplet-detail"),
    path("<int:pk>/decide/", views.triplet_decide_view, name="triplet-decide"),
]
