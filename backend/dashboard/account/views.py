"""Account pages: log in (with failed-attempt throttling) and change one's own password."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse_lazy

from backend.dashboard.account.throttle import LoginAttempt, login_attempt, login_succeeded


class LoginView(auth_views.LoginView):
    """Django's login, refusing attempts with 429 once an address or a username failed too often."""

    attempt = LoginAttempt(0)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.attempt = login_attempt(request, request.POST.get("username", "")[:150])
        if self.attempt.retry_after:
            retry_after = self.attempt.retry_after
            response = render(request, "registration/login_blocked.html", {"minutes": -(-retry_after // 60)},
                              status=429)
            response["Retry-After"] = str(retry_after)
            return response
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        login_succeeded(self.attempt)  # a failed form keeps its counted attempt
        return super().form_valid(form)


class PasswordChangeView(auth_views.PasswordChangeView):
    """Change one's own password (the old one is asked again); the session stays logged in."""

    template_name = "registration/password_change.html"
    success_url = reverse_lazy("dashboard:home")

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        response = super().form_valid(form)
        messages.success(self.request, "Your password was changed.")
        return response
