"""A web page carrying HTML and script links, indexed and asked about over the API: the answer is inert."""

from __future__ import annotations

import re

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.adapters import registry
from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.answering.models import Question
from backend.api.services import api_key_create
from backend.gurus.models import Guru, VectorCollection
from backend.sources.models import SourceKind, SourceStatus
from backend.sources.services import source_create
from tests.factories import GuruFactory, UserFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.fakes.site_server import Reply, SiteFake
from tests.support.markdown_safety import live_html, script_links

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.production_profile]

# The page shows the attack as text (escaped), the way the issue found it; the fetcher decodes it to markdown.
HOSTILE_PAGE = """<html><head><title>Retry &lt;img src=x onerror=alert(1)&gt; tips</title></head><body><main>
<h1>Retrying tasks</h1>
<p>A task is retried by calling self.retry() inside a bound task; the countdown sets the delay in seconds.</p>
<p>Example markup: &lt;img src=x onerror=alert(document.cookie)&gt; and &lt;script&gt;alert(1)&lt;/script&gt;.</p>
<p>Read <a href="javascript:alert(2)">the retry guide</a> or [the FAQ](javascript:alert(3)) about retries.</p>
<pre><code>&lt;b&gt;retry&lt;/b&gt;</code></pre>
</main></body></html>"""


class EchoContexts(ReplyScript):
    """A model that grades every context relevant and answers by repeating its contexts verbatim."""

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)
        if request.json_schema is not None:
            return ScriptedReply(json={"grades": [{"id": i, "score": 0.95} for i in range(20)]})
        system = request.messages[0][1]
        return ScriptedReply(text="From the docs:\n\n" + system.split("Contexts:", 1)[-1].strip(), chunks=40)


@pytest.fixture
def hostile_guru(milvus: MilvusVectorStore, fake_site: SiteFake, openai_server: OpenAIFakeServer,
                 settings: SettingsWrapper, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]  # the fake site lives on loopback
    settings.OPENGURU_LLM = openai_server.llm_settings()
    openai_server.script = EchoContexts()
    fake_site.overrides["/docs/retry"] = Reply(200, HOSTILE_PAGE.encode(), {"Content-Type": "text/html"})
    with django_capture_on_commit_callbacks(execute=True):
        guru: Guru = GuruFactory(slug="hostile", name="Retry Guru", domain_knowledge="retrying tasks")
    with django_capture_on_commit_callbacks(execute=True):
        source = source_create(guru=guru, kind=SourceKind.WEBSITE, url=f"{fake_site.base_url}/docs/retry")
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED, source.error_message
    return guru


@pytest.fixture
def api(hostile_guru: Guru) -> APIClient:
    user = UserFactory(username="owner")
    hostile_guru.maintainers.add(user)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key_create(user=user, name="t", guru=None, rate_limit_per_minute=100).raw)
    return client


def _assert_inert(markdown: str) -> None:
    assert live_html(markdown) == [], markdown
    assert script_links(markdown) == [], markdown
    assert not re.search(r"<(?:img|script|b)\b", markdown.split("```")[0]), markdown


def test_stored_chunks_are_inert(hostile_guru: Guru, milvus: MilvusVectorStore) -> None:
    collection = VectorCollection.objects.get(guru_id=hostile_guru.pk).name
    hits = milvus.search_dense(collection, registry.embedder().embed_query("retry"), top_k=50)
    assert hits and "self.retry()" in " ".join(h.text for h in hits)
    for hit in hits:
        _assert_inert(hit.text)
        _assert_inert(str(hit.metadata["title"]))


def test_the_answer_json_and_its_stored_copy_are_inert(api: APIClient, hostile_guru: Guru) -> None:
    response = api.post("/api/v1/hostile/answer/", {"question": "How do I retry a task?"}, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert "self.retry()" in data["content"] and "onerror" in data["content"]  # the echo really carried it
    _assert_inert(data["content"])
    _assert_inert(Question.objects.get(pk=data["question_id"]).content)
    for reference in data["references"]:
        _assert_inert(reference["title"])
        assert reference["link"].startswith(("http://", "https://"))


def test_the_streamed_answer_is_inert(api: APIClient, hostile_guru: Guru) -> None:
    response = api.post("/api/v1/hostile/answer/", {"question": "How is a task retried?", "stream": True},
                        format="json")
    assert response.status_code == 200
    text = b"".join(response).decode()
    assert "self.retry()" in text and "onerror" in text
    _assert_inert(text)
