"""A small model server: OpenAI-style completions, whole or streamed, with token ids and logprobs.

The "model" is a toy (a seeded random walk over a small vocabulary), but the shape of the API is
that of a real inference server (the official ``openai`` client talks to it), and so is its
serving:

* every connection gets TCP keepalive from ``uvicorn_keepalive.Protocol``, so a reply after a
  long generation still gets through an idle-dropping NAT or load balancer;
* ``/health`` and ``/v1/models`` answer through the ``orjson_dispatch.dispatch`` decorator;
* the completion routes are an ``APIRouter(route_class=orjson_dispatch.DispatchRoute)``: large
  token id and logprob lists are encoded at orjson speed with FastAPI's semantics (validation,
  status codes, headers set on the injected ``Response``, OpenAPI); each path answers a JSON
  body, or with ``"stream": true`` Server-Sent Events in OpenAI's wire format (the return type
  ``Completion | ServerSentEvents[...]`` declares both, and ``/docs`` shows both), ending with
  ``data: [DONE]``, the usage chunk first when ``stream_options.include_usage`` is set;
* errors have OpenAI's shape, ``{"error": {"message", "type", "param", "code"}}``, so that the
  ``openai`` client shows their message.

Run it with ``scripts/demo``, or by hand::

    uvicorn --app-dir examples --http uvicorn_keepalive:Protocol model_server:app
"""

from __future__ import annotations

import asyncio
import math
import random
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Literal

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.sse import ServerSentEvent
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from orjson_dispatch import DispatchRoute, ServerSentEvents, dispatch

MODEL = "toy-lm-1"
# Token ids 0-255 are the UTF-8 bytes of the prompt; the model generates words.
BYTE_TOKENS = 256
VOCABULARY = (
    "the", "model", "server", "answers", "after", "a", "long", "silence", "and",
    "every", "token", "arrives", "with", "its", "logprob", "through", "load",
    "balancer", "that", "keeps", "connection", "alive", "because", "probes", "flow",
)  # fmt: skip
MAX_TOKENS = 65_536


# --- requests -------------------------------------------------------------------------------------


class StreamOptions(BaseModel):
    include_usage: bool = Field(default=False, description="End the stream with the usage.")


class CompletionRequest(BaseModel):
    """The body of ``POST /v1/completions``."""

    prompt: str = Field(min_length=1, max_length=32_768)
    model: str = MODEL
    max_tokens: int = Field(default=16, ge=1, le=MAX_TOKENS)
    seed: int | None = Field(default=None, description="Same seed, same completion.")
    logprobs: bool = Field(default=True, description="Return the logprob of every token.")
    stream: bool = Field(default=False, description="Send the tokens as Server-Sent Events.")
    stream_options: StreamOptions | None = None


class InputMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str


class ChatRequest(BaseModel):
    """The body of ``POST /v1/chat/completions``."""

    messages: list[InputMessage] = Field(min_length=1)
    model: str = MODEL
    max_tokens: int = Field(default=16, ge=1, le=MAX_TOKENS)
    seed: int | None = Field(default=None, description="Same seed, same completion.")
    stream: bool = Field(default=False, description="Send the tokens as Server-Sent Events.")
    stream_options: StreamOptions | None = None

    @property
    def prompt(self) -> str:
        return "\n".join(message.content for message in self.messages)


# --- answers --------------------------------------------------------------------------------------


class Choice(BaseModel):
    index: int
    text: str
    token_ids: list[int]
    logprobs: list[float] | None
    finish_reason: Literal["length", "stop"]


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class Completion(BaseModel):
    id: str
    object: Literal["text_completion"] = "text_completion"
    created: int
    model: str
    prompt_token_ids: list[int]
    choices: list[Choice]
    usage: Usage


class ChatMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatMessage
    finish_reason: Literal["length", "stop"]


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage


class Delta(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(BaseModel):
    index: int = 0
    text: str
    finish_reason: Literal["length", "stop"] | None = None


class ChatChunkChoice(BaseModel):
    index: int = 0
    delta: Delta
    finish_reason: Literal["length", "stop"] | None = None


class Chunk(BaseModel):
    """What every streamed chunk holds, in OpenAI's order; ``usage`` only in the usage chunk."""

    id: str
    object: str
    created: int
    model: str
    choices: list[ChunkChoice] | list[ChatChunkChoice]
    usage: Usage | None = None


class CompletionChunk(Chunk):
    """One streamed token of a completion (OpenAI streams them as ``text_completion``)."""

    object: Literal["text_completion"] = "text_completion"
    choices: list[ChunkChoice]


class ChatCompletionChunk(Chunk):
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    choices: list[ChatChunkChoice]


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    max_tokens: int
    vocabulary_size: int


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class Error(BaseModel):
    """OpenAI's error body: the ``openai`` client raises it with its message."""

    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]
    model: str


# --- the toy model --------------------------------------------------------------------------------


def generate(prompt: str, max_tokens: int, seed: int | None) -> Iterator[tuple[int, float, str]]:
    """Yield ``(token id, logprob, text)`` for ``max_tokens`` tokens; the same seed, the same."""
    rng = random.Random(seed if seed is not None else prompt)
    for _ in range(max_tokens):
        word = rng.randrange(len(VOCABULARY))
        yield BYTE_TOKENS + word, math.log(rng.uniform(0.05, 1.0)), f" {VOCABULARY[word]}"


async def decode(
    prompt: str, max_tokens: int, seed: int | None
) -> AsyncIterator[tuple[int, float, str]]:
    """The tokens of ``generate`` as an inference engine hands them out: one step per token.

    A real engine's stream (``async for output in engine.generate(...)``) waits for each
    decoding step; the stream handlers below are written against that shape.
    """
    for token in generate(prompt, max_tokens, seed):
        await asyncio.sleep(0)  # the decoding step
        yield token


def usage(prompt_tokens: int, completion_tokens: int) -> Usage:
    return Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )


DONE = ServerSentEvent(raw_data="[DONE]")  # the end of an OpenAI stream, not JSON


# --- routes ---------------------------------------------------------------------------------------

app = FastAPI(
    title="Toy model server",
    version="1.0.0",
    description="Completions served with uvicorn-keepalive and orjson-dispatch.",
)
router = APIRouter(prefix="/v1", route_class=DispatchRoute)


@app.get("/health")
@dispatch
def health() -> Health:
    """Liveness: the server is up and the model is loaded."""
    return Health(status="ok", model=MODEL)


@app.get("/v1/models")
@dispatch
def models() -> ModelList:
    """The models this server can run."""
    card = ModelCard(id=MODEL, max_tokens=MAX_TOKENS, vocabulary_size=BYTE_TOKENS + len(VOCABULARY))
    return ModelList(data=[card])


@router.post("/completions")
async def completions(
    request: CompletionRequest, response: Response
) -> Completion | ServerSentEvents[CompletionChunk | ServerSentEvent]:
    """Generate ``max_tokens`` tokens after the prompt (``"stream": true``: one event each)."""
    # A header on the injected Response: DispatchRoute keeps it on both answers, as FastAPI does.
    response.headers["x-model"] = MODEL
    if request.stream:
        return ServerSentEvents(stream_completion(request))
    prompt_ids = list(request.prompt.encode())
    tokens = list(generate(request.prompt, request.max_tokens, request.seed))
    token_ids = [token_id for token_id, _, _ in tokens]
    return Completion(
        id=f"cmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=MODEL,
        prompt_token_ids=prompt_ids,
        choices=[
            Choice(
                index=0,
                text="".join(text for _, _, text in tokens),
                token_ids=token_ids,
                logprobs=[logprob for _, logprob, _ in tokens] if request.logprobs else None,
                finish_reason="length",
            )
        ],
        usage=usage(len(prompt_ids), len(token_ids)),
    )


async def stream_completion(
    request: CompletionRequest,
) -> AsyncIterator[CompletionChunk | ServerSentEvent]:
    """One chunk per token, the usage chunk if asked for, then [DONE]."""
    chunk_id, created = f"cmpl-{uuid.uuid4().hex}", int(time.time())
    last = request.max_tokens - 1
    index = 0
    async for _, _, text in decode(request.prompt, request.max_tokens, request.seed):
        choice = ChunkChoice(text=text, finish_reason="length" if index == last else None)
        yield CompletionChunk(id=chunk_id, created=created, model=MODEL, choices=[choice])
        index += 1
    if request.stream_options and request.stream_options.include_usage:
        counts = usage(len(request.prompt.encode()), request.max_tokens)
        yield CompletionChunk(id=chunk_id, created=created, model=MODEL, choices=[], usage=counts)
    yield DONE


@router.post("/chat/completions")
async def chat_completions(
    request: ChatRequest,
) -> ChatCompletion | ServerSentEvents[ChatCompletionChunk | ServerSentEvent]:
    """Answer the conversation with ``max_tokens`` tokens (``"stream": true``: as events)."""
    if request.stream:
        return ServerSentEvents(stream_chat_completion(request))
    texts = [text for _, _, text in generate(request.prompt, request.max_tokens, request.seed)]
    message = ChatMessage(content="".join(texts))
    return ChatCompletion(
        id=f"chatcmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=MODEL,
        choices=[ChatChoice(message=message, finish_reason="length")],
        usage=usage(len(request.prompt.encode()), len(texts)),
    )


async def stream_chat_completion(
    request: ChatRequest,
) -> AsyncIterator[ChatCompletionChunk | ServerSentEvent]:
    """The role, each token, the end, the usage chunk if asked for, then [DONE]."""
    chunk_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def chunk(delta: Delta, finish: Literal["length"] | None = None) -> ChatCompletionChunk:
        choice = ChatChunkChoice(delta=delta, finish_reason=finish)
        return ChatCompletionChunk(id=chunk_id, created=created, model=MODEL, choices=[choice])

    yield chunk(Delta(role="assistant", content=""))
    async for _, _, text in decode(request.prompt, request.max_tokens, request.seed):
        yield chunk(Delta(content=text))
    yield chunk(Delta(), "length")
    if request.stream_options and request.stream_options.include_usage:
        counts = usage(len(request.prompt.encode()), request.max_tokens)
        yield ChatCompletionChunk(
            id=chunk_id, created=created, model=MODEL, choices=[], usage=counts
        )
    yield DONE


app.include_router(router)


# --- errors, in OpenAI's shape --------------------------------------------------------------------


@app.exception_handler(RequestValidationError)
async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A request the schema refuses: 400, naming the first offending parameter."""
    first = exc.errors()[0]
    param = ".".join(str(part) for part in first["loc"][1:]) or None
    detail = ErrorDetail(
        message=f"{param}: {first['msg']}" if param else first["msg"],
        type="invalid_request_error",
        param=param,
    )
    return JSONResponse(Error(error=detail).model_dump(), status_code=400)


@app.exception_handler(HTTPException)
async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
    detail = ErrorDetail(message=str(exc.detail), type="invalid_request_error")
    return JSONResponse(
        Error(error=detail).model_dump(), status_code=exc.status_code, headers=exc.headers
    )
