"""ChatModel for Google's Gemini API via the google-genai SDK (plain, JSON, streamed and tool-calling answers)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

from google.genai import errors as genai_errors
from google.genai import types

from backend.adapters.llm.gemini_common import (
    VENDOR_ERRORS,
    GeminiClient,
    call_with_retries,
    translate_error,
)
from backend.adapters.llm.gemini_tools import SignatureStore, function_tools, read_tool_calls, to_tool_contents
from backend.adapters.llm.listing import MAX_MODEL_IDS, MAX_PAGES, bounded, listing_policy, listing_timeout
from backend.adapters.llm.structured import InvalidStructuredReply, json_object
from backend.adapters.retry import RetryPolicy
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import (
    CancelToken,
    Completion,
    Flow,
    JsonCompletion,
    Message,
    Role,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolMessage,
    ToolSpec,
    ToolTurn,
    Usage,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

_GEMINI_ROLES = {Role.USER: "user", Role.ASSISTANT: "model"}
# Gemini answers up to 1000 per page (50 by default); a larger page means fewer round trips for the form.
LIST_PAGE_SIZE = 100


class GeminiChatModel:
    """Gemini chat: system messages become the system instruction, assistant turns the "model" role.

    The SDK's own retries are off; 429/5xx/timeouts are retried here with exponential backoff and jitter.
    `thinking_budget` caps the thinking tokens of 2.5-series models, which otherwise count against
    `max_tokens` (0 turns thinking off on models that allow it); None keeps the model's default.
    Tool steps keep the thought signature Gemini puts on each function call, to send it back with the call.
    """

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "gemini-2.5-flash",
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        thinking_budget: int | None = None,
        list_page_size: int = LIST_PAGE_SIZE,
    ) -> None:
        self._model = model.removeprefix("models/")
        self._client = GeminiClient(api_key=api_key, base_url=base_url, timeout=timeout)
        self._policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max)
        self._thinking_budget = thinking_budget
        self._timeout = timeout
        self._list_page_size = list_page_size
        self._signatures = SignatureStore()

    @property
    def model(self) -> str:
        return self._model

    def complete(self, messages: Sequence[Message], *, max_tokens: int, flow: Flow) -> Completion:
        system, contents = to_gemini_contents(messages)
        config = self._config(system, max_tokens)
        started = time.monotonic()
        response = self._call(lambda: self._generate(contents, config), flow)
        usage = self._usage(response.usage_metadata, flow)
        self._log(flow, usage, started)
        return Completion(text=response_text(response), usage=usage)

    def complete_json(
        self, messages: Sequence[Message], *, schema: dict[str, Any], schema_name: str, max_tokens: int, flow: Flow
    ) -> JsonCompletion:
        system, contents = to_gemini_contents(messages)
        config = self._config(system, max_tokens, schema=schema)

        def attempt() -> tuple[dict[str, Any], types.GenerateContentResponse]:
            response = self._generate(contents, config)
            return parse_json_object(response_text(response), schema, schema_name), response

        started = time.monotonic()
        data, response = self._call(attempt, flow)
        usage = self._usage(response.usage_metadata, flow)
        self._log(flow, usage, started)
        return JsonCompletion(data=data, usage=usage)

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int, flow: Flow, cancel: CancelToken | None = None
    ) -> Iterator[StreamEvent]:
        system, contents = to_gemini_contents(messages)
        config = self._config(system, max_tokens)
        if cancel is not None and cancel.cancelled:
            return
        started = time.monotonic()
        # Only opening the stream (up to its first chunk) is retried: after text went out, a retry would repeat it.
        chunks, first = self._call(lambda: self._open_stream(contents, config), flow)
        try:
            usage = yield from self._relay(chunks, first, flow, cancel)
        finally:
            # Closing the SDK generator closes the HTTP response, also when our consumer abandons us.
            _close(chunks)
        if usage is None:
            logger.debug("gemini stream cancelled flow=%s model=%s", flow.value, self.model)
            return
        self._log(flow, usage, started)
        yield usage

    def complete_tools(self, messages: Sequence[ToolMessage], tools: Sequence[ToolSpec], *, max_tokens: int,
                       flow: Flow) -> ToolTurn:
        """One non-streamed step with the tools declared as functions; the model decides whether to call (AUTO)."""
        system, contents = to_tool_contents(messages, self._signatures)
        config = self._config(system, max_tokens, tools=function_tools(tools))

        def attempt() -> tuple[tuple[ToolCall, ...], types.GenerateContentResponse]:
            response = self._generate(contents, config)
            calls, signatures = read_tool_calls(response)
            self._signatures.remember(signatures)
            return calls, response

        started = time.monotonic()
        calls, response = self._call(attempt, flow)
        usage = self._usage(response.usage_metadata, flow)
        self._log(flow, usage, started)
        return ToolTurn(text=response_text(response), calls=calls, usage=usage)

    def available_models(self) -> list[str]:
        """models.list page by page: ids without "models/", only models that can generateContent."""
        ids: list[str] = []
        token: str | None = None
        for _ in range(MAX_PAGES):
            # Each page is retried on its own, so a hiccup on page 3 does not fetch pages 1-2 again.
            page, token = call_with_retries(partial(self._list_page, token), policy=listing_policy(self._policy),
                                            model=self.model, what="model list")
            ids += page
            if not token or len(ids) >= MAX_MODEL_IDS:
                break
        return bounded(ids)

    def _list_page(self, token: str | None) -> tuple[list[str], str | None]:
        """One page of chat model ids and the token of the next page (None after the last)."""
        http_options = types.HttpOptions(timeout=max(1, round(listing_timeout(self._timeout) * 1000)))
        config = types.ListModelsConfig(page_size=self._list_page_size, page_token=token, query_base=True,
                                        http_options=http_options)
        try:
            pager = self._client.get().models.list(config=config)
        except genai_errors.APIError as exc:
            if exc.code != 404:
                raise
            # Not "unknown model": a proxy in front of Gemini may not forward the list.
            raise PermanentServiceError(f"The Gemini endpoint does not list its models (HTTP 404): "
                                        f"{exc.message or ''}".rstrip(": ")) from exc
        ids = [_chat_model_id(model) for model in pager.page if _chats(model)]
        next_token = pager.config.get("page_token")
        return ids, next_token if isinstance(next_token, str) and next_token else None

    def _relay(
        self,
        chunks: Iterator[types.GenerateContentResponse],
        first: types.GenerateContentResponse | None,
        flow: Flow,
        cancel: CancelToken | None,
    ) -> Generator[TextDelta, None, Usage | None]:
        """Deltas from the SDK stream; returns the usage of the last chunk carrying it, or None once cancelled."""
        chunk, metadata, finished = first, None, False
        while chunk is not None:
            metadata = chunk.usage_metadata or metadata
            finished = finished or _finish_reason(chunk) is not None
            text = response_text(chunk)
            if text:
                yield TextDelta(text)
            if cancel is not None and cancel.cancelled:
                return None
            chunk = self._next_chunk(chunks)
        if not finished:
            # Without a finish reason the connection dropped mid-answer; the text is incomplete.
            raise TransientServiceError("Gemini ended the stream before the answer finished")
        return self._usage(metadata, flow)

    def _next_chunk(self, chunks: Iterator[types.GenerateContentResponse]) -> types.GenerateContentResponse | None:
        try:
            return next(chunks, None)
        except VENDOR_ERRORS as exc:
            raise translate_error(exc, model=self.model) from exc

    def _open_stream(
        self, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> tuple[Iterator[types.GenerateContentResponse], types.GenerateContentResponse | None]:
        """The SDK stream and its first chunk: the SDK sends the request only when the first chunk is asked for."""
        chunks = self._client.get().models.generate_content_stream(model=self.model, contents=contents, config=config)
        try:
            return chunks, next(chunks, None)
        except BaseException:
            _close(chunks)
            raise

    def _generate(self, contents: list[types.Content], config: types.GenerateContentConfig) -> Any:
        return self._client.get().models.generate_content(model=self.model, contents=contents, config=config)

    def _config(
        self, system: str | None, max_tokens: int, *, schema: dict[str, Any] | None = None,
        tools: types.ToolListUnion | None = None,
    ) -> types.GenerateContentConfig:
        budget = self._thinking_budget
        thinking = None if budget is None else types.ThinkingConfig(thinking_budget=budget)
        return types.GenerateContentConfig(
            system_instruction=system,
            max_output_tokens=max_tokens,
            # response_json_schema takes a plain JSON Schema dict (response_schema wants Google's OpenAPI subset).
            response_mime_type="application/json" if schema is not None else None,
            response_json_schema=schema,
            thinking_config=thinking,
            tools=tools,
            # We run the tools ourselves (complete_tools returns the calls); with AFC off the SDK never calls a
            # function or loops, and it skips AFC's code path and its INFO log line on every call.
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    def _call(self, operation: Callable[[], T], flow: Flow) -> T:
        return call_with_retries(operation, policy=self._policy, model=self.model,
                                 what=f"generateContent ({flow.value})")

    def _usage(self, metadata: types.GenerateContentResponseUsageMetadata | None, flow: Flow) -> Usage:
        if metadata is None:
            return Usage(model=self.model, flow=flow)
        return Usage(
            model=self.model,
            flow=flow,
            prompt_tokens=metadata.prompt_token_count or 0,
            # Thinking tokens are billed as output, so cost accounting counts them as completion tokens.
            completion_tokens=(metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0),
            cached_prompt_tokens=metadata.cached_content_token_count or 0,
        )

    def _log(self, flow: Flow, usage: Usage, started: float) -> None:
        logger.debug(
            "gemini chat flow=%s model=%s prompt_tokens=%d completion_tokens=%d cached_tokens=%d latency_ms=%d",
            flow.value, self.model, usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens,
            (time.monotonic() - started) * 1000,
        )


def to_gemini_contents(messages: Sequence[Message]) -> tuple[str | None, list[types.Content]]:
    """(system instruction, conversation): system messages are joined; assistant turns get Gemini's "model" role."""
    system = [m.content for m in messages if Role(m.role) is Role.SYSTEM]
    contents = [
        types.Content(role=_GEMINI_ROLES[Role(m.role)], parts=[types.Part(text=m.content)])
        for m in messages
        if Role(m.role) is not Role.SYSTEM
    ]
    if not contents:
        raise ValueError("Gemini needs at least one user or assistant message besides the system instruction")
    return "\n\n".join(system) or None, contents


def response_text(response: types.GenerateContentResponse) -> str:
    """Text parts of the first candidate, without thoughts; PermanentServiceError if Gemini blocked the prompt."""
    feedback = response.prompt_feedback
    if not response.candidates and feedback is not None and feedback.block_reason is not None:
        reason = getattr(feedback.block_reason, "value", feedback.block_reason)
        raise PermanentServiceError(f"Gemini blocked the prompt ({reason})")
    if not response.candidates or response.candidates[0].content is None:
        return ""
    parts = response.candidates[0].content.parts or []
    return "".join(part.text for part in parts if part.text and not part.thought)


def parse_json_object(text: str, schema: dict[str, Any], schema_name: str) -> dict[str, Any]:
    """The reply as a JSON object holding every required key; TransientServiceError otherwise (retried)."""
    try:
        return json_object(text, schema)
    except InvalidStructuredReply as exc:
        raise TransientServiceError(f"Gemini's reply for '{schema_name}' is unusable: {exc}") from exc


def _chats(model: types.Model) -> bool:
    """Whether the listed model can answer: it has a name and, when its methods are given, generateContent."""
    methods = model.supported_actions
    return bool(model.name) and (methods is None or "generateContent" in methods)


def _chat_model_id(model: types.Model) -> str:
    return (model.name or "").removeprefix("models/")


def _close(iterator: Iterator[Any]) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


def _finish_reason(chunk: types.GenerateContentResponse) -> types.FinishReason | None:
    if chunk.candidates:
        return chunk.candidates[0].finish_reason
    # A blocked prompt ends the stream with prompt feedback and no candidates.
    return None if chunk.prompt_feedback is None else types.FinishReason.OTHER
