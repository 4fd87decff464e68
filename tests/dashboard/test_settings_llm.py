"""The chat provider on the instance Settings page: saved encrypted, tested for real, overridden by the environment."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.llm.fake import ScriptedReply
from backend.adapters.llm.gemini_chat import GeminiChatModel
from backend.adapters.llm.openai_chat import OpenAIChatModel
from backend.answering.events import EventKind
from backend.core.fields import decrypt_text
from backend.core.selectors import settings_get
from backend.core.services import settings_update
from backend.core.sidecars import free_port
from backend.dashboard.settings_page.llm_form import base_url_problem
from backend.gurus.models import Guru
from backend.pipeline.answerer_offline import NO_LLM_NOTICE
from tests.factories import UserFactory
from tests.fakes.gemini_server import FAKE_GEMINI_KEY, FakeGeminiServer
from tests.fakes.http import FakeRequest, FakeResponder, serve
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.integration.answering.answer_support import ask, grades, make_indexed_guru, of_kind

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

LLM, TEST, PAGE = "/dashboard/settings/llm/", "/dashboard/settings/llm/test/", "/dashboard/settings/"
JSON = {"HTTP_ACCEPT": "application/json"}
ANSWER = "Call self.retry() inside a bound task [1]."


@pytest.fixture
def indexed(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    return make_indexed_guru(django_capture_on_commit_callbacks)


def compatible(server: OpenAIFakeServer, **changes: str) -> dict[str, str]:
    return {"llm_provider": "openai-compatible", "llm_base_url": server.api_base, "api_key": FAKE_OPENAI_KEY,
            "answer_model": FAKE_CHAT_MODEL, **changes}


def answer_text(guru: Guru) -> str:
    return "".join(delta["text"] for delta in of_kind(ask(guru), EventKind.DELTA))


def raw_key() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT llm_api_key FROM core_settings")
        return str(cursor.fetchone()[0])


def test_an_openai_compatible_server_saved_here_answers_the_next_question(
    client: Client, staff: Any, indexed: Guru, openai_server: OpenAIFakeServer
) -> None:
    assert registry.chat_model() is None and answer_text(indexed).startswith(NO_LLM_NOTICE)  # offline before
    response = client.post(LLM, compatible(openai_server))
    assert response.status_code == 302 and response["Location"] == f"{PAGE}#llm"
    openai_server.script.push(grades(0.9), ScriptedReply(text=ANSWER))
    assert answer_text(indexed) == ANSWER
    assert {r.model for r in openai_server.script.requests} == {FAKE_CHAT_MODEL}
    chat = registry.chat_model()
    assert isinstance(chat, OpenAIChatModel) and chat.model == FAKE_CHAT_MODEL
    page = client.get(PAGE).content.decode()
    assert "Chat provider saved." in page and "A key is set" in page and "from the instance settings" in page


def test_gemini_saved_here_answers_with_the_gemini_sdk(
    client: Client, staff: Any, indexed: Guru, gemini_server: FakeGeminiServer
) -> None:
    form = {"llm_provider": "gemini", "llm_base_url": gemini_server.url, "api_key": FAKE_GEMINI_KEY,
            "answer_model": "gemini-2.5-pro"}
    assert client.post(LLM, form).status_code == 302
    gemini_server.script.push(grades(0.9), ScriptedReply(text=ANSWER))
    assert answer_text(indexed) == ANSWER
    assert isinstance(registry.chat_model(), GeminiChatModel)


def test_the_key_is_encrypted_at_rest_and_never_rendered(
    client: Client, staff: Any, openai_server: OpenAIFakeServer
) -> None:
    client.post(LLM, compatible(openai_server))
    assert raw_key().startswith("fernet:") and FAKE_OPENAI_KEY not in raw_key()
    assert decrypt_text(raw_key()) == FAKE_OPENAI_KEY == settings_get().llm_api_key
    invalid = client.post(LLM, compatible(openai_server, llm_base_url="ftp://example.com/v1"))  # re-rendered
    tested = client.post(TEST, compatible(openai_server, api_key=""), **JSON)
    without_script = client.post(TEST, compatible(openai_server))
    for response in (client.get(PAGE), invalid, tested, without_script, client.get("/dashboard/")):
        assert FAKE_OPENAI_KEY not in response.content.decode()
    assert 'name="api_key"' in invalid.content.decode() and "value=" not in _tag(invalid, 'name="api_key"')


def _tag(response: Any, marker: str) -> str:
    page = response.content.decode()
    start = page.rindex("<", 0, page.index(marker))
    return page[start:page.index(">", start)]


def test_a_blank_key_keeps_the_saved_one_and_clear_removes_it(
    client: Client, staff: Any, openai_server: OpenAIFakeServer
) -> None:
    client.post(LLM, compatible(openai_server))
    assert client.post(LLM, compatible(openai_server, api_key="")).status_code == 302
    assert settings_get().llm_api_key == FAKE_OPENAI_KEY
    assert client.post(LLM, compatible(openai_server, api_key="", clear_api_key="on")).status_code == 302
    assert settings_get().llm_api_key == "" and raw_key() == ""
    refused = client.post(LLM, {"llm_provider": "openai", "api_key": "", "answer_model": ""})
    assert "OpenAI needs an API key." in refused.content.decode() and settings_get().llm_provider != "openai"


def test_test_connection_reports_latency_and_lists_models_with_the_saved_key(
    client: Client, staff: Any, openai_server: OpenAIFakeServer
) -> None:
    openai_server.chat_models = frozenset({FAKE_CHAT_MODEL, "llama3.2:latest"})
    client.post(LLM, compatible(openai_server))
    report = client.post(TEST, compatible(openai_server, api_key=""), **JSON).json()  # the key left blank
    assert report["ok"] is True and isinstance(report["latency_ms"], int) and report["latency_ms"] >= 0
    assert f"{FAKE_CHAT_MODEL} answered in {report['latency_ms']} ms" in report["message"]
    assert report["models"] == [FAKE_CHAT_MODEL, "llama3.2:latest"]
    assert len(openai_server.script.requests) == 1  # one real completion, not retried


def test_test_connection_uses_the_form_values_before_they_are_saved(
    client: Client, staff: Any, openai_server: OpenAIFakeServer
) -> None:
    report = client.post(TEST, compatible(openai_server), **JSON).json()
    assert report["ok"] is True and settings_get().llm_provider == "offline"  # nothing saved by a test


def test_test_connection_names_a_rejected_key_without_echoing_it(
    client: Client, staff: Any, openai_server: OpenAIFakeServer
) -> None:
    wrong = "sk-wrong-SECRET-4242"
    report = client.post(TEST, compatible(openai_server, api_key=wrong), **JSON).json()
    assert report["ok"] is False and report["latency_ms"] is None
    assert "rejected the API key (HTTP 401)" in report["message"]
    assert "sk-wro" not in report["message"] and "4242" not in report["message"]
    assert openai_server.refused == [(401, "/v1/chat/completions")]


def test_test_connection_reports_an_unreachable_server(client: Client, staff: Any) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    report = client.post(TEST, {"llm_provider": "openai-compatible", "llm_base_url": url,
                                "answer_model": "llama3.2"}, **JSON).json()
    assert report["ok"] is False and f"Cannot reach {url}" in report["message"]


def test_a_providers_error_page_is_bounded_and_escaped(client: Client, staff: Any) -> None:
    def hostile(request: FakeRequest, responder: FakeResponder) -> None:
        responder.raw(b"<script>alert('owned')</script>" + b"x" * 5000, status=400,
                      headers={"Content-Type": "text/html"})

    with serve(hostile) as url:
        form = {"llm_provider": "openai-compatible", "llm_base_url": f"{url}/v1", "answer_model": "m"}
        report = client.post(TEST, form, **JSON).json()
        page = client.post(TEST, form).content.decode()  # without the script: the page shows the result
    assert report["ok"] is False and len(report["message"]) <= 400 and report["message"].endswith("…")
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#x27;owned&#x27;)" in page


def test_the_environment_wins_and_the_page_says_so(
    client: Client, staff: Any, settings: SettingsWrapper, openai_server: OpenAIFakeServer,
    gemini_server: FakeGeminiServer,
) -> None:
    settings_update(llm_provider="gemini", llm_base_url=gemini_server.url, llm_api_key=FAKE_GEMINI_KEY)
    assert isinstance(registry.chat_model(), GeminiChatModel)
    settings.OPENGURU_LLM = openai_server.llm_settings()  # OPENAI_API_KEY, OPENAI_BASE_URL, OPENGURU_CHAT_MODEL
    assert isinstance(registry.chat_model(), OpenAIChatModel)
    page = client.get(PAGE).content.decode()
    assert "Set by the environment." in page and "from the environment" in page
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENGURU_CHAT_MODEL"):
        assert f"<code>{name}</code>" in page
    assert openai_server.api_base in page and FAKE_OPENAI_KEY not in page and FAKE_GEMINI_KEY not in page
    assert 'name="llm_provider"' in page and "disabled" in _tag(client.get(PAGE), 'name="llm_provider"')
    assert "disabled" in _tag(client.get(PAGE), 'name="api_key"')
    client.post(LLM, {"llm_provider": "offline", "llm_base_url": "http://x/", "answer_model": ""})
    assert (settings_get().llm_provider, settings_get().llm_base_url) == ("gemini", gemini_server.url)
    report = client.post(TEST, {"llm_provider": "offline"}, **JSON).json()
    assert report["ok"] is True  # the environment's provider is tested, not the disabled form's values


def test_without_the_environment_the_page_still_names_the_variables(client: Client, staff: Any) -> None:
    page = client.get(PAGE).content.decode()
    assert "Set by the environment." not in page
    for name in ("OPENGURU_LLM_PROVIDER", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY",
                 "OPENGURU_CHAT_MODEL"):
        assert f"<code>{name}</code>" in page


def test_non_staff_cannot_see_or_change_the_provider(client: Client, openai_server: OpenAIFakeServer) -> None:
    maintainer = UserFactory(username="ana")
    Guru.objects.create(slug="celery", name="Celery").maintainers.add(maintainer)
    client.force_login(maintainer)
    for path in (LLM, TEST):
        assert client.post(path, compatible(openai_server), **JSON).status_code == 403
    assert client.get(PAGE).status_code == 403
    assert 'name="llm_provider"' not in client.get("/dashboard/g/celery/settings/").content.decode()
    assert settings_get().llm_provider == "offline" and openai_server.script.requests == []


@pytest.mark.parametrize(("url", "problem"), [
    ("ftp://models.example.com/v1", "Use an http:// or https:// URL"),
    ("http://user:pw@127.0.0.1:11434/v1", "not in the URL"),
    ("http://127.0.0.1:11434/v1?key=x", "Leave out ?query"),
    ("http://169.254.169.254/latest", "link-local or cloud metadata"),
    ("http://[fd00:ec2::254]/v1", "link-local or cloud metadata"),
    ("http://100.100.100.200/v1", "link-local or cloud metadata"),
])
def test_base_urls_a_model_server_cannot_have_are_refused(
    client: Client, staff: Any, url: str, problem: str
) -> None:
    response = client.post(LLM, {"llm_provider": "openai-compatible", "llm_base_url": url, "answer_model": "m"})
    assert response.status_code == 200 and problem in response.content.decode()
    assert settings_get().llm_provider == "offline"


def test_loopback_and_private_servers_are_a_staff_choice() -> None:
    for url in ("http://127.0.0.1:11434/v1", "http://[::1]:8000/v1", "http://10.0.0.5:8000/v1",
                "https://192.168.1.20/v1", "https://api.openai.com/v1"):
        assert base_url_problem(url, resolver=lambda host, port: [host.strip("[]")] if host[0].isdigit()
                                or ":" in host else ["162.159.140.245"]) == "", url


def test_a_saved_change_applies_at_once_in_the_saving_process(
    client: Client, staff: Any, openai_server: OpenAIFakeServer
) -> None:
    client.post(LLM, compatible(openai_server))
    assert registry.chat_model() is not None
    client.post(LLM, {"llm_provider": "offline", "answer_model": FAKE_CHAT_MODEL})  # an unchanged model is kept
    assert registry.chat_model() is None and settings_get().answer_model == FAKE_CHAT_MODEL


def test_the_test_endpoint_answers_json_errors_for_an_invalid_form(client: Client, staff: Any) -> None:
    report = json.loads(client.post(TEST, {"llm_provider": "openai-compatible", "llm_base_url": ""},
                                    **JSON).content)
    assert report["ok"] is False and "needs its base URL" in report["message"]
