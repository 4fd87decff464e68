"""With a language model, `--judge` asks it how well each answer is supported, and counts its tokens."""

from __future__ import annotations

import json

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ScriptedReply
from backend.evaluation.runner import run_cases, run_create
from backend.gurus.models import Guru
from backend.pipeline.evaluation import EvalCase
from tests.fakes.openai_server import OpenAIFakeServer

pytestmark = [pytest.mark.django_db]


def test_the_judge_scores_groundedness_with_the_references_and_the_answer(
    docs: Guru, settings: SettingsWrapper, openai_server: OpenAIFakeServer,
) -> None:
    settings.OPENGURU_LLM = openai_server.llm_settings()
    openai_server.script.push(
        ScriptedReply(json={"grades": [{"id": i, "score": 0.9 if i == 0 else 0.1} for i in range(10)]}),
        ScriptedReply(text="Set MAX_CONTENT_LENGTH to the largest size in bytes [1].", stream=True),
        ScriptedReply(json={"supported": 0.75, "unsupported_claims": ["in bytes"]}),
    )
    case = EvalCase("How do I reject uploads that are too large?", ("Uploading files",), ("MAX_CONTENT_LENGTH",))
    run = run_cases(run_create(docs, set_name="judged", total=1), [case], judge=True)
    assert run.summary["groundedness"] == 0.75 and run.summary["recall"] == 1.0
    assert run.summary["fact_coverage"] == 1.0 and run.summary["tokens"] > 0
    judged = [r for r in openai_server.script.requests if r.json_schema and "supported" in json.dumps(r.json_schema)]
    assert len(judged) == 1
    prompt = judged[0].messages[-1][1]
    assert "MAX_CONTENT_LENGTH to the largest size" in prompt and "413 Request Entity Too Large" in prompt
