"""Who is asking through a widget: the widget id, its origin binding and its rate limits."""

from __future__ import annotations

from django.core.exceptions import DisallowedHost
from django.db import transaction
from django.http import HttpRequest

from backend.answering.access import Asker, guru_check
from backend.answering.citations import citations_record
from backend.answering.feedback import Vote, vote_record
from backend.answering.models import AnswerState, Binge, Channel, Question
from backend.core.errors import RequestError
from backend.core.ratelimit import client_ip, hit
from backend.gurus.models import Guru
from backend.widget.models import KEY_MAX_LENGTH, WidgetId
from backend.widget.origins import canonical_patterns, origin_allowed, parse_origin

_SCHEMES = ("widget ", "bearer ")
_COPIED_FIELDS = ("user_question", "question", "slug", "intent", "answer_length", "content", "references",
                  "trust_score", "out_of_context", "sources_version")


class WidgetError(RequestError):
    """A refusal shown to the widget in the one error shape (plus Gurubase's `error`) with this status."""

    def __init__(self, status: int, code: str, msg: str, headers: dict[str, str] | None = None, *,
                 cors: bool = True, error_id: str = "") -> None:
        super().__init__(status, code, msg, headers, error_id=error_id)
        # False when the Origin itself is refused: the browser must not let the page read the answer.
        self.cors = cors


def widget_key(request: HttpRequest) -> str:
    """The widget id from `Authorization` (raw, `Widget <key>` or `Bearer <key>`), or ""."""
    raw = request.headers.get("Authorization", "").strip()
    for scheme in _SCHEMES:
        if raw.lower().startswith(scheme):
            return raw[len(scheme):].strip()
    return raw


def request_origin(request: HttpRequest) -> str:
    return request.headers.get("Origin", "").strip()


def same_origin(request: HttpRequest) -> bool:
    """Whether a browser sent this request from a page of this OpenGuru instance itself.

    Allowed origins protect a widget id from third-party pages; the instance trusts its own pages (the
    dashboard's live preview), so they need not be listed. Browsers set Host and Sec-Fetch-Site and no page
    script can change them, and they omit Origin on same-origin GETs, hence the Sec-Fetch-Site fallback.
    A non-browser client could forge both headers, but it could forge an allowed Origin just as well.
    """
    try:
        own = f"{request.scheme}://{request.get_host()}"
    except DisallowedHost:
        return False
    origin = request_origin(request)
    if origin:
        parsed, mine = parse_origin(origin), parse_origin(own)
        return parsed is not None and parsed == mine
    return request.headers.get("Sec-Fetch-Site", "").strip().lower() == "same-origin"


def widget_for_request(request: HttpRequest) -> WidgetId:
    """The active widget named by the request, if the request comes from one of its allowed origins."""
    key = widget_key(request)
    widget = None
    if key and len(key) <= KEY_MAX_LENGTH:
        widget = WidgetId.objects.select_related("guru").filter(key=key, active=True, guru__active=True).first()
    if widget is None:
        raise WidgetError(401, "invalid_widget_id", "Unknown or inactive widget id: check data-widget-id in the "
                                                    "embed snippet.")
    origin = request_origin(request)
    patterns = widget.allowed_origins if isinstance(widget.allowed_origins, list) else []
    if not (origin_allowed(origin, patterns) or same_origin(request)):
        shown = origin[:200] if origin and origin != "null" else "a page without an origin"
        raise WidgetError(403, "origin_not_allowed", f"This widget is not allowed on {shown}; add the origin to "
                                                     "the widget's allowed origins.", cors=False)
    # The id and its origin make a grant for the widget's guru: what it opens is the rule every channel shares.
    guru_check(widget.guru, Asker(grant_guru_id=widget.guru_id))
    return widget


def any_widget_allows(origin: str) -> bool:
    """Whether some active widget accepts this origin (preflights carry no widget id to narrow it down)."""
    if not origin:
        return False
    # Uncached on purpose: browsers cache preflights (Access-Control-Max-Age) and the rows are few.
    lists = WidgetId.objects.filter(active=True, guru__active=True).values_list("allowed_origins", flat=True)
    return any(isinstance(patterns, list) and origin_allowed(origin, patterns) for patterns in lists)


def check_rate(widget: WidgetId, request: HttpRequest) -> None:
    """Count one request per client IP and per widget; 429 with Retry-After when either is spent."""
    per_ip = hit(f"widget:{widget.pk}:ip:{client_ip(request)}", limit=widget.per_ip_rate_limit_per_minute)
    if not per_ip.allowed:
        raise WidgetError(429, "rate_limited", "Too many questions from your network; please wait a moment.",
                          {"Retry-After": str(per_ip.retry_after)})
    # Checked second so one busy visitor does not also spend the whole widget's budget.
    overall = hit(f"widget:{widget.pk}", limit=widget.rate_limit_per_minute)
    if not overall.allowed:
        raise WidgetError(429, "rate_limited", "This widget is answering too many questions; please wait a moment.",
                          {"Retry-After": str(overall.retry_after)})


@transaction.atomic
def widget_binge_create(widget: WidgetId, root_slug: str) -> Binge:
    """A new widget conversation; the answered question `root_slug` is copied in so follow-ups see it."""
    guru = widget.guru
    binge = Binge.objects.create(guru=guru, channel=Channel.WIDGET)
    # Only widget questions: a guessed slug must not pull an API or bot answer into a widget conversation.
    root = (Question.objects.filter(guru=guru, slug=root_slug, channel=Channel.WIDGET, state=AnswerState.COMPLETE)
            .exclude(content="")
            .order_by("-created_at").first() if root_slug else None)
    if root is not None:
        # A copy, not a link: conversation history is read from the binge's own questions.
        copy = Question.objects.create(guru=guru, binge=binge, channel=Channel.WIDGET, timings={}, usage={},
                                       **{name: getattr(root, name) for name in _COPIED_FIELDS})
        citations_record(copy, copy.references)
        binge.root_question = copy
        binge.save(update_fields=["root_question"])
    return binge


def widget_vote(widget: WidgetId, request: HttpRequest, vote: Vote) -> Question:
    """Record, change or clear a vote on an answer of this widget's guru, asked in the visitor's conversation."""
    return vote_record(guru=widget.guru, vote=vote, client=client_ip(request))


# ---- widget ids, as the dashboard manages them ------------------------------------------------------------------

SNIPPET = '<script async src="{script_url}" id="guru-widget-id" data-widget-id="{key}"></script>'
MAX_ALLOWED_ORIGINS = 50


def embed_snippet(*, script_url: str, key: str) -> str:
    """The tag a site pastes before </body> (frontend/widget/README.md); `script_url` is absolute."""
    return SNIPPET.format(script_url=script_url, key=key)


def _canonical_origins(values: list[str]) -> list[str]:
    """Canonical, de-duplicated patterns; ValueError for a bad one or too many."""
    cleaned, problems = canonical_patterns(values)
    if problems:
        raise ValueError(problems[0][1])
    if len(cleaned) > MAX_ALLOWED_ORIGINS:
        raise ValueError(f"At most {MAX_ALLOWED_ORIGINS} allowed origins per widget id.")
    return cleaned


def widget_id_create(*, guru: Guru, name: str, allowed_origins: list[str], rate_limit_per_minute: int = 120,
                     per_ip_rate_limit_per_minute: int = 20, active: bool = True) -> WidgetId:
    """A new widget id with a fresh random key; origins are stored in canonical form."""
    return WidgetId.objects.create(guru=guru, name=name, allowed_origins=_canonical_origins(allowed_origins),
                                   rate_limit_per_minute=rate_limit_per_minute,
                                   per_ip_rate_limit_per_minute=per_ip_rate_limit_per_minute, active=active)


_EDITABLE = frozenset({"name", "allowed_origins", "rate_limit_per_minute", "per_ip_rate_limit_per_minute", "active"})


def widget_id_update(*, widget: WidgetId, **changes: object) -> WidgetId:
    """Change the editable fields given; the key and the guru never change."""
    unknown = set(changes) - _EDITABLE
    if unknown:
        raise TypeError(f"Not editable: {', '.join(sorted(unknown))}")
    if "allowed_origins" in changes:
        changes["allowed_origins"] = _canonical_origins(list(changes["allowed_origins"]))  # type: ignore[call-overload]
    for name, value in changes.items():
        setattr(widget, name, value)
    if changes:
        widget.save(update_fields=list(changes))
    return widget


def widget_id_delete(*, widget: WidgetId) -> None:
    """Delete a widget id: sites embedding it stop working at once (their calls get 401)."""
    widget.delete()
