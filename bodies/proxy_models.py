"""The response models of an OpenAI-compatible proxy built on FastAPI (part of ``sdk_corpus``).

Its handlers return its own pydantic models, whose unions are how servers type bulk data: an
embedding is ``list[float] | str`` (floats, or base64 text under ``encoding_format="base64"``),
a choice's logprobs ``ChoiceLogprobs | Any | None`` (whatever the provider behind it sent).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


class EmbeddingData(BaseModel):
    """One embedding: floats, or their base64 text under ``encoding_format="base64"``."""

    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str


class ProxyUsage(BaseModel):
    """Token counters."""

    prompt_tokens: int
    completion_tokens: int | None = None
    total_tokens: int


class EmbeddingResponse(BaseModel):
    """The answer of ``/v1/embeddings``."""

    object: Literal["list"] = "list"
    data: list[EmbeddingData]
    model: str
    usage: ProxyUsage


class TopLogprob(BaseModel):
    """One alternative token and its logprob."""

    token: str
    logprob: float
    bytes: list[int] | None = None


class TokenLogprob(TopLogprob):
    """A generated token, its logprob and the most likely alternatives."""

    top_logprobs: list[TopLogprob]


class ChoiceLogprobs(BaseModel):
    """The logprobs of a choice's content."""

    content: list[TokenLogprob] | None = None


class ProxyFunction(BaseModel):
    """The function a tool call calls."""

    name: str
    arguments: str


class ProxyToolCall(BaseModel):
    """A tool call of the assistant's message."""

    id: str
    type: Literal["function"] = "function"
    function: ProxyFunction


class ProxyMessage(BaseModel):
    """The assistant's message."""

    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: list[ProxyToolCall] | None = None


class ProxyChoice(BaseModel):
    """One choice; ``logprobs`` is whatever the provider behind the proxy sent."""

    index: int
    message: ProxyMessage
    logprobs: ChoiceLogprobs | Any | None = None
    finish_reason: str | None = None


class ProxyChatResponse(BaseModel):
    """The answer of ``/v1/chat/completions``."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ProxyChoice]
    usage: ProxyUsage | None = None
