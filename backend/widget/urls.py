"""Widget routes, also under /api/ where Gurubase's self-hosted widget expects them."""

from django.urls import URLPattern, path

from backend.widget import views

app_name = "widget"
_ENDPOINTS = {"guru": views.guru, "binge": views.binge, "ask": views.ask, "stream": views.stream,
              "feedback": views.feedback}
# Gurubase's self-hosted embed snippets use data-baseUrl="<host>/api", so its widget calls /api/widget/….
_PREFIXES = (("", ""), ("api/", "-api"))

urlpatterns: list[URLPattern] = [
    path(f"{prefix}widget/{name}/", view, name=f"{name}{suffix}")
    for prefix, suffix in _PREFIXES
    for name, view in _ENDPOINTS.items()
]
urlpatterns.append(path("widget.js", views.script, name="script"))
