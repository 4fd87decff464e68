"""Scoring evaluation questions: source matching, ranks, facts, citations, and the run's figures."""

from __future__ import annotations

from typing import Any

import pytest

from backend.pipeline.evaluation import (
    EvalCase,
    Observation,
    Seen,
    citation_check,
    claims,
    facts_found,
    first_rank,
    recall_at,
    score_case,
    source_matches,
)
from backend.pipeline.evaluation_report import calibration, gate, report_text, summarise, sweep

UPLOADS = Seen("patterns/fileuploads.rst", "", "Set MAX_CONTENT_LENGTH to limit the size of uploaded files.")
CONFIG = Seen("Configuration", "https://docs.example.com/config/#loading?x=1",
              "Configuration values are loaded with from_pyfile or from_prefixed_env.")


@pytest.mark.parametrize(("expected", "seen", "match"), [
    ("patterns/fileuploads.rst", UPLOADS, True),
    ("fileuploads.rst", UPLOADS, True),              # the end of a path, at a folder boundary
    ("uploads.rst", UPLOADS, False),                 # not in the middle of a name
    ("configuration", CONFIG, True),                 # the title, case ignored
    ("https://docs.example.com/config/", CONFIG, True),  # the link, fragment and query ignored
    ("/config", CONFIG, True),
    ("", CONFIG, False),
])
def test_an_expected_source_matches_a_title_a_link_or_a_path_end(expected: str, seen: Seen, match: bool) -> None:
    assert source_matches(expected, seen) is match


def test_ranks_and_recall_count_only_the_top_k() -> None:
    seen = [CONFIG, Seen("Other", ""), UPLOADS]
    assert first_rank(["fileuploads.rst"], seen, 5) == 3
    assert first_rank(["fileuploads.rst"], seen, 2) is None
    assert recall_at(["fileuploads.rst", "Configuration"], seen, 2) == 0.5
    assert recall_at(["fileuploads.rst", "Configuration"], seen, 3) == 1.0


def test_facts_ignore_case_spacing_and_emphasis() -> None:
    answer = "Set **MAX_CONTENT_LENGTH**  to the   limit; larger bodies get `413`."
    assert facts_found(["max_content_length", "the limit", "413", "RequestEntityTooLarge"], answer) == 3


def test_a_claim_is_its_sentence_or_the_extract_after_a_title_label() -> None:
    answer = ("Uploads are limited by MAX_CONTENT_LENGTH in bytes [1]. Values load from files [2].\n\n"
              "**Configuration** [2]\n> Configuration values are loaded with from_pyfile.")
    found = claims(answer)
    assert [n for n, _ in found] == [1, 2, 2]
    assert "MAX_CONTENT_LENGTH" in found[0][1] and "from_pyfile" in found[2][1]


def test_brackets_in_code_are_not_citations() -> None:
    answer = ("Read the first message [1].\n\n```python\nassert messages['name'][0] == 'Empty.'\nargs[2]\n```\n\n"
              "Or index `args[2]` inline; the loader lists values [2].\n~~~~\nx[1]\n~~~\n~~~~\nAfter [1].")
    assert [n for n, _ in claims(answer)] == [1, 2, 1]


def test_a_marker_citing_two_sources_is_a_claim_on_each() -> None:
    assert [n for n, _ in claims("Uploads are limited by MAX_CONTENT_LENGTH in bytes [1, 2].")] == [1, 2]


def test_a_citation_is_valid_only_when_its_reference_holds_the_claims_key_terms() -> None:
    refs = [UPLOADS, CONFIG]
    good = "Set MAX_CONTENT_LENGTH to limit uploaded file size [1]."
    swapped = "Set MAX_CONTENT_LENGTH to limit uploaded file size [2]."
    missing = "Set MAX_CONTENT_LENGTH to limit uploaded file size [7]."
    assert citation_check(good, refs) == (1, 1)
    assert citation_check(swapped, refs) == (0, 1)
    assert citation_check(missing, refs) == (0, 1)


def _score(case: EvalCase, refused: bool, trust: float, refs: tuple[Seen, ...] = (UPLOADS,),
           answer: str = "Set MAX_CONTENT_LENGTH to limit uploaded files [1].") -> dict[str, Any]:
    seen = Observation(retrieved=(CONFIG, UPLOADS), references=() if refused else refs, refused=refused,
                       trust=trust, answer="" if refused else answer, timings={"total_ms": 40, "grade_ms": 2})
    return score_case(case, seen, k=5).as_dict()


IN_SCOPE = EvalCase("How do I limit uploads?", ("fileuploads.rst",), ("MAX_CONTENT_LENGTH",), category="lexical")
NEAR = EvalCase("How do I add GraphQL?", refusal_kind="near_miss", category="near-miss")
FAR = EvalCase("Best bread recipe?", refusal_kind="unrelated", category="unrelated")


def test_a_refused_question_in_scope_scores_zero_but_keeps_its_hit_before_trust() -> None:
    score = _score(IN_SCOPE, refused=True, trust=0.3)
    assert score["recall"] == 0.0 and score["rank"] is None and score["hit_before"] is True
    assert score["grounded"] is True  # the evidence was in hand: the trust step was wrong, not retrieval


def test_the_summary_splits_refusals_and_the_sweep_replays_thresholds() -> None:
    scores = [_score(IN_SCOPE, False, 0.8), _score(IN_SCOPE, True, 0.4), _score(NEAR, False, 0.6),
              _score(NEAR, True, 0.2), _score(FAR, True, 0.05)]
    summary = summarise(scores, k=5)
    assert summary["answer_rate"] == 0.5 and summary["recall"] == 0.5 and summary["mrr"] == 0.5
    assert summary["near_miss_refusal"] == 0.5 and summary["unrelated_refusal"] == 1.0
    assert summary["refusal_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["fact_coverage"] == 0.5 and summary["hit_before"] == 1.0
    assert summary["latency"]["total"] == {"p50": 40, "p95": 40, "n": 5}
    at = {p["threshold"]: p for p in sweep(scores)}
    assert at[0.35]["answer_rate"] == 1.0 and at[0.65]["near_miss_refusal"] == 1.0
    assert at[0.65]["answer_rate"] == 0.5
    buckets = calibration(scores)
    assert [b["n"] for b in buckets] == [1, 1, 1, 1, 1]
    assert buckets[4]["grounded"] == 1.0 and buckets[0]["grounded"] == 0.0 and buckets[2]["grounded"] == 1.0


def test_gates_name_what_was_missed_and_what_cannot_be_measured() -> None:
    summary = summarise([_score(IN_SCOPE, False, 0.8)], k=5)
    assert gate(summary, {"recall": 0.9}) == []
    missed = gate(summary, {"answer_rate": 1.1, "near_miss_refusal": 0.8})
    assert missed[0].startswith("answer rate") and "not measurable" in missed[1]
    assert any("recall@5" in line for line in report_text(summary))


def test_a_pdf_matches_by_its_name_or_by_one_page() -> None:
    page = Seen("manual.pdf — page 3", "/sources/7/file#page=3")
    assert source_matches("manual.pdf", page) and source_matches("manual.pdf — page 3", page)
    assert not source_matches("manual.pdf — page 4", page)
