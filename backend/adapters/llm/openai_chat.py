"""ChatModel for OpenAI and OpenAI-compatible servers (Ollama, vLLM, LM Studio, OpenRouter) via the openai SDK."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing
from typing import Any, TypeVar

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessage, ChatCompletionMessageParam

from backend.adapters.llm.listing import bounded, listing_policy, listing_timeout
from backend.adapters.llm.openai_common import (
    Endpoint,
    UnusableResponseError,
    call_with_retries,
    make_client,
    resolve_base_url,
    translate_error,
)
from backend.adapters.llm.openai_tools import read_tool_calls, wire_tool_messages, wire_tools
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
    ToolMessage,
    ToolSpec,
    ToolTurn,
    Usage,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")


class OpenAIChatModel:
    """Plain chat completions, structured output via `json_schema`, and SSE streaming with usage."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
    ) -> None:
        self._endpoint = Endpoint(base_url=resolve_base_url(base_url), model=model)
        self._policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max)
        self._client = make_client(api_key=api_key, endpoint=self._endpoint, timeout=timeout)
        self._timeout = timeout
        # OpenAI's reasoning models reject `max_tokens`; many compatible servers only know `max_tokens`.
        self._token_limit_param = "max_completion_tokens" if self._endpoint.is_official else "max_tokens"

    @property
    def model(self) -> str:
        return self._endpoint.model

    def complete(self, messages: Sequence[Message], *, max_tokens: int, flow: Flow) -> Completion:
        def attempt() -> tuple[str, ChatCompletion]:
            response = self._create(messages, max_tokens)
            return _message_content(response) or "", response

        started = time.monotonic()
        text, response = self._call(attempt, flow)
        usage = self._usage(response.usage, flow)
        self._log(flow, usage, started)
        return Completion(text=text, usage=usage)

    def complete_json(
        self, messages: Sequence[Message], *, schema: dict[str, Any], schema_name: str, max_tokens: int, flow: Flow
    ) -> JsonCompletion:
        response_format = {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema,
                                                                   "strict": True}}

        def attempt() -> tuple[dict[str, Any], ChatCompletion]:
            response = self._create(messages, max_tokens, response_format=response_format)
            return _parse_object(_message_content(response), schema), response

        started = time.monotonic()
        data, response = self._call(attempt, flow)
        usage = self._usage(response.usage, flow)
        self._log(flow, usage, started)
        return JsonCompletion(data=data, usage=usage)

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int, flow: Flow, cancel: CancelToken | None = None
    ) -> Iterator[StreamEvent]:
        if cancel is not None and cancel.cancelled:
            return
        started = time.monotonic()
        chunks = self._call(
            lambda: self._create(messages, max_tokens, stream=True, stream_options={"include_usage": True}), flow
        )
        # closing() also runs when the consumer abandons this generator, so the HTTP stream never lingers.
        with closing(chunks):
            usage = yield from self._relay(chunks, flow, cancel)
        if usage is None:
            logger.debug("openai stream cancelled flow=%s model=%s", flow.value, self.model)
            return
        self._log(flow, usage, started)
        yield usage

    def complete_tools(self, messages: Sequence[ToolMessage], tools: Sequence[ToolSpec], *, max_tokens: int,
                       flow: Flow) -> ToolTurn:
        """One non-streamed step; `tool_choice` is left to the model (auto), so it may answer without calling."""
        # The API rejects an empty `tools` array, so a step with nothing to offer sends none.
        options: dict[str, Any] = {"tools": wire_tools(tools)} if tools else {}
        wire = wire_tool_messages(messages)

        def attempt() -> tuple[ChatCompletionMessage, ChatCompletion]:
            response = self._send(wire, max_tokens, **options)
            return _first_message(response), response

        started = time.monotonic()
        message, response = self._call(attempt, flow)
        usage = self._usage(response.usage, flow)
        self._log(flow, usage, started)
        return ToolTurn(text=message.content or "", calls=read_tool_calls(message), usage=usage)

    def available_models(self) -> list[str]:
        """GET /models: the ids the server lists, less the families known not to chat (embeddings, audio, images)."""
        timeout = listing_timeout(self._timeout)

        def attempt() -> list[str]:
            try:
                page = self._client.models.list(timeout=timeout)
            except openai.NotFoundError as exc:
                # Not "unknown model": some OpenAI-compatible servers simply do not implement the list.
                raise PermanentServiceError(
                    f"{self._endpoint.service} does not list its models (HTTP 404 for {self._endpoint.base_url}"
                    "/models)") from exc
            return _model_ids(page)

        return call_with_retries(attempt, policy=listing_policy(self._policy), endpoint=self._endpoint,
                                 what="model list")

    def _relay(
        self, chunks: openai.Stream[ChatCompletionChunk], flow: Flow, cancel: CancelToken | None
    ) -> Generator[TextDelta, None, Usage | None]:
        """Deltas from the SDK stream; returns the usage, or None once cancelled."""
        usage, finished = Usage(model=self.model, flow=flow), False
        try:
            for chunk in chunks:
                if cancel is not None and cancel.cancelled:
                    return None
                if chunk.usage is not None:
                    usage = self._usage(chunk.usage, flow)
                for choice in chunk.choices[:1]:
                    finished = finished or choice.finish_reason is not None
                    if choice.delta.content:
                        yield TextDelta(choice.delta.content)
                        if cancel is not None and cancel.cancelled:
                            return None
        except openai.OpenAIError as exc:
            raise translate_error(exc, self._endpoint) from exc
        except ValueError as exc:  # a chunk that is not JSON, or not a chunk
            raise TransientServiceError(f"{self._endpoint.service} sent a malformed stream: {exc}") from exc
        if not finished:
            # Without a finish_reason the connection dropped mid-answer; the text is incomplete.
            raise TransientServiceError(f"{self._endpoint.service} ended the stream before the answer finished")
        return usage

    def _create(self, messages: Sequence[Message], max_tokens: int, **options: Any) -> Any:
        return self._send([_wire_message(m) for m in messages], max_tokens, **options)

    def _send(self, wire: list[ChatCompletionMessageParam], max_tokens: int, **options: Any) -> Any:
        params: dict[str, Any] = {self._token_limit_param: max_tokens, **options}
        return self._client.chat.completions.create(model=self.model, messages=wire, **params)

    def _call(self, operation: Callable[[], T], flow: Flow) -> T:
        return call_with_retries(operation, policy=self._policy, endpoint=self._endpoint,
                                 what=f"chat completion ({flow.value})")

    def _usage(self, usage: CompletionUsage | None, flow: Flow) -> Usage:
        if usage is None:
            return Usage(model=self.model, flow=flow)
        details = usage.prompt_tokens_details
        return Usage(
            model=self.model,
            flow=flow,
            prompt_tokens=usage.prompt_tokens or 0,
            completion_tokens=usage.completion_tokens or 0,
            cached_prompt_tokens=(details.cached_tokens or 0) if details is not None else 0,
        )

    def _log(self, flow: Flow, usage: Usage, started: float) -> None:
        logger.debug(
            "openai chat flow=%s model=%s prompt_tokens=%d completion_tokens=%d cached_tokens=%d latency_ms=%d",
            flow.value, self.model, usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens,
            (time.monotonic() - started) * 1000,
        )


def _wire_message(message: Message) -> ChatCompletionMessageParam:
    if message.role == Role.SYSTEM:
        return {"role": "system", "content": message.content}
    if message.role == Role.ASSISTANT:
        return {"role": "assistant", "content": message.content}
    return {"role": "user", "content": message.content}


def _message_content(response: ChatCompletion) -> str | None:
    return _first_message(response).content


def _first_message(response: ChatCompletion) -> ChatCompletionMessage:
    if not response.choices:
        raise UnusableResponseError("the reply has no choices")
    return response.choices[0].message


# /models does not say what a model can do; these families (OpenAI's, and Ollama-style "*-embed-*" names)
# cannot answer a chat completion, so they are never offered as an answer model.
_NOT_CHAT = re.compile(r"embed|whisper|tts|dall-e|moderation|transcribe|gpt-image|realtime|^(babbage|davinci)-\d",
                       re.IGNORECASE)


def _model_ids(page: Any) -> list[str]:
    """Ids of a /models page; the SDK does not validate replies, so compatible servers' odd shapes are checked."""
    data = getattr(page, "data", None)
    if not isinstance(data, list):
        raise UnusableResponseError("the model list has no `data` array")
    ids = [item.id for item in data if isinstance(getattr(item, "id", None), str) and item.id]
    return bounded([model for model in ids if not _NOT_CHAT.search(model)])


def _parse_object(content: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply as a JSON object holding every required key; UnusableResponseError otherwise (retried)."""
    try:
        return json_object(content, schema)
    except InvalidStructuredReply as exc:
        raise UnusableResponseError(str(exc)) from exc
