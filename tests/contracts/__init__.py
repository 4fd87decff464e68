"""Contract suites (gurubase/: Gurubase's wire protocol) and the shapes they share with the fake servers."""

from __future__ import annotations

from dataclasses import dataclass

from backend.adapters.llm.fake import ReplyScript
from backend.pipeline.ports import ChatModel

# Adapters under contract test are built with these, so retry and timeout tests stay fast.
TEST_TIMEOUT = 2.0
TEST_MAX_RETRIES = 2
TEST_BACKOFF_BASE = 0.01


@dataclass
class ChatHarness:
    """A chat model under test and the script its provider (fake server or in-memory) replays."""

    chat: ChatModel
    script: ReplyScript
    over_http: bool
