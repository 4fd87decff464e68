"""Summaries in the dashboard: the Sources table's state and preview, the source page, the Overview card (spend,
budget, Suggest → Approve) and the instance default budget. Trees are made as Summarization rows directly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ScriptedReply
from backend.core.selectors import settings_get
from backend.gurus.examples import guru_example_texts
from backend.gurus.models import MAX_EXAMPLES, ExampleQuestion, Guru
from backend.sources.models import DataSource, SourceStatus, Summarization, SummaryState
from backend.sources.summary_selectors import EXTRACT_LABEL
from backend.widget.models import WidgetId
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.fakes.openai_server import FAKE_CHAT_MODEL, OpenAIFakeServer

pytestmark = pytest.mark.django_db

MODEL = "test-model"
HOSTILE = "<script>alert(1)</script><b>bold</b>"
SUMMARY = ("Celery is a distributed task queue for Python. Workers execute tasks sent through a broker such as "
           "RabbitMQ or Redis. Tasks can be retried, scheduled with beat, and chained into workflows. Results are "
           "stored in a result backend.")
INSTANCE = {"rerank_threshold": "0.1", "trust_score_threshold": "0.5", "chunk_size": "", "chunk_overlap": "",
            "chunk_min_length": "50", "history_turns": "4"}


def _source(guru: Guru, title: str, **fields: Any) -> DataSource:
    values: dict[str, Any] = {"status": SourceStatus.INDEXED, "chunk_count": 3, "summary_state": SummaryState.DONE,
                              **fields}
    source: DataSource = DataSourceFactory(guru=guru, title=title, **values)
    return source


def _tree(source: DataSource, text: str, *, extractive: bool = False, is_root: bool = False) -> Summarization:
    """A source's summary above two level-0 pieces."""
    model = "" if extractive else MODEL
    root = Summarization.objects.create(guru=source.guru, source=source, level=1, position=0, text=text, model=model,
                                        extractive=extractive, is_source_root=True, is_root=is_root)
    for position in range(2):
        Summarization.objects.create(guru=source.guru, source=source, level=0, position=position, parent=root,
                                     text=f"Piece {position} of {source.title}.", model=model, extractive=extractive)
    return root


def _partial_tree(source: DataSource) -> None:
    """A tree stopped at the budget: two level-1 nodes and no source root."""
    for position in range(2):
        Summarization.objects.create(guru=source.guru, source=source, level=1, position=position, model=MODEL,
                                     text=f"Upper half {position} of {source.title}.")
    Summarization.objects.create(guru=source.guru, source=source, level=0, position=0, model=MODEL, text="Low piece.")


def _guru_root(guru: Guru, text: str, children: list[Summarization]) -> Summarization:
    root = Summarization.objects.create(guru=guru, source=None, level=2, position=0, text=text, model=MODEL,
                                        is_root=True)
    Summarization.objects.filter(pk__in=[c.pk for c in children]).update(parent=root)
    return root


def _flashes(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def _dash(guru: Guru, tail: str = "") -> str:
    return f"/dashboard/g/{guru.slug}/{tail}"


# --- the Sources table ---------------------------------------------------------------------------------------


def test_the_sources_table_shows_each_summary_state_and_a_preview(client: Client, guru: Guru) -> None:
    running = _source(guru, "Running", summary_state=SummaryState.RUNNING, summary_done=12, summary_total=40)
    queued = _source(guru, "Queued", summary_state=SummaryState.QUEUED)
    stopped = _source(guru, "Stopped", summary_state=SummaryState.OVER_BUDGET,
                      summary_note="The guru's 1,000 tokens are spent.")
    failed = _source(guru, "Failed", summary_state=SummaryState.FAILED, summary_note="The model timed out 3 times.")
    done = _source(guru, "Done", summary_state=SummaryState.DONE)
    _tree(done, f"{HOSTILE} {SUMMARY} " * 3)
    _partial_tree(stopped)

    page = client.get(_dash(guru, "sources/")).content.decode()
    row = {s.pk: page.split(f'data-source-id="{s.pk}"', 1)[1].split("</tr>", 1)[0]
           for s in (running, queued, stopped, failed, done)}
    assert 'data-summary-active="1"' in row[running.pk] and "summarising 12/40" in row[running.pk]
    assert 'data-summary-active="1"' in row[queued.pk] and "summary queued" in row[queued.pk]
    assert "summary stopped at the token budget" in row[stopped.pk]
    assert 'title="The guru&#x27;s 1,000 tokens are spent."' in row[stopped.pk]
    assert "summary failed" in row[failed.pk] and 'title="The model timed out 3 times."' in row[failed.pk]
    assert 'data-summary-active="0"' in row[done.pk]

    # The preview: one line, escaped, cut short, linking to the source's page; a partial tree says so.
    preview = row[done.pk].split('data-field="summary_preview"', 1)[1].split("</a>", 1)[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt; Celery is" in preview
    assert "<script>" not in page and preview.endswith("…") and len(preview) < 400
    assert f'href="/dashboard/g/celery/sources/{done.pk}/#summary"' in row[done.pk]
    assert "Summary by test-model" in row[done.pk]
    assert "Summary (partial):" in row[stopped.pk] and "Upper half 0 of Stopped." in row[stopped.pk]
    assert 'data-field="summary_line" hidden' in row[running.pk]


def test_the_table_reads_the_previews_in_one_query_for_any_number_of_sources(client: Client, guru: Guru) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(_dash(guru, "sources/")).status_code == 200
        return len(captured)

    for number in range(3):
        _tree(_source(guru, f"Source {number}"), f"Summary {number}.")
    few = queries()
    for number in range(3, 9):
        _tree(_source(guru, f"Source {number}"), f"Summary {number}.")
    assert queries() == few


def test_the_progress_poller_gets_the_summary_fields(client: Client, guru: Guru) -> None:
    summarising = _source(guru, "Summarising", summary_state=SummaryState.RUNNING, summary_done=3, summary_total=8)
    done = _source(guru, "Done", summary_state=SummaryState.DONE)
    _source(guru, "Idle", summary_state="")
    _tree(done, SUMMARY, extractive=True)

    # Without ids: every source indexing or summarising (an indexed source still summarising is followed).
    body = json.loads(client.get(_dash(guru, "sources/progress.json")).content)
    assert [entry["id"] for entry in body["sources"]] == [summarising.pk]
    (entry,) = body["sources"]
    assert (entry["summary_text"], entry["summary_active"], entry["active"]) == ("summarising 3/8", True, False)

    body = json.loads(client.get(_dash(guru, f"sources/progress.json?ids={done.pk}")).content)
    (entry,) = body["sources"]
    assert entry["summary_text"] == "" and entry["summary_active"] is False
    assert entry["summary_preview"].startswith("Celery is a distributed task queue")
    assert (entry["summary_lead"], entry["summary_label"]) == ("Extract", EXTRACT_LABEL)


# --- the source's page -----------------------------------------------------------------------------------------


def test_the_source_page_shows_the_whole_summary_and_who_wrote_it(client: Client, guru: Guru) -> None:
    written = _source(guru, "Written", summary_state=SummaryState.DONE)
    _tree(written, f"{HOSTILE}\n{SUMMARY}")
    page = client.get(_dash(guru, f"sources/{written.pk}/")).content.decode()
    section = page.split('id="summary"', 1)[1].split("</section>", 1)[0]
    assert "Summary by test-model" in section and SUMMARY in section and "partial" not in section
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section and "<script>" not in page

    extract = _source(guru, "Extract", summary_state=SummaryState.DONE)
    _tree(extract, SUMMARY, extractive=True)
    section = client.get(_dash(guru, f"sources/{extract.pk}/")).content.decode().split('id="summary"', 1)[1]
    assert EXTRACT_LABEL in section.split("</section>", 1)[0]

    stopped = _source(guru, "Stopped", summary_state=SummaryState.OVER_BUDGET, summary_note="Budget spent at 2 of 5.")
    _partial_tree(stopped)
    section = client.get(_dash(guru, f"sources/{stopped.pk}/")).content.decode().split('id="summary"', 1)[1]
    section = section.split("</section>", 1)[0]
    assert "partial" in section and "Upper half 0 of Stopped." in section
    assert "Summary stopped at the token budget." in section and "Budget spent at 2 of 5." in section

    none = _source(guru, "None yet", summary_state=SummaryState.QUEUED)
    section = client.get(_dash(guru, f"sources/{none.pk}/")).content.decode().split('id="summary"', 1)[1]
    assert "Summary queued." in section.split("</section>", 1)[0]


# --- the Overview card -----------------------------------------------------------------------------------------


def _card(client: Client, guru: Guru) -> str:
    page = client.get(_dash(guru)).content.decode()
    return page.split('id="summary"', 1)[1].split("</section>", 1)[0]


def test_the_overview_shows_the_guru_summary_what_it_covers_and_the_spend(client: Client, guru: Guru) -> None:
    card = _card(client, guru)
    assert "No summary yet" in card and "0 of 1,000,000 tokens" in card and "over budget" not in card

    first, second = _source(guru, "Intro"), _source(guru, "Guide")
    _source(guru, "Not summarised yet")
    _guru_root(guru, f"{HOSTILE} {SUMMARY}", [_tree(first, "Intro summary."), _tree(second, "Guide summary.")])
    Guru.objects.filter(pk=guru.pk).update(summary_tokens_used=12_400)
    card = _card(client, guru)
    assert SUMMARY in card and "&lt;script&gt;" in card and "<script>" not in card
    assert "Summary by test-model" in card and "2 of 3 sources" in card
    assert "12,400 of 1,000,000 tokens" in card and "(the instance default)" in card

    Guru.objects.filter(pk=guru.pk).update(summary_tokens_used=5_200, summary_token_budget=5_000,
                                           summary_note="Over budget: the guru summary stopped growing.")
    card = _card(client, guru)
    assert "5,200 of 5,000 tokens" in card and "over budget" in card and "(this guru's budget)" in card
    assert "Over budget: the guru summary stopped growing." in card


def test_the_budget_override_saves_validates_and_clears(client: Client, guru: Guru) -> None:
    response = client.post(_dash(guru, "summary/budget/"), {"summary_token_budget": "250000"})
    assert response.status_code == 302 and response["Location"] == "/dashboard/g/celery/#summary"
    assert "may spend 250,000 tokens" in " ".join(_flashes(response))
    guru.refresh_from_db()
    assert guru.summary_token_budget == 250_000
    assert "0 of 250,000 tokens" in _card(client, guru)

    for bad, message in [("-5", "greater than or equal to 0"), ("1.5", "whole number"), ("lots", "whole number"),
                         ("9999999999", "less than or equal to")]:
        refused = client.post(_dash(guru, "summary/budget/"), {"summary_token_budget": bad})
        assert refused.status_code == 400 and message in refused.content.decode()
        assert Guru.objects.get(pk=guru.pk).summary_token_budget == 250_000

    cleared = client.post(_dash(guru, "summary/budget/"), {"summary_token_budget": ""})
    assert cleared.status_code == 302 and "instance default" in " ".join(_flashes(cleared))
    assert Guru.objects.get(pk=guru.pk).summary_token_budget is None
    assert "of 1,000,000 tokens" in _card(client, guru)


def test_suggest_without_a_summary_says_there_is_nothing_to_draft_from(client: Client, guru: Guru) -> None:
    response = client.post(_dash(guru, "summary/suggest/"), follow=True)
    assert response.status_code == 200
    assert "Celery Guru has no summary yet, so there is nothing to draft from." in response.content.decode()
    assert not ExampleQuestion.objects.exists()


def _draft(client: Client, guru: Guru) -> tuple[str, list[str]]:
    """Suggest, and the drafted domain knowledge and questions the page offers."""
    response = client.post(_dash(guru, "summary/suggest/"))
    assert response.status_code == 200
    form = response.context["form"]
    return form.initial["domain_knowledge"], [form[f"question_{i}"].value() for i in range(form.count)]


def test_suggest_then_approve_saves_the_domain_knowledge_and_appends_approved_examples(
    client: Client, guru: Guru,
) -> None:
    source = _source(guru, "Celery documentation")
    _tree(source, SUMMARY, is_root=True)
    ExampleQuestion.objects.create(guru=guru, text="Which brokers are supported?", position=0)
    ExampleQuestion.objects.create(guru=guru, text="How do I use beat?", position=1, approved=False)

    page = client.post(_dash(guru, "summary/suggest/")).content.decode()
    assert "added after the 2 existing" in page and "nothing is replaced" in page
    assert "no language model" in page and 'name="domain_knowledge"' in page
    domain, questions = _draft(client, guru)
    assert domain and 5 <= len(questions) <= 10

    data: dict[str, str] = {"save_domain_knowledge": "on", "domain_knowledge": "Celery: tasks, workers, brokers.",
                            "drafted_by": "offline-rules"}
    for index, question in enumerate(questions):
        data[f"question_{index}"] = question
    data["question_0"] = "How do I retry a failed task?"  # edited
    data["question_1"] = "How do I use beat?"  # the unapproved row: approving it shows it
    data["keep_0"] = data["keep_1"] = data["keep_2"] = "on"  # the others stay unticked
    response = client.post(_dash(guru, "summary/approve/"), data)
    assert response.status_code == 302 and response["Location"] == "/dashboard/g/celery/#examples"
    assert "Saved the domain knowledge. Added 2 example questions" in " ".join(_flashes(response))

    guru.refresh_from_db()
    assert guru.domain_knowledge == "Celery: tasks, workers, brokers."
    assert guru_example_texts(guru=guru) == ["Which brokers are supported?", "How do I use beat?",
                                             "How do I retry a failed task?", questions[2]]
    assert not ExampleQuestion.objects.filter(guru=guru, approved=False).exists()
    assert all(q not in guru_example_texts(guru=guru) for q in questions[3:])


def test_approve_refuses_more_questions_than_free_slots_and_saves_nothing(client: Client, guru: Guru) -> None:
    for position in range(MAX_EXAMPLES - 1):
        ExampleQuestion.objects.create(guru=guru, text=f"Existing question {position}?", position=position)
    before = guru.domain_knowledge
    data = {"save_domain_knowledge": "on", "domain_knowledge": "New text.", "question_0": "First new question?",
            "keep_0": "on", "question_1": "Second new question?", "keep_1": "on"}
    response = client.post(_dash(guru, "summary/approve/"), data)
    page = response.content.decode()
    assert response.status_code == 400 and "tick at most 1" in page
    assert ExampleQuestion.objects.filter(guru=guru).count() == MAX_EXAMPLES - 1
    assert Guru.objects.get(pk=guru.pk).domain_knowledge == before

    too_long = client.post(_dash(guru, "summary/approve/"), {**data, "domain_knowledge": "x" * 501, "keep_1": ""})
    assert too_long.status_code == 400 and "At most 500 characters" in too_long.content.decode()
    keep_text = client.post(_dash(guru, "summary/approve/"), {"domain_knowledge": "", "question_0": "Only one new?",
                                                              "keep_0": "on"})
    assert keep_text.status_code == 302
    assert Guru.objects.get(pk=guru.pk).domain_knowledge == before and "Only one new?" in guru_example_texts(guru=guru)


def test_suggest_with_a_chat_model_names_it_and_offers_its_questions(
    client: Client, guru: Guru, settings: SettingsWrapper, openai_server: OpenAIFakeServer,
) -> None:
    settings.OPENGURU_LLM = openai_server.llm_settings()
    _tree(_source(guru, "Docs"), SUMMARY, is_root=True)
    drafted = [f"How does Celery handle case {n}?" for n in range(6)]
    openai_server.script.push(ScriptedReply(json={"domain_knowledge": "Celery, the Python task queue.",
                                                  "questions": [*drafted, "<img src=x onerror=alert(1)> evil?"]}))
    response = client.post(_dash(guru, "summary/suggest/"))
    page = response.content.decode()
    assert response.status_code == 200 and f"A draft by {FAKE_CHAT_MODEL}" in page
    assert all(question in page for question in drafted) and "<img src=x" not in page
    assert "Celery, the Python task queue." in page


def test_the_public_page_and_the_widget_suggest_only_approved_examples(client: Client, guru: Guru) -> None:
    cache.clear()
    origin = "https://docs.example.com"
    widget = WidgetId.objects.create(guru=guru, allowed_origins=[origin])
    ExampleQuestion.objects.create(guru=guru, text="Drafted, never approved?", position=0, approved=False)
    client.post(_dash(guru, "summary/approve/"), {"question_0": "Approved from the draft?", "keep_0": "on",
                                                  "question_1": "Left unticked?"})
    public = Client().get(f"/g/{guru.slug}/").content.decode()
    assert "Approved from the draft?" in public
    assert "Drafted, never approved?" not in public and "Left unticked?" not in public
    config = Client().get("/widget/guru/", headers={"Authorization": widget.key, "Origin": origin})
    assert json.loads(config.content)["example_questions"] == ["Approved from the draft?"]


# --- access ----------------------------------------------------------------------------------------------------


def test_only_maintainers_post_and_only_with_a_csrf_token(client: Client, guru: Guru, maintainer: Any) -> None:
    other = GuruFactory(slug="other")
    other.maintainers.add(UserFactory(username="bob"))
    _tree(_source(other, "Bob's docs"), SUMMARY, is_root=True)
    for tail in ("summary/budget/", "summary/suggest/", "summary/approve/"):
        assert client.post(f"/dashboard/g/other/{tail}", {"summary_token_budget": "5"}).status_code == 404
        assert client.get(_dash(guru, tail)).status_code == 405
        assert Client().post(_dash(guru, tail)).status_code == 302  # to the log-in page
    assert client.get("/dashboard/g/other/").status_code == 404
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(maintainer)
    assert strict.post(_dash(guru, "summary/budget/"), {"summary_token_budget": "5"}).status_code == 403
    assert Guru.objects.get(pk=other.pk).summary_token_budget is None
    assert Guru.objects.get(pk=guru.pk).summary_token_budget is None


# --- the instance default --------------------------------------------------------------------------------------


def test_the_instance_default_budget_saves_through_the_settings_form(client: Client, staff: Any) -> None:
    page = client.get("/dashboard/settings/").content.decode()
    assert "Summary token budget" in page and 'value="1000000"' in page
    response = client.post("/dashboard/settings/", {**INSTANCE, "summary_token_budget": "400000"})
    assert response.status_code == 302 and settings_get().summary_token_budget == 400_000
    refused = client.post("/dashboard/settings/", {**INSTANCE, "summary_token_budget": "-1"})
    assert refused.status_code == 200 and "greater than or equal to 0" in refused.content.decode()
    assert settings_get().summary_token_budget == 400_000
    client.post("/dashboard/settings/", {**INSTANCE, "summary_token_budget": ""})
    assert settings_get().summary_token_budget == 1_000_000
