"""Root URL configuration."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from backend.core import views as core_views
from backend.dashboard.account import views as account_views
from backend.gurus.views import guru_icon

urlpatterns = [
    path("", include("backend.dashboard.urls")),
    path("healthz", core_views.healthz, name="healthz"),
    path("metrics", core_views.metrics, name="metrics"),
    path("gurus/<int:guru_id>/<str:name>", guru_icon, name="guru-icon"),
    path("", include("backend.answering.urls")),
    path("", include("backend.api.urls")),
    path("", include("backend.widget.urls")),
    path("", include("backend.channels.slack.urls")),
    path("accounts/login/", account_views.LoginView.as_view(), name="login"),
    path("accounts/password/", account_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The admin's own log-in form would bypass the failed-login throttling: it sends people to ours.
    path("admin/login/", RedirectView.as_view(pattern_name="login", query_string=True)),
    path("admin/", admin.site.urls),
]

admin.site.site_header = "OpenGuru administration"
admin.site.site_title = "OpenGuru"
handler404 = "backend.core.views.not_found"
handler400 = "backend.api.errors.bad_request"
