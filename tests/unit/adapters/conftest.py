"""Fixtures of the adapter contracts: the chat harnesses every ChatModel contract runs on (the in-memory fake, and
each real SDK against its fake server: the `openai_chat_harness` and `gemini_chat_harness` fixtures of tests/fakes)."""

from __future__ import annotations

import pytest

from backend.adapters.llm.fake import ScriptedChatModel
from tests.contracts import ChatHarness


@pytest.fixture
def scripted_chat_harness() -> ChatHarness:
    chat = ScriptedChatModel()
    return ChatHarness(chat=chat, script=chat.script, over_http=False)


@pytest.fixture(params=["scripted", "openai", "gemini"])
def harness(request: pytest.FixtureRequest) -> ChatHarness:
    found: ChatHarness = request.getfixturevalue(f"{request.param}_chat_harness")
    return found
