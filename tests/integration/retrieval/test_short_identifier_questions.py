"""Short questions whose distinctive word is a number or an identifier reach their passage (issue #19):
Milvus Lite's BM25 leg, local MiniLM embeddings and the local reranker, through `retrieve`."""

from __future__ import annotations

import pytest

from backend.gurus.models import Guru
from tests.integration.retrieval.conftest import ranked, trust_threshold

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


@pytest.mark.parametrize(("question", "page"), [
    ("What does exit code 2 mean?", "Exit code 2"),  # MiniLM alone puts "Exit code 1" first
    ("What is exit code 3?", "Exit code 3"),
    ("What is MAX_CONTENT_LENGTH?", "Upload size"),
    ("What does --port do?", "Listening port"),
])
def test_the_page_naming_the_number_or_identifier_comes_first_and_is_trusted(
        tool_guru: Guru, question: str, page: str) -> None:
    found = ranked(tool_guru, question)
    assert found and found[0][0] == page, found
    assert found[0][1] >= trust_threshold(tool_guru) == 0.5


def test_an_unrelated_question_finds_nothing_trusted(tool_guru: Guru) -> None:
    assert all(score < trust_threshold(tool_guru) for _, score in ranked(tool_guru, "How do I bake sourdough bread?"))
