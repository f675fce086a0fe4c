from django.urls import path

from practice import views

app_name = "practice"
urlpatterns = [
    path("practice/", views.practice, name="practice"),
    path("practice/progress/", views.my_progress, name="my-progress"),
    path("practice/class/", views.practice_class, name="practice-class"),
    path("practice/class/students/<int:student_id>/", views.practice_student, name="practice-student"),
]
