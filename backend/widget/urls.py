"""Widget routes, also under /api/ where Gurubase's self-hosted widget expects them."""

from django.urls import URLPattern, path

from backend.widget import gurubase, views

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
# Calls Gurubase's widget makes at {base}/<guru>/…: suggested follow-ups and votes.
_GURU_ENDPOINTS = {"follow_up/examples": ("follow-up-examples", gurubase.follow_up_examples),
                   "record_vote": ("record-vote", gurubase.record_vote)}
urlpatterns += [
    path(f"{prefix}<slug:guru>/{route}/", view, name=f"{name}{suffix}")
    for prefix, suffix in _PREFIXES
    for route, (name, view) in _GURU_ENDPOINTS.items()
]
urlpatterns.append(path("widget.js", views.script, name="script"))
