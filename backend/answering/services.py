"""The answer pipeline for one question, as a stream of events: understand → retrieve → grade → generate.

Every stage is timed and the Question row is created up front (its id is the first event) and
completed at the end, so one call carries ids, references, trust score, text and telemetry.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from backend.adapters import registry
from backend.answering import events
from backend.answering.agent_flow import Researched, researched, wants_agent
from backend.answering.citations import CitedText, citations_record, reference_list
from backend.answering.events import AnswerEvent, EventKind
from backend.answering.failures import error_cause, public_error
from backend.answering.grounding import Grounding, ground
from backend.answering.memory import with_memories
from backend.answering.memory_learning import memory_learn_queue
from backend.answering.models import AnswerState, Binge, Question
from backend.answering.selectors import (
    answer_fingerprint,
    cached_answer,
    chat_model_for,
    history_for,
    sources_version,
    thresholds_for,
)
from backend.core import metrics
from backend.core.db import release_connections
from backend.core.errors import (
    AppError,
    Conflict,
    NotFound,
    new_error_id,
)
from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from backend.pipeline.answer_types import (
    AnswerContext,
    AnswerRequest,
    Intent,
    Understanding,
    UnderstandRequest,
)
from backend.pipeline.contexts import Context
from backend.pipeline.errors import ServiceError
from backend.pipeline.llm_types import CancelToken, StreamEvent, TextDelta, Usage
from backend.pipeline.ports import Answerer
from backend.pipeline.pricing import parse_prices, usage_cost
from backend.pipeline.sanitize import StreamNeutraliser
from backend.pipeline.speculation import SpeculativeAnswer, predictor_for
from backend.pipeline.types import SourceKind
from backend.pipeline.understanding import normalise_question, understand_by_rules
from backend.retrieval.services import retrieve

logger = logging.getLogger(__name__)

NOT_COVERED = (
    "I couldn't find this in {guru}'s sources, so I won't guess. Try rephrasing the question, or ask the "
    "maintainers to add a source that covers it."
)


class AnswerCancelled(Exception):
    """The asker went away (the CancelToken is set) before the answer was complete."""


@dataclass(frozen=True)
class AskRequest:
    guru: Guru
    question: str
    channel: str
    session_id: str | None = None
    user: User | AnonymousUser | None = None


def binge_for(*, guru: Guru, session_id: str | None, channel: str, user: User | AnonymousUser | None) -> Binge:
    """The conversation a question continues (any channel holding its id), or a new one."""
    if session_id:
        try:
            return Binge.objects.get(pk=uuid.UUID(str(session_id)), guru=guru)
        except (ValueError, Binge.DoesNotExist) as exc:
            raise NotFound("No conversation with this session id for this guru.") from exc
    owner = user if user is not None and user.is_authenticated else None
    return Binge.objects.create(guru=guru, channel=channel, owner=owner)


def _unique_slug(guru: Guru, binge: Binge, slug: str) -> str:
    taken = set(Question.objects.filter(guru=guru, binge=binge, slug__startswith=slug).values_list("slug", flat=True))
    candidate, n = slug, 1
    while candidate in taken:
        n += 1
        candidate = f"{slug[:190]}-{n}"
    return candidate


@dataclass
class AnswerFlow:
    """Runs one question through the pipeline; `run()` yields its events."""

    request: AskRequest
    cancel: CancelToken = field(default_factory=CancelToken)
    timings: dict[str, int] = field(default_factory=dict)
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    question: Question | None = None
    fingerprint: str = ""
    observe: Callable[[Grounding], None] | None = None
    """Called with the trust step's inputs and decision (evaluation runs read what the answer does not show)."""
    trial: bool = False
    """An evaluation trial: always answered afresh (no cached replay) and never listed as a gap."""

    def _time(self, stage: str, since: float) -> None:
        self.timings[f"{stage}_ms"] = int((time.perf_counter() - since) * 1000)

    def _record(self, usage: Usage | None) -> None:
        if usage is not None:
            self.usage[usage.flow.value] = {"model": usage.model, "prompt_tokens": usage.prompt_tokens,
                                            "completion_tokens": usage.completion_tokens,
                                            "cached_prompt_tokens": usage.cached_prompt_tokens}

    def _understand(self, binge: Binge, normalized: str) -> Understanding:
        guru = self.request.guru
        history = history_for(binge, turns=settings_get().history_turns)
        understand = UnderstandRequest(normalized, guru.name, guru.domain_knowledge, history)
        if not history:
            # A first question needs no rewrite: rules avoid an LLM round trip before the first token.
            return understand_by_rules(understand)
        understanding, usage = registry.answerer(model=chat_model_for(guru)).understand(understand)
        self._record(usage)
        return understanding

    def _start(self, binge: Binge, understanding: Understanding, normalized: str, version: str) -> Question:
        guru = self.request.guru
        parent = binge.questions.order_by("-created_at").first()
        for _ in range(3):
            try:
                with transaction.atomic():
                    question = Question.objects.create(
                        guru=guru, binge=binge, parent=parent, user=self._user(), user_question=normalized,
                        question=understanding.prettified[:500], channel=self.request.channel,
                        slug=_unique_slug(guru, binge, understanding.slug), intent=understanding.intent.value,
                        answer_length=understanding.answer_length.value, sources_version=version,
                        state=AnswerState.PENDING)
                break
            except IntegrityError:
                continue  # a concurrent question took the slug; pick the next one
        else:
            raise Conflict("Could not record the question; please retry.")
        if binge.root_question_id is None:
            Binge.objects.filter(pk=binge.pk).update(root_question=question)
        return question

    def _user(self) -> User | None:
        user = self.request.user
        return user if user is not None and user.is_authenticated else None

    def run(self) -> Iterator[AnswerEvent]:
        guru, start = self.request.guru, time.perf_counter()
        normalized = normalise_question(self.request.question)
        binge = binge_for(guru=guru, session_id=self.request.session_id, channel=self.request.channel,
                          user=self.request.user)
        version, self.fingerprint = sources_version(guru), answer_fingerprint(guru)
        understanding = self._understand(binge, normalized)
        self._time("understand", start)
        question = self.question = self._start(binge, understanding, normalized, version)
        yield AnswerEvent(EventKind.QUESTION, {"question_id": question.pk, "slug": question.slug,
                                               "session_id": str(binge.pk), "question": question.question})
        if understanding.intent is not Intent.QUESTION:
            yield events.delta(understanding.reply)
            yield self.finish(question, content=understanding.reply, references=[], trust=None,
                              out_of_context=understanding.intent is Intent.INVALID)
            return
        cached = cached_answer(guru, normalized_question=normalized, version=version, fingerprint=self.fingerprint) \
            if question.parent_id is None and not self.trial else None
        if cached is not None and cached.pk != question.pk:
            yield from self._replay(question, cached)
            return
        yield from self._answer(question, understanding)

    def _replay(self, question: Question, cached: Question) -> Iterator[AnswerEvent]:
        """The same question about the same sources: the stored answer, without any model call."""
        self.timings["cache_hit"] = 1
        yield AnswerEvent(EventKind.REFERENCES, {"references": cached.references, "trust_score": cached.trust_score})
        yield events.delta(cached.content)
        yield self.finish(question, content=cached.content, references=cached.references,
                          trust=cached.trust_score, out_of_context=False)

    def _answer(self, question: Question, understanding: Understanding) -> Iterator[AnswerEvent]:
        guru = self.request.guru
        rerank_threshold, trust_threshold = thresholds_for(guru)
        yield events.status("retrieving")
        start = time.perf_counter()
        retrieval = retrieve(guru=guru, query=understanding.retrieval_query, rerank_threshold=rerank_threshold)
        retrieval = with_memories(guru, understanding.retrieval_query, retrieval, rerank_threshold=rerank_threshold)
        self.timings.update(retrieval.timings)
        self._time("retrieve", start)
        yield events.status("grading")
        start = time.perf_counter()
        answerer = registry.answerer(model=chat_model_for(guru))
        ahead = self._speculate(answerer, question, understanding, retrieval.contexts, trust_threshold)
        release_connections()  # the grade and the answer wait on the model: no connection is held meanwhile
        try:
            grounding, usage = ground(answerer, question.question, retrieval, guru_id=guru.pk,
                                     query=understanding.retrieval_query, threshold=trust_threshold)
            self._record(usage)
            self._time("grade", start)
            if wants_agent(guru, understanding.retrieval_query, uses_llm=answerer.uses_llm,
                           supported=bool(grounding.decision.kept)):
                self._released(ahead, ())  # made for the simple path's contexts, which the research replaces
                ahead = None
                grounding = yield from self._research(question, understanding, answerer, grounding)
            decision = grounding.decision
            if self.observe is not None:
                self.observe(grounding)
            if not decision.kept:
                yield from self._refuse(question, ahead)
                return
            kept = grounding.kept
            references = reference_list(kept, retrieval.private_sources)
            trust = round(decision.trust_score, 4)
            yield AnswerEvent(EventKind.REFERENCES, {"references": references, "trust_score": trust})
            yield events.status("generating")
            released = self._released(ahead, decision.kept)
            stream = released.events() if released else answerer.answer(
                self._answer_request(question, understanding, kept), cancel=self.cancel)
            release_connections()
            cited = CitedText(references, trust)
            yield from self._generate(stream, cited)
            yield self.finish(question, content=cited.text, references=cited.references, trust=trust,
                              out_of_context=False)
        finally:
            if ahead is not None:
                ahead.cancel()  # a no-op once its stream has ended; stops it on any error or hang-up

    def _research(self, question: Question, understanding: Understanding, answerer: Answerer,
                  simple: Grounding) -> Generator[AnswerEvent, None, Grounding]:
        """Research (steps streamed), graded like the simple path; the simple path's grounding if nothing was read."""
        start, outcome = time.perf_counter(), None
        for item in researched(self.request.guru, question.question, query=understanding.retrieval_query,
                               answerer=answerer, chat_model=chat_model_for(self.request.guru),
                               thresholds=thresholds_for(self.request.guru), cancel=self.cancel):
            if isinstance(item, Researched):
                outcome = item
            else:
                yield item
        self._time("research", start)
        if outcome is None:
            return simple
        self._record(outcome.usage)
        self.timings["agent_steps"] = outcome.steps
        return outcome.grounding or simple

    def _refuse(self, question: Question, ahead: SpeculativeAnswer | None) -> Iterator[AnswerEvent]:
        self._released(ahead, ())  # the trust gate said no: the answer made ahead is never shown
        text = NOT_COVERED.format(guru=self.request.guru.name)
        yield AnswerEvent(EventKind.REFERENCES, {"references": [], "trust_score": 0.0})
        yield events.delta(text)
        yield self.finish(question, content=text, references=[], trust=0.0, out_of_context=True)

    def _speculate(self, answerer: Answerer, question: Question, understanding: Understanding,
                   contexts: list[Context], threshold: float) -> SpeculativeAnswer | None:
        """Start the answer beside the grade, from the contexts the grade is predicted to keep (see speculation)."""
        if not contexts or not answerer.uses_llm or self.cancel.cancelled:
            return None  # the offline answerer grades and answers without a model: nothing to overlap
        predictor, priors = predictor_for(chat_model_for(self.request.guru)), [c.score for c in contexts]
        kept = predictor.predict(priors, threshold=threshold)
        request = self._answer_request(question, understanding, [contexts[i] for i in kept])
        return SpeculativeAnswer(answerer, request, kept, parent=self.cancel,
                                 learn=lambda graded: predictor.learn(priors, threshold=threshold, kept=graded))

    def _released(self, ahead: SpeculativeAnswer | None, kept: tuple[int, ...]) -> SpeculativeAnswer | None:
        """The answer made ahead if the grade kept exactly its contexts; otherwise it is cancelled."""
        if ahead is None:
            return None
        released = ahead.settle(kept)
        self.timings["speculative_answer" if released else "speculation_discarded"] = 1
        return ahead if released else None

    def _answer_request(self, question: Question, understanding: Understanding,
                        contexts: list[Context]) -> AnswerRequest:
        guru = self.request.guru
        return AnswerRequest(
            question=question.question, guru_name=guru.name, domain=guru.domain_knowledge,
            contexts=tuple(AnswerContext(n, c.title, c.text, c.link, whole=c.kind is SourceKind.MEMORY)
                           for n, c in enumerate(contexts, start=1)),
            history=history_for(question.binge, turns=settings_get().history_turns) if question.binge else (),
            answer_length=understanding.answer_length, language_hint=guru.language)

    def _generate(self, stream: Iterator[StreamEvent], cited: CitedText) -> Iterator[AnswerEvent]:
        start = time.perf_counter()
        # Model output is markdown that API clients, Slack, Discord and widgets render: defused as it streams.
        neutraliser, first = StreamNeutraliser(), True
        for event in stream:
            if isinstance(event, TextDelta):
                if first:
                    self._time("first_token", self.started)
                    first = False
                # Markers are renumbered as they stream (see CitedText): the streamed text is the stored one.
                yield from cited.feed(neutraliser.feed(event.text))
            else:
                self._record(event)
        yield from cited.feed(neutraliser.finish(), final=True)
        self._time("generate", start)

    def finish(self, question: Question, *, content: str, references: list[dict[str, Any]], trust: float | None,
               out_of_context: bool) -> AnswerEvent:
        """Complete the Question row and build the `done` event."""
        if self.cancel.cancelled:
            # The model stream stops early on cancel and returns what it had: that text is not an answer.
            raise AnswerCancelled(f"The client went away; {len(content)} characters of the answer had been made.")
        self.timings["total_ms"] = int((time.perf_counter() - self.started) * 1000)
        Question.objects.filter(pk=question.pk).update(
            state=AnswerState.COMPLETE, answer_fingerprint=self.fingerprint,
            content=content, references=references, trust_score=trust, out_of_context=out_of_context,
            usage=self.usage, timings=self.timings, latency_ms=self.timings["total_ms"], updated_at=timezone.now(),
            cost_usd=usage_cost(self.usage, parse_prices(settings.OPENGURU_MODEL_PRICES)))
        metrics.answer_finished(state=AnswerState.COMPLETE, channel=self.request.channel, usage=self.usage)
        if question.binge_id is not None:  # always set by this flow; the column is nullable
            Binge.objects.filter(pk=question.binge_id).update(last_used_at=timezone.now())
        citations_record(question, references)
        if not out_of_context and not self.trial:
            memory_learn_queue(question)
        if out_of_context and not self.trial:
            question_id = question.pk
            transaction.on_commit(lambda: _embed_later(question_id))
        return AnswerEvent(EventKind.DONE, {
            "question_id": question.pk, "trust_score": trust, "references": references,
            "out_of_context": out_of_context, "usage": self.usage, "timings": self.timings})


def _embed_later(question_id: int) -> None:
    """Vector for the gaps page, computed by the worker so the asker never waits for it."""
    from backend.answering.tasks import question_embed

    try:
        question_embed.delay(question_id=question_id)
    except (OperationalError, ServiceError) as exc:
        # The gaps page embeds whatever is missing itself; a lost job must not spoil the answer.
        logger.warning("could not queue the embedding of question %s: %s", question_id, exc)


def answer_stream(request: AskRequest, *, cancel: CancelToken | None = None,
                  observe: Callable[[Grounding], None] | None = None, trial: bool = False) -> Iterator[AnswerEvent]:
    """Answer one question as events; errors become an `error` event, never an exception mid-stream."""
    flow = AnswerFlow(request, cancel=cancel or CancelToken(), observe=observe, trial=trial)
    try:
        yield from flow.run()
    except GeneratorExit:
        # The consumer stopped reading (the client hung up): whatever was produced is not an answer.
        flow_abandon(flow, AnswerState.CANCELLED, "cancelled", "The stream was closed before the answer was complete.")
        raise
    except AnswerCancelled as exc:
        flow_abandon(flow, AnswerState.CANCELLED, "cancelled", str(exc))
    except Exception as exc:  # the stream boundary: every failure becomes a safe, recorded `error` event
        yield _failure(flow, exc)


def _failure(flow: AnswerFlow, exc: Exception) -> AnswerEvent:
    """Log the cause under a fresh error id, record it on the question, and build the safe `error` event."""
    public, error_id = public_error(exc), new_error_id()
    guru = flow.request.guru.slug
    if isinstance(exc, AppError):
        logger.info("answer for guru %s refused (%s, error id %s): %s", guru, exc.code, error_id, exc.detail)
    elif isinstance(exc, ServiceError):
        logger.warning("answer for guru %s failed (%s, error id %s): %s", guru, public.code, error_id, exc,
                       exc_info=exc)
    else:
        logger.error("answer for guru %s crashed (error id %s)", guru, error_id, exc_info=exc)
    try:
        flow_abandon(flow, AnswerState.FAILED, public.code, error_cause(exc), error_id=error_id)
    except DatabaseError as again:  # the database itself failed: the asker still gets the error event
        logger.warning("could not record the failure of question %s (error id %s): %s",
                       flow.question.pk if flow.question else None, error_id, again)
    return events.error(public.code, public.detail, error_id)


def flow_abandon(flow: AnswerFlow, state: AnswerState, code: str, detail: str, *, error_id: str = "") -> None:
    """Mark the flow's question as not answered (if it was still being answered), with why."""
    if flow.question is None:
        return
    flow.timings["total_ms"] = int((time.perf_counter() - flow.started) * 1000)
    abandoned = Question.objects.filter(pk=flow.question.pk, state=AnswerState.PENDING).update(
        state=state, error_code=code, error_id=error_id, error_detail=detail, content="", trust_score=None,
        usage=flow.usage, timings=flow.timings, latency_ms=flow.timings["total_ms"], updated_at=timezone.now())
    if abandoned:  # counted once: a question already complete or abandoned is not counted again
        metrics.answer_finished(state=state, channel=flow.request.channel, usage=flow.usage)
