"""Similarity grouping: close vectors share a group, far ones do not, largest groups first, edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from backend.adapters.embeddings.fake import HashingEmbedder
from backend.pipeline.clustering import group_by_similarity


def test_nothing_to_group() -> None:
    assert group_by_similarity(np.zeros((0, 4)), threshold=0.8) == []


def test_close_vectors_group_and_largest_group_comes_first() -> None:
    vectors = [[1, 0, 0], [0, 1, 0], [0.95, 0.05, 0], [0.9, 0.1, 0.05], [0, 0, 1]]
    groups = group_by_similarity(vectors, threshold=0.9)
    assert [g.members for g in groups] == [(0, 2, 3), (1,), (4,)]
    assert groups[0].size == 3
    assert groups[0].representative in groups[0].members


def test_representative_is_the_member_nearest_the_centroid() -> None:
    vectors = [[1.0, 0.3], [1.0, 0.0], [1.0, -0.3]]
    (group,) = group_by_similarity(vectors, threshold=0.8)
    assert group.representative == 1


def test_threshold_one_only_groups_identical_directions() -> None:
    groups = group_by_similarity([[1, 1], [2, 2], [1, 0]], threshold=1.0 - 1e-9)
    assert [g.members for g in groups] == [(0, 1), (2,)]


def test_equal_sizes_keep_input_order_and_zero_vectors_stay_alone() -> None:
    groups = group_by_similarity([[0, 0], [0, 1], [1, 0], [0, 0]], threshold=-1.0)
    assert [g.members for g in groups] == [(1, 2), (0,), (3,)]
    groups = group_by_similarity([[0, 0], [0, 1], [1, 0], [0, 0]], threshold=0.5)
    assert [g.members for g in groups] == [(0,), (1,), (2,), (3,)]


def test_invalid_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="2-D"):
        group_by_similarity([1.0, 2.0], threshold=0.5)
    with pytest.raises(ValueError, match="threshold"):
        group_by_similarity([[1.0]], threshold=1.5)


def test_questions_sharing_most_words_group_with_the_hashing_embedder() -> None:
    questions = [
        "How do I configure single sign on with Okta?",
        "How can I configure single sign on with Okta SAML?",
        "What is the price of the enterprise plan?",
        "How do I configure single sign on using Okta?",
        "What is the price of the enterprise plan per seat?",
        "Does it run on a Raspberry Pi?",
    ]
    vectors = HashingEmbedder(384).embed_documents(questions)
    groups = group_by_similarity(vectors, threshold=0.6)
    assert [sorted(g.members) for g in groups] == [[0, 1, 3], [2, 4], [5]]
