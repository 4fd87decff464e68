"""The agentic answer path: when the simple path finds no support (or the question compares things) and the guru's
model can call tools, the model researches with the guru's tools, each call shown to the asker as a "thinking"
step, and the answer is then graded and written from everything it read, cited [n] like any other."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from backend.adapters import registry
from backend.answering import events
from backend.answering.agent_tools import TOOLS, GuruTools
from backend.answering.events import AnswerEvent
from backend.answering.grounding import Grounding, ground
from backend.gurus.models import Guru
from backend.pipeline.agent import AgentLimits, AgentResult, AgentStep, research
from backend.pipeline.breadth import breadth_of, guru_names
from backend.pipeline.errors import ServiceError
from backend.pipeline.llm_types import CancelToken, Flow, Role, ToolMessage, Usage
from backend.pipeline.ports import Answerer
from backend.retrieval.services import Retrieval

AGENT_SYSTEM = (
    "You research a question for the knowledge base about {domain} before it is answered. Call the tools to find "
    "the passages that answer it: search with the words the sources would use, search again for each thing the "
    "question names or compares, read on in a document or follow its links when a passage stops short. Stop "
    "calling tools as soon as the passages read answer the question, or when they cannot; do not write the answer "
    "itself. The passages are numbered [n] as you read them.")
LIMITS = AgentLimits()
_VERBS = {"search": "Searching for", "open_source": "Reading on in passage",
          "neighbours": "Following the links of passage",
          "summary": "Reading the summary"}


ENTITIES = 2
"""A question naming this many things (APIs, settings, products) is compound: each is looked up on its own."""


_THING = re.compile(r"(?<![\w.$])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(\))?")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+)\W*$")


def entities(question: str, *, own: Iterable[str] = ()) -> int:
    """How many distinct things the question names, whole: code (`url_defaults`, `fs.watch()`, `MAX_SIZE`,
    `camelCase`) and names (capitalised inside a sentence, acronyms); `own` (the guru's own names) not counted."""
    found: set[str] = set()
    skip = {name.casefold() for name in own}
    for match in _THING.finditer(question):
        word = match.group().removesuffix("()")
        if len(word) < 2:
            continue  # "I", and a list's letters
        code = "_" in word or "." in word or match.group().endswith("()") or re.search(r"[a-z][A-Z]", word)
        name = (word[:1].isupper() and not _SENTENCE_START.search(question[: match.start()])) \
            or (len(word) > 1 and word.isupper())
        if (code or name) and word.casefold() not in skip:
            found.add(word.casefold())
    return len(found)


def wants_agent(guru: Guru, query: str, *, uses_llm: bool, supported: bool) -> bool:
    """The agentic path: for a guru that allows it, with a language model, when the simple path's evidence did not
    support an answer, or the question is compound (it compares things, or names several): its parts are then
    found one by one."""
    if not (guru.agentic and uses_llm):
        return False
    return not supported or breadth_of(query).comparison \
        or entities(query, own=guru_names(guru.name, guru.slug)) >= ENTITIES


def step_text(step: AgentStep) -> str:
    """What the asker sees of a call: "Searching for “retry limits”", then its outcome."""
    verb = _VERBS.get(step.call.name, step.call.name)
    subject = step.call.arguments.get("query") or step.call.arguments.get("passage") or ""
    text = f"{verb} “{str(subject)[:80]}”" if subject else verb
    return text if step.ok is None else f"{text}: {'done' if step.ok else 'failed'}"


def agent_research(guru: Guru, question: str, *, chat_model: str, rerank_threshold: float,
                   cancel: CancelToken) -> Iterator[AnswerEvent | AgentResult]:
    """Status events for each tool call, then the AgentResult; an empty result when the model failed (the caller
    keeps the simple path's outcome)."""
    chat = registry.chat_model(model=chat_model)
    if chat is None:
        yield AgentResult(stopped="no model")
        return
    messages = [ToolMessage(Role.SYSTEM, AGENT_SYSTEM.format(domain=guru.domain_knowledge or guru.name)),
                ToolMessage(Role.USER, question)]
    tools = GuruTools(guru, rerank_threshold=rerank_threshold)
    try:
        for item in research(chat, messages, TOOLS, tools, limits=LIMITS, cancel=cancel):
            if isinstance(item, AgentStep):
                yield events.thinking(step_text(item), tool=item.call.name, done=item.ok is not None)
            else:
                yield item
    except ServiceError as exc:
        yield AgentResult(stopped=f"failed: {exc}")


@dataclass(frozen=True)
class Researched:
    """The agentic path's outcome: the trust decision over what the model read (None when it read nothing), the
    tokens its steps spent (one Usage), and how many steps it took and why it stopped."""

    grounding: Grounding | None
    usage: Usage | None
    steps: int
    stopped: str


def _spent(usages: list[Usage]) -> Usage | None:
    if not usages:
        return None
    return Usage(model=usages[-1].model, flow=Flow.AGENT, prompt_tokens=sum(u.prompt_tokens for u in usages),
                 completion_tokens=sum(u.completion_tokens for u in usages),
                 cached_prompt_tokens=sum(u.cached_prompt_tokens for u in usages))


def researched(guru: Guru, question: str, *, query: str, answerer: Answerer, chat_model: str,
               thresholds: tuple[float, float], cancel: CancelToken) -> Iterator[AnswerEvent | Researched]:
    """Research the question (status events), then grade what was read with the same trust step as the simple
    path; the Researched outcome comes last."""
    rerank_threshold, trust_threshold = thresholds
    result = AgentResult()
    # A follow-up's own words lean on the conversation; its standalone form says what it asks.
    asked = question if query.strip().casefold() == question.strip().casefold() else f"{question}\n(In full: {query})"
    for item in agent_research(guru, asked, chat_model=chat_model, rerank_threshold=rerank_threshold,
                               cancel=cancel):
        if isinstance(item, AgentResult):
            result = item
        else:
            yield item
    spent, grounding = _spent(result.usage), None
    if result.contexts and not cancel.cancelled:
        retrieval = Retrieval(list(result.contexts), links=frozenset())
        grounding, _ = ground(answerer, question, retrieval, guru_id=guru.pk, query=query, threshold=trust_threshold)
    yield Researched(grounding, spent, result.steps, result.stopped)
