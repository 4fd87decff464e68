"""The tabs of a guru's dashboard pages, in display order, and the template context that draws them."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest


@dataclass(frozen=True)
class Tab:
    label: str
    url_name: str  # in the dashboard namespace; takes the guru's slug
    also_active: tuple[str, ...] = ()  # sub-pages that keep this tab highlighted


GURU_TABS = (
    Tab("Overview", "guru-edit",
        ("guru-delete", "guru-summary-budget", "guru-summary-suggest", "guru-summary-approve")),
    Tab("Sources", "sources", ("source-add", "sources-action", "sources-delete")),
    Tab("Questions", "questions", ("question-detail", "question-correct")),
    Tab("Unanswered", "unanswered"),
    Tab("Memory", "memory", ("memory-add", "memory-approve", "memory-reject", "memory-edit", "memory-delete")),
    Tab("Channels", "channels", ("apikey-create", "widget-create", "widget-edit")),
    Tab("Integrations", "integrations", ("slack-connect", "slack-oauth-start", "discord-connect")),
    Tab("Settings", "guru-settings"),
    Tab("Analytics", "analytics"),
    Tab("Evaluation", "evaluation",
        ("evaluation-set-create", "evaluation-import", "evaluation-seed", "evaluation-set", "evaluation-set-import",
         "evaluation-set-delete", "evaluation-item-add", "evaluation-item", "evaluation-item-delete",
         "evaluation-run-start", "evaluation-runs", "evaluation-run", "evaluation-threshold-apply")),
)


def dashboard_nav(request: HttpRequest) -> dict[str, object]:
    """Context processor: the guru a dashboard page is about and which tab is active."""
    guru = getattr(request, "dashboard_guru", None)
    if guru is None:
        return {}
    match = request.resolver_match
    current = match.url_name if match else ""
    active = next((t.url_name for t in GURU_TABS if current in (t.url_name, *t.also_active)), "")
    return {"dash_guru": guru, "dash_tabs": GURU_TABS, "dash_active": active}
