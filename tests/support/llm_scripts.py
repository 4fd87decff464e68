"""Scripts for the fake LLM servers that answer by request shape, so a test does not depend on the call order."""

from __future__ import annotations

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply


class RelevantScript(ReplyScript):
    """Every context graded relevant; a streamed answer is `answer`, any other completion `other`."""

    def __init__(self, answer: str, *, chunks: int = 3, other: str = "OK") -> None:
        super().__init__()
        self.answer, self.chunks, self.other = answer, chunks, other

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)  # records the request
        if "grades" in (request.json_schema or {}).get("properties", {}):
            return ScriptedReply(json={"grades": [{"id": i, "score": 0.9} for i in range(50)]})
        return ScriptedReply(text=self.answer, chunks=self.chunks) if request.stream else ScriptedReply(text=self.other)


class AgentScript(RelevantScript):
    """RelevantScript for the agentic path too: a request offering tools and holding no result yet calls
    `search` for each of `queries`; one that holds results stops calling tools."""

    def __init__(self, answer: str, queries: tuple[str, ...], **kwargs: object) -> None:
        super().__init__(answer, **kwargs)  # type: ignore[arg-type]
        self.queries = queries

    def next(self, request: RecordedRequest) -> ScriptedReply:
        if not request.tools:
            return super().next(request)
        ReplyScript.next(self, request)  # records the request
        if request.tool_results:
            return ScriptedReply(text="")
        return ScriptedReply(text="", tool_calls=tuple(("search", {"query": q}) for q in self.queries))
