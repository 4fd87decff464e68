"""What the MCP tools do, in plain synchronous Django code (the server runs each call in a worker thread)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from backend.answering.access import gurus_for_asker
from backend.answering.citations import reference_list, references_marked
from backend.answering.links import absolute_link, answer_path
from backend.answering.memory import with_memories
from backend.answering.models import Channel, Question
from backend.answering.selectors import thresholds_for
from backend.channels import consumer
from backend.channels.errors import event_error
from backend.channels.mcp.auth import Caller
from backend.channels.request import question_input
from backend.pipeline.understanding import normalise_question
from backend.retrieval.services import retrieve
from backend.sources.selectors import source_get
from backend.sources.summary_reads import guru_summary_read, source_summary_read


class Reference(BaseModel):
    n: int = Field(description="The number the answer cites it by, as [n].")
    title: str
    link: str = Field(description="Empty when the source is private.")


class AskResult(BaseModel):
    guru: str
    answer: str = Field(description="Markdown; [n] cites references[n].")
    references: list[Reference] = Field(description="The sources the answer cites.")
    also_retrieved: list[Reference] = Field(description="Sources retrieved for the answer but not cited.")
    trust_score: int = Field(ge=0, le=100, description="How well the sources support the answer, 0-100.")
    out_of_context: bool = Field(description="True when the guru declined: its sources do not cover the question.")
    session_id: str | None = Field(description="Pass it back as session_id to ask a follow-up in this conversation.")
    question_url: str = Field(description="A page showing this answer (relative to the instance over stdio).")


class Passage(BaseModel):
    n: int
    title: str
    link: str = Field(description="Empty when the source is private.")
    text: str
    score: float = Field(description="The reranker's relevance score, best first.")
    summary: bool = Field(default=False, description="True when the passage is a summary of a source or of the "
                                                     "guru's sources, not text quoted from one.")


class SearchResult(BaseModel):
    guru: str
    results: list[Passage]


class SummarySource(BaseModel):
    id: int
    title: str
    link: str = Field(description="Empty when the source is private.")


class SummaryResult(BaseModel):
    guru: str
    source_id: int | None = Field(description="The source summarised; null for the guru's summary.")
    text: str | None = Field(default=None, description="The summary (plain text or light markdown); null until "
                                                       "it is written (see note).")
    label: str = Field(default="", description="Who wrote it: a model, or an extract of sentences picked from "
                                               "the sources.")
    extractive: bool = Field(default=False, description="True for an extract (no language model wrote it).")
    partial: bool = Field(default=False, description="The summary tree stopped at its token budget before its top.")
    sources: list[SummarySource] = Field(default_factory=list, description="The sources it covers.")
    state: str = Field(description="QUEUED, RUNNING, DONE, OVER_BUDGET, FAILED, or empty when none was built.")
    note: str = Field(description="Why the summary is missing or partial; empty when it is complete.")


class GuruInfo(BaseModel):
    slug: str
    name: str
    domain_knowledge: str


class GuruList(BaseModel):
    gurus: list[GuruInfo]


def _link(caller: Caller, link: str) -> str:
    return absolute_link(caller.request, link) if caller.request is not None else link


def _reference(caller: Caller, ref: dict[str, Any]) -> Reference:
    n = ref.get("n")
    return Reference(n=n if isinstance(n, int) else 0, title=str(ref.get("title", "")),
                     link=_link(caller, str(ref.get("link", ""))))


def ask(caller: Caller, question: str, guru: str | None, session_id: str | None) -> AskResult:
    """One answer through the shared pipeline, on the MCP channel; the answer's error is raised as an AppError."""
    target = caller.guru(guru)
    wanted = question_input({"question": question, "session_id": session_id})
    answer = consumer.ask(consumer.AskRequest(guru=target, question=wanted.question, channel=Channel.MCP,
                                              session_id=wanted.session_id, user=caller.user))
    if answer.error is not None:
        raise event_error({"code": answer.error.code, "msg": answer.error.msg, "error_id": answer.error.error_id})
    stored = Question.objects.select_related("guru").get(pk=answer.question_id)
    marked = references_marked(answer.text, answer.references)
    return AskResult(
        guru=target.slug, answer=answer.text,
        references=[_reference(caller, r) for r in marked if r.get("cited")],
        also_retrieved=[_reference(caller, r) for r in marked if not r.get("cited")],
        trust_score=round((answer.trust_score or 0) * 100), out_of_context=answer.out_of_context,
        session_id=answer.session_id, question_url=_link(caller, answer_path(stored)),
    )


def search(caller: Caller, query: str, guru: str | None, limit: int) -> SearchResult:
    """The guru's best passages for `query` under its own rerank threshold, its maintainers' notes about it first:
    retrieval only, no model call."""
    target = caller.guru(guru)
    text = normalise_question(question_input({"question": query}).question)
    rerank_threshold, _ = thresholds_for(target)
    # A maintainer's approved note about the query comes first, as in an answer.
    found = with_memories(target, text, retrieve(guru=target, query=text, rerank_threshold=rerank_threshold),
                          rerank_threshold=rerank_threshold)
    refs = reference_list(found.contexts, found.private_sources)  # numbered, private links withheld
    results = [Passage(n=int(ref["n"]), title=str(ref["title"]), link=_link(caller, str(ref["link"])),
                       text=context.text, score=float(ref["score"]), summary=context.summary)
               for ref, context in zip(refs, found.contexts, strict=True)]
    return SearchResult(guru=target.slug, results=results[:limit])


def summary(caller: Caller, guru: str | None, source_id: int | None) -> SummaryResult:
    """The guru's summary, or one of its sources' summaries, under the same access rule as search."""
    target = caller.guru(guru)
    read = (source_summary_read(source_get(guru=target, source_id=source_id)) if source_id is not None
            else guru_summary_read(target))
    view, found = read.summary, dict[str, Any]()
    if view is not None:
        found = {"text": view.text, "label": view.label, "extractive": view.extractive, "partial": view.partial,
                 "sources": [SummarySource(id=s.id, title=s.title, link=_link(caller, s.link)) for s in read.sources]}
    return SummaryResult(guru=target.slug, source_id=source_id, state=read.state, note=read.note, **found)


def list_gurus(caller: Caller) -> GuruList:
    """The gurus this caller may ask, by name."""
    return GuruList(gurus=[GuruInfo(slug=g.slug, name=g.name, domain_knowledge=g.domain_knowledge)
                           for g in gurus_for_asker(caller.asker)])
