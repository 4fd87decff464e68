"""Dashboard: refused questions grouped by meaning, and how their vectors are filled in after an embedder change."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.test import Client

from backend.adapters import registry
from backend.answering.models import Question
from backend.core.counters import counter_store
from backend.dashboard.questions.gaps import EMBED_NOW, gap_report
from backend.gurus.models import Guru
from tests.dashboard.questions_support import ask

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()  # nothing cached by an earlier test may shape this one



SSO = ["How do I configure single sign on with Okta?", "How can I configure single sign on with Okta SAML?",
       "How do I configure single sign on using Okta?"]
PRICE = ["What is the price of the enterprise plan?", "What is the price of the enterprise plan per seat?"]


def test_unanswered_groups_similar_refusals(client: Client, guru: Guru) -> None:
    for text in [SSO[0], PRICE[0], SSO[1], "Does it run on a Raspberry Pi?", PRICE[1], SSO[2]]:
        ask(guru, text, out_of_context=True, trust_score=0.0)
    ask(guru, "asdf qwer", out_of_context=True, intent="invalid")  # gibberish is no gap in the docs
    ask(guru, SSO[0] + " answered", out_of_context=False)
    response = client.get("/dashboard/g/celery/unanswered/")
    assert response.status_code == 200
    gaps = response.context["report"].gaps
    assert [sorted(q.question for q in gap.members) for gap in gaps] == [sorted(SSO), sorted(PRICE),
                                                                         ["Does it run on a Raspberry Pi?"]]
    assert gaps[0].representative.question in SSO and gaps[0].members[0].question == SSO[2]  # newest first
    html = response.content.decode()
    assert "asked 3 times" in html and "asked 2 times" in html and "asked 1 time<" in html
    assert "asdf" not in html and "3 groups from 6 unanswered questions" in html
    # Vectors are cached with the embedder's id.
    stored = Question.objects.filter(guru=guru, out_of_context=True).exclude(intent="invalid")
    assert {q.embedding_model for q in stored} == {registry.embedder_id()}


def test_unanswered_recomputes_vectors_of_another_embedder(guru: Guru) -> None:
    question = ask(guru, SSO[0], out_of_context=True, embedding=b"\x00" * 16, embedding_model="old:model")
    ask(guru, SSO[1], out_of_context=True)
    report = gap_report(guru)
    assert [g.size for g in report.gaps] == [2]
    question.refresh_from_db()
    assert question.embedding_model == registry.embedder_id() and len(question.embedding) == 384 * 4


@pytest.mark.django_db(transaction=True)  # the worker thread must see the committed rows
def test_unanswered_after_an_embedder_change_embeds_a_few_now_and_the_rest_in_the_worker(
    client: Client, guru: Guru, live_celery_worker: None,
) -> None:
    stale = 3 * EMBED_NOW
    for i in range(stale):
        ask(guru, f"{SSO[i % 3]} (case {i})", out_of_context=True, embedding=b"\x00" * 16, embedding_model="old:model")
    response = client.get("/dashboard/g/celery/unanswered/")
    report = response.context["report"]
    assert report.pending == stale - EMBED_NOW and sum(g.size for g in report.gaps) == EMBED_NOW
    assert f"{stale - EMBED_NOW} more unanswered questions are still being analysed" in response.content.decode()
    assert "href=\"?similarity=normal\">reload</a>" in response.content.decode()
    current = Question.objects.filter(guru=guru, embedding_model=registry.embedder_id())
    deadline = time.monotonic() + 30
    while current.count() < stale and time.monotonic() < deadline:
        time.sleep(0.1)
    assert current.count() == stale  # the worker filled in the rest
    response = client.get("/dashboard/g/celery/unanswered/")
    assert response.context["report"].pending == 0 and sum(g.size for g in response.context["report"].gaps) == stale
    assert "still being analysed" not in response.content.decode()


def test_unanswered_queues_one_backfill_at_a_time_and_converges_without_a_worker(guru: Guru) -> None:
    for i in range(EMBED_NOW + 5):
        ask(guru, f"{PRICE[i % 2]} ({i})", out_of_context=True, embedding=b"\x00" * 16, embedding_model="old:model")
    current = Question.objects.filter(guru=guru, embedding_model=registry.embedder_id())
    store, lease = counter_store(), f"gaps-backfill:{guru.pk}"
    store.release(lease, "queued")  # the lease outlives tests on Redis
    assert store.claim(lease, "queued", ttl=60)  # as if a visit a moment ago had queued one
    assert gap_report(guru).pending == 5 and current.count() == EMBED_NOW  # nothing queued twice
    assert gap_report(guru).pending == 0 and current.count() == EMBED_NOW + 5  # the next visit embeds the rest
    Question.objects.filter(guru=guru).update(embedding=b"\x00" * 16, embedding_model="old:model")
    store.release(lease, "queued")
    assert gap_report(guru).pending == 5  # and queues them (run eagerly in tests)
    assert current.count() == EMBED_NOW + 5


def test_unanswered_strictness_and_empty_state(client: Client, guru: Guru) -> None:
    assert "No unanswered questions" in client.get("/dashboard/g/celery/unanswered/").content.decode()
    for text in SSO:
        ask(guru, text, out_of_context=True)
    loose = client.get("/dashboard/g/celery/unanswered/", {"similarity": "loose"}).context["report"]
    strict = client.get("/dashboard/g/celery/unanswered/", {"similarity": "strict"}).context["report"]
    bogus = client.get("/dashboard/g/celery/unanswered/", {"similarity": "bogus"}).context["report"]
    assert len(loose.gaps) == 1 and len(strict.gaps) >= len(loose.gaps) and bogus.similarity == "normal"
