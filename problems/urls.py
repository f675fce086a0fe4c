from django.urls import path

from problems import views

app_name = "problems"
urlpatterns = [
    path("", views.problem_list_view, name="list"),
    path("new/", views.problem_create, name="create"),
    path("import/", views.problem_import, name="import"),
    path("export/", views.problem_export, name="export"),
    path("<int:pk>/", views.problem_detail, name="detail"),
    path("<int:pk>/edit/", views.problem_edit, name="edit"),
    path("<int:pk>/delete/", views.problem_delete_view, name="delete"),
]
