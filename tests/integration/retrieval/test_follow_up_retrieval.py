"""A follow-up that changes topic is retrieved on its own; one that refers back still finds the earlier topic
(issue #19), through the rule-based understanding and `retrieve` (Milvus Lite, MiniLM, local reranker)."""

from __future__ import annotations

import pytest

from backend.gurus.models import Guru
from backend.pipeline.answer_types import Turn, UnderstandRequest
from backend.pipeline.understanding import understand_by_rules
from tests.integration.retrieval.conftest import ranked, trust_threshold

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

MONITORING = Turn("How do I monitor the workers?", "The Monitoring page charts each worker's queue length.")


def _after_monitoring(guru: Guru, question: str) -> list[tuple[str, float]]:
    understanding = understand_by_rules(UnderstandRequest(question, guru.name, guru.domain_knowledge, (MONITORING,)))
    return ranked(guru, understanding.retrieval_query)


@pytest.mark.parametrize(("question", "page"), [
    ("How do I limit upload bandwidth?", "Bandwidth"),
    ("What does exit code 2 mean?", "Exit code 2"),
])
def test_a_new_topic_gets_its_own_page_as_in_a_new_conversation(tool_guru: Guru, question: str, page: str) -> None:
    in_conversation, alone = _after_monitoring(tool_guru, question), ranked(tool_guru, question)
    assert in_conversation == alone
    assert in_conversation[0][0] == page and in_conversation[0][1] >= trust_threshold(tool_guru)


@pytest.mark.parametrize("question", ["How often is it updated?", "Where do I find it?"])
def test_a_follow_up_that_refers_back_still_finds_the_earlier_topic(tool_guru: Guru, question: str) -> None:
    assert all(score < trust_threshold(tool_guru) for _, score in ranked(tool_guru, question))  # alone: nothing
    found = _after_monitoring(tool_guru, question)
    assert found[0][0] == "Monitoring" and found[0][1] >= trust_threshold(tool_guru)
