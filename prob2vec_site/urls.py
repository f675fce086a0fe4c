from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from concepts import api as concepts_api
from embeddings import api as embeddings_api
from practice import api as practice_api
from problems import api as problems_api
from problems import views as problems_views
from problems.login_throttle import ThrottledAdminAuthenticationForm, ThrottledObtainAuthToken, admin_login_view, login_view

admin.site.login_form = ThrottledAdminAuthenticationForm  # the admin's sign-in shares the throttle's message

urlpatterns = [
    path("", problems_views.home, name="home"),
    path("login/", login_view, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("problems/", include("problems.urls")),
    path("concepts/", include("concepts.urls")),
    path("", include("embeddings.urls")),
    path("", include("practice.urls")),
    path("api/problems/", problems_api.problem_list_api, name="api-problem-list"),
    path("api/problems/<int:pk>/", problems_api.problem_detail_api, name="api-problem-detail"),
    path("api/rules/", concepts_api.rule_list_api, name="api-rule-list"),
    path("api/rules/preview/", concepts_api.rule_preview_api, name="api-rule-preview"),
    path("api/rules/suggestions/", concepts_api.rule_suggestions_api, name="api-rule-suggestions"),
    path("api/rules/<str:slug>/", concepts_api.rule_detail_api, name="api-rule-detail"),
    path("api/rules/<str:slug>/revert/<int:number>/", concepts_api.rule_revert_api, name="api-rule-revert"),
    path("api/extraction-runs/", concepts_api.extraction_run_list_api, name="api-extraction-run-list"),
    path("api/extraction-runs/<int:pk>/", concepts_api.extraction_run_detail_api, name="api-extraction-run-detail"),
    path("api/reports/", concepts_api.report_list_api, name="api-report-list"),
    path("api/reports/<int:pk>/", concepts_api.report_detail_api, name="api-report-detail"),
    path("api/problems/<int:pk>/labels/", concepts_api.labels_api, name="api-labels"),
    path("api/problems/<int:pk>/labels/resolve/", concepts_api.labels_resolve_api, name="api-labels-resolve"),
    path("api/triplets/", embeddings_api.triplet_list_api, name="api-triplet-list"),
    path("api/triplets/next/", embeddings_api.triplet_next_api, name="api-triplet-next"),
    path("api/triplets/<int:pk>/", embeddings_api.triplet_detail_api, name="api-triplet-detail"),
    path("api/triplets/<int:pk>/votes/", embeddings_api.triplet_vote_api, name="api-triplet-vote"),
    path("api/triplets/<int:pk>/decision/", embeddings_api.triplet_decision_api, name="api-triplet-decision"),
    path("api/students/<int:student_id>/next", practice_api.student_next_api, name="api-student-next"),
    path("api/attempts", practice_api.attempt_create_api, name="api-attempts"),
    path("api/token/", ThrottledObtainAuthToken.as_view(), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("admin/login/", admin_login_view, name="admin-login"),  # the throttled form, before the admin's own
    path("admin/", admin.site.urls),
]
