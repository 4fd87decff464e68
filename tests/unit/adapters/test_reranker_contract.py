"""Reranker contract, run against the local fusion reranker and the TEI HTTP adapter, plus adapter-specific checks."""

from __future__ import annotations

import inspect
import math
import socket
from dataclasses import replace
from types import ModuleType

import pytest

from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder
from backend.adapters.reranker.http_rerank import HttpReranker
from backend.pipeline import rerank_local
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import Passage
from backend.pipeline.ports import Reranker
from backend.pipeline.rerank_local import FusionWeights, LocalFusionReranker, query_terms, tokenize
from tests.contracts import TEST_MAX_RETRIES
from tests.fakes.tei_server import TeiFake, logit, overlap_score

CORPUS = [
    ("Celery: Retrying tasks", "## Retrying tasks\n\nCall `self.retry(exc=exc, countdown=60)` inside a bound task to "
     "retry it after a failure; `max_retries` limits the number of attempts."),
    ("Celery: Calling tasks", "`apply_async(args, kwargs, countdown=10)` schedules a task to run after a delay; "
     "`delay()` is a shortcut that takes no execution options."),
    ("Celery: Periodic tasks", "celery beat schedules periodic tasks from the `beat_schedule` setting, using crontab "
     "expressions or fixed intervals."),
    ("Celery: Routing", "The `task_routes` setting sends tasks to named queues; start a worker with `-Q feeds` to "
     "consume only one of them."),
    ("Celery: Result backends", "Configure `result_backend = 'redis://localhost:6379/1'` to store task results and "
     "states so callers can read return values later."),
    ("tasks.py", "```python\n@app.task(bind=True, max_retries=3)\ndef fetch(self, url):\n    try:\n        return "
     "requests.get(url, timeout=5).text\n    except requests.Timeout as exc:\n        raise self.retry(exc=exc)\n```"),
    ("Django: Migrations", "Run `python manage.py makemigrations` and then `migrate` to apply model changes to the "
     "database schema."),
    ("Milvus: Indexes", "Milvus stores vectors in collections; create an HNSW index on the vector field before loading "
     "the collection."),
    ("Baking bread", "Preheat the oven to 220 degrees, shape the dough into a round loaf and bake it for forty "
     "minutes."),
    ("Football report", "The home team scored twice in the second half and won the league title on the final day."),
    ("Plant care", "Water succulents sparingly: once every two weeks in summer and once a month in winter."),
    ("Git: Stashing", "`git stash` saves uncommitted changes so you can switch branches with a clean working tree."),
]
# (query, index of the passage that answers it)
QUESTIONS = [
    ("How do I retry a failed Celery task?", 0),
    ("run a task after a 10 second delay with apply_async", 1),
    ("where are task results stored in redis", 4),
]
UNRELATED = (8, 9, 10)


@pytest.fixture(scope="module")
def embedded() -> tuple[list[Passage], dict[str, list[float]]]:
    """The corpus with stored vectors (as indexing writes them) and each question's query vector."""
    embedder = LocalMiniLMEmbedder()
    vectors = embedder.embed_documents([text for _, text in CORPUS])
    passages = [Passage(text=text, title=title, vector=tuple(vector))
                for (title, text), vector in zip(CORPUS, vectors, strict=True)]
    return passages, {question: embedder.embed_query(question) for question, _ in QUESTIONS}


@pytest.fixture(params=["local", "http"])
def reranker(request: pytest.FixtureRequest) -> Reranker:
    if request.param == "local":
        return LocalFusionReranker()
    found: Reranker = request.getfixturevalue("tei_reranker")
    return found


def _rerank(reranker: Reranker, embedded: tuple[list[Passage], dict[str, list[float]]], question: str,
            top_k: int | None = None) -> list[tuple[int, float]]:
    passages, query_vectors = embedded
    results = reranker.rerank(question, passages, query_vector=query_vectors[question], top_k=top_k)
    return [(result.index, result.score) for result in results]


def test_results_are_sorted_scored_in_unit_interval_and_index_the_input(
    reranker: Reranker, embedded: tuple[list[Passage], dict[str, list[float]]]
) -> None:
    ranked = _rerank(reranker, embedded, QUESTIONS[0][0])
    scores = [score for _, score in ranked]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= score <= 1.0 for score in scores)
    indexes = [index for index, _ in ranked]
    assert len(set(indexes)) == len(indexes) == len(CORPUS)
    assert set(indexes) <= set(range(len(CORPUS)))


@pytest.mark.parametrize("top_k", [1, 3])
def test_top_k_keeps_the_best_results(
    reranker: Reranker, embedded: tuple[list[Passage], dict[str, list[float]]], top_k: int
) -> None:
    full = _rerank(reranker, embedded, QUESTIONS[1][0])
    assert _rerank(reranker, embedded, QUESTIONS[1][0], top_k=top_k) == full[:top_k]


def test_no_passages_give_no_results(reranker: Reranker) -> None:
    assert reranker.rerank("anything", []) == []


@pytest.mark.parametrize(("question", "answer"), QUESTIONS)
def test_the_passage_that_answers_ranks_first(
    reranker: Reranker, embedded: tuple[list[Passage], dict[str, list[float]]], question: str, answer: int
) -> None:
    assert _rerank(reranker, embedded, question)[0][0] == answer


def test_name_says_what_scored(reranker: Reranker) -> None:
    assert reranker.name in {"local-fusion", "http:fake-reranker"}


# --- HTTP (TEI) adapter -------------------------------------------------------------------------------------------


def _passages(*texts: str) -> list[Passage]:
    return [Passage(text=text) for text in texts]


def test_http_sends_the_tei_request(tei_fake: TeiFake) -> None:
    reranker = HttpReranker(base_url=tei_fake.base_url + "/", api_key="sk-test", model="bge")
    reranker.rerank("celery retry", [Passage(text="retry a task", title="Celery"), Passage(text="bread")])
    (request,) = tei_fake.requests
    assert (request.method, request.path) == ("POST", "/rerank")
    assert request.json() == {"query": "celery retry", "texts": ["Celery\n\nretry a task", "bread"],
                              "raw_scores": False, "truncate": True}
    assert request.headers["authorization"] == "Bearer sk-test"


def test_http_scores_are_the_servers_mapped_by_index(tei_reranker: HttpReranker) -> None:
    texts = ("nothing relevant", "celery task retry", "celery only")
    results = tei_reranker.rerank("celery task retry", _passages(*texts))
    assert [(r.index, r.score) for r in results] == [(1, 1.0), (2, overlap_score("celery task retry", texts[2])),
                                                     (0, 0.0)]


def test_http_retries_503_then_succeeds(tei_fake: TeiFake, tei_reranker: HttpReranker) -> None:
    tei_fake.fail_next(503, 503)
    results = tei_reranker.rerank("celery", _passages("celery", "bread"))
    assert [r.index for r in results] == [0, 1]
    assert len(tei_fake.requests) == 3


def test_http_429_is_retried(tei_fake: TeiFake, tei_reranker: HttpReranker) -> None:
    tei_fake.fail_next(429)
    assert tei_reranker.rerank("celery", _passages("celery"))[0].index == 0
    assert len(tei_fake.requests) == 2


def test_http_gives_up_after_max_retries_with_a_transient_error(tei_fake: TeiFake, tei_reranker: HttpReranker) -> None:
    tei_fake.fail_next(*[500] * (TEST_MAX_RETRIES + 1))
    with pytest.raises(TransientServiceError, match="HTTP 500"):
        tei_reranker.rerank("celery", _passages("celery"))
    assert len(tei_fake.requests) == TEST_MAX_RETRIES + 1


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_http_4xx_is_permanent_and_not_retried(tei_fake: TeiFake, tei_reranker: HttpReranker, status: int) -> None:
    tei_fake.fail_next(status)
    with pytest.raises(PermanentServiceError, match=f"HTTP {status}"):
        tei_reranker.rerank("celery", _passages("celery"))
    assert len(tei_fake.requests) == 1


def test_http_timeout_is_retried(tei_fake: TeiFake) -> None:
    reranker = HttpReranker(base_url=tei_fake.base_url, timeout=0.2, max_retries=1, backoff_base=0.01)
    tei_fake.delay_next(0.6)
    assert reranker.rerank("celery", _passages("celery"))[0].score == 1.0
    assert len(tei_fake.requests) == 2


def test_http_unreachable_server_is_transient() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    reranker = HttpReranker(base_url=f"http://127.0.0.1:{port}", max_retries=1, backoff_base=0.01)
    with pytest.raises(TransientServiceError, match="cannot be reached"):
        reranker.rerank("celery", _passages("celery"))
    assert reranker.name == "http:127.0.0.1"


@pytest.mark.parametrize("base_url", ["", "tei:8080", "ftp://tei"])
def test_http_needs_an_http_base_url(base_url: str) -> None:
    with pytest.raises(PermanentServiceError, match="base URL"):
        HttpReranker(base_url=base_url)


def test_http_logits_are_mapped_through_a_sigmoid(tei_fake: TeiFake, tei_reranker: HttpReranker) -> None:
    tei_fake.style = "logits"
    texts = ("celery task retry", "celery only", "bread")
    results = tei_reranker.rerank("celery task retry", _passages(*texts))
    assert [r.index for r in results] == [0, 1, 2]
    for result in results:
        expected = 1 / (1 + math.exp(-logit(overlap_score("celery task retry", texts[result.index]))))
        assert result.score == pytest.approx(expected)
        assert 0.0 < result.score < 1.0


def test_http_accepts_cohere_style_replies(tei_fake: TeiFake, tei_reranker: HttpReranker) -> None:
    tei_fake.style = "cohere"
    results = tei_reranker.rerank("celery task", _passages("bread", "celery task", "celery"))
    assert [(r.index, r.score) for r in results] == [(1, 1.0), (2, 0.5), (0, 0.0)]


def test_http_unusable_reply_is_transient(tei_fake: TeiFake, tei_reranker: HttpReranker) -> None:
    tei_fake.style = "garbage"
    with pytest.raises(TransientServiceError, match="unusable reply"):
        tei_reranker.rerank("celery", _passages("celery"))


def test_http_batches_over_max_batch_and_keeps_global_indexes(tei_fake: TeiFake) -> None:
    passages = _passages(*(f"text {n}" for n in range(11)), "celery task")
    batched = HttpReranker(base_url=tei_fake.base_url, max_batch=5).rerank("celery task", passages, top_k=1)
    assert [len(request.json()["texts"]) for request in tei_fake.requests] == [5, 5, 2]
    assert batched[0].index == 11


# --- local fusion reranker ------------------------------------------------------------------------------------------


def test_tokenizer_splits_code_identifiers() -> None:
    assert tokenize("apply_async") == tokenize("apply async") == ["apply", "async"]
    assert tokenize("applyAsync HTTPServer") == ["apply", "async", "http", "server"]
    assert tokenize("celery.app.task") == ["celery", "app", "task"]
    assert query_terms("How do I use apply_async?") == ["apply", "async"]


def test_numbers_are_query_terms_whatever_their_length() -> None:
    assert query_terms("What does exit code 2 mean?") == ["exit", "cod", "2", "mean"]
    assert query_terms("Is it's plan a?") == ["plan"]  # single letters still go


def test_the_number_tells_the_answering_passage_from_its_neighbours() -> None:
    """The other exit code's passage is nearer in embedding space (as MiniLM puts it); the "2" outweighs that."""
    near, answering = (0.9, math.sqrt(1 - 0.81)), (0.8, 0.6)
    passages = [Passage(text="The command stops with exit code 1 when a job fails.", vector=near),
                Passage(text="The command stops with exit code 2 when its arguments are wrong.", vector=answering)]
    ranked = LocalFusionReranker().rerank("What does exit code 2 mean?", passages, query_vector=(1.0, 0.0))
    assert ranked[0].index == 1


def test_the_rare_word_of_a_long_question_outweighs_the_words_every_passage_shares() -> None:
    """Same vectors: one passage repeats three of the question's common words, the other holds its one telling
    word. Counted equally, three words beat one; weighted by rarity among the candidates, the telling one wins."""
    common = [f"The page shows the error text {n}." for n in range(6)]
    question = "The page shows an error text and the session cookie is silently dropped"
    passages = [Passage(text=text, vector=(1.0, 0.0)) for text in common]
    passages.append(Passage(text="A message too large for the cookie is dropped silently.", vector=(1.0, 0.0)))
    ranked = LocalFusionReranker().rerank(question, passages, query_vector=(1.0, 0.0))
    assert ranked[0].index == len(common)


def test_identifier_in_the_passage_matches_plain_words_in_the_query() -> None:
    passages = _passages("Call the method to schedule work.", "Call `task.apply_async(countdown=5)` to schedule work.")
    assert LocalFusionReranker().rerank("apply async countdown", passages)[0].index == 1


def test_title_match_adds_to_the_score() -> None:
    text = "Set the option and restart the worker."
    passages = [Passage(text=text, title="Django admin"), Passage(text=text, title="Celery time limits")]
    first, second = LocalFusionReranker().rerank("celery time limits", passages)
    assert first.index == 1 and first.score > second.score


def test_local_works_without_vectors() -> None:
    passages = [Passage(text=text, title=title) for title, text in CORPUS]
    for question, answer in QUESTIONS:
        assert LocalFusionReranker().rerank(question, passages)[0].index == answer


def test_local_scores_are_calibrated(embedded: tuple[list[Passage], dict[str, list[float]]]) -> None:
    """An absolute threshold means something: unrelated passages score well below 0.3, answers above 0.6."""
    for question, answer in QUESTIONS:
        scores = dict(_rerank(LocalFusionReranker(), embedded, question))
        assert scores[answer] > 0.6
        assert max(scores[index] for index in UNRELATED) < 0.2


def test_local_is_deterministic(embedded: tuple[list[Passage], dict[str, list[float]]]) -> None:
    question = QUESTIONS[0][0]
    assert _rerank(LocalFusionReranker(), embedded, question) == _rerank(LocalFusionReranker(), embedded, question)


def test_local_never_embeds_by_construction(embedded: tuple[list[Passage], dict[str, list[float]]]) -> None:
    """It takes no embedder and imports no model runtime, so it cannot embed (speed: bench/rerank_quality.py)."""
    assert list(inspect.signature(LocalFusionReranker).parameters) == ["weights"]
    modules = {value.__name__ for value in vars(rerank_local).values() if isinstance(value, ModuleType)}
    assert not {name for name in modules if name.startswith(("backend.adapters", "onnxruntime", "tokenizers"))}
    passages, query_vectors = embedded
    question = QUESTIONS[0][0]
    assert len(LocalFusionReranker().rerank(question, passages * 2, query_vector=query_vectors[question])) == 24


def test_local_rejects_vectors_of_another_dimension() -> None:
    with pytest.raises(ValueError, match="dimensions"):
        LocalFusionReranker().rerank("q", [Passage(text="t", vector=(1.0, 0.0))], query_vector=[1.0, 0.0, 0.0])


def test_first_stage_score_is_used_only_when_weighted() -> None:
    passages = [Passage(text="same text", first_stage_score=0.01), Passage(text="same text", first_stage_score=0.02)]
    assert LocalFusionReranker().rerank("text", passages)[0].index == 0
    weighted = LocalFusionReranker(replace(FusionWeights(), first_stage=2.0))
    assert weighted.rerank("text", passages)[0].index == 1
