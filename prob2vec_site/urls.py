from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from concepts import api as concepts_api
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
    path("api/rules/", concepts_api.rule_list_api, name="api-rule-list"),
    path("api/rules/preview/", concepts_api.rule_preview_api, name="api-rule-preview"),
    path("api/rules/<str:slug>/", concepts_api.rule_detail_api, name="api-rule-detail"),
    path("api/rules/<str:slug>/revert/<int:number>/", concepts_api.rule_revert_api, name="api-rule-revert"),
    path("api/extraction-runs/", concepts_api.extraction_run_list_api, name="api-extraction-run-list"),
    path("api/extraction-runs/<int:pk>/", concepts_api.extraction_run_detail_api, name="api-extraction-run-detail"),
    path("api/reports/", concepts_api.report_list_api, name="api-report-list"),
    path("api/reports/<int:pk>/", concepts_api.report_detail_api, name="api-report-detail"),
    path("admin/", admin.site.urls),
]
