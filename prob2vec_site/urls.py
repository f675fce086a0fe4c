from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from problems import api as problems_api
from problems import views as problems_views

urlpatterns = [
    path("", problems_views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("problems/", include("problems.urls")),
    path("concepts/", include("concepts.urls")),
    path("api/problems/", problems_api.problem_list_api, name="api-problem-list"),
    path("api/problems/<int:pk>/", problems_api.problem_detail_api, name="api-problem-detail"),
    path("admin/", admin.site.urls),
]
