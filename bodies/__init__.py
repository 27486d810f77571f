"""The bodies model servers answer and receive, built the same in every process.

The tests and the benchmarks both build their data here: :mod:`bodies.sdk_corpus` is the
reference corpus of SDK types (``openai``, ``anthropic``, a proxy's models), this module the
benchmarks' named bodies made of it and of the synthetic models below.

Response bodies follow an OpenAI-style "responses" object as a training or RL rollout server
returns it: an ``output`` list whose items are a tagged union of an assistant message and a
function call, the usage counters, and the token data (prompt token ids, generated token ids,
one float32 logprob per generated token: about 26 bytes of JSON per generated token, so the
training body of 64k generated tokens is about 1.7 MB). Streams send OpenAI
``chat.completion.chunk`` events, cycling through :data:`CYCLE` chunks.

The ``sdk-*`` bodies are made of the SDK types model servers return (the test suite's reference
corpus, :mod:`bodies.sdk_corpus`), validated: ``sdk-training``, the
``openai.types.responses.Response`` subclass an RL rollout server answers for a chat completion of
64k generated tokens (their ids and logprobs, ~2 MB); ``sdk-toolcall``, an agent turn of 36 output
items (reasoning, messages with logprobs, function calls, ~37 KB); ``sdk-embeddings``, 64 x 1536
floats in a proxy's ``embedding: list[float] | str``; ``sdk-logprobs``, a proxy's chat response
with 4096 logprobs of 3 alternatives each in ``logprobs: ChoiceLogprobs | Any | None`` (16k
small models). :data:`IN_PROCESS` names the bodies encoded in process.
"""

from __future__ import annotations

import random
import string
import struct
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any, Literal, NamedTuple

import orjson
from pydantic import BaseModel, Field

from bodies import sdk_corpus

VOCABULARY_SIZE = 151_936  # Qwen 2.5's: token ids are below it
SEED = 20_240_601
TOOLCALL = "toolcall"
TRAINING = "tokens-65536"
SDK_TRAINING, SDK_TOOLCALL = "sdk-training", "sdk-toolcall"
CYCLE = 64
_MODEL = "Qwen/Qwen2.5-7B-Instruct"
Status = Literal["completed", "in_progress", "incomplete"]


class Annotation(BaseModel):
    """A URL citation on a span of output text."""

    type: Literal["url_citation"] = "url_citation"
    url: str
    title: str
    start_index: int
    end_index: int


class OutputText(BaseModel):
    """One text part of an assistant message."""

    type: Literal["output_text"] = "output_text"
    text: str
    annotations: list[Annotation] = Field(default_factory=list)


class Message(BaseModel):
    """An assistant message in the output list."""

    type: Literal["message"] = "message"
    id: str
    role: Literal["assistant"] = "assistant"
    status: Status = "completed"
    content: list[OutputText]


class FunctionCall(BaseModel):
    """A tool call in the output list."""

    type: Literal["function_call"] = "function_call"
    id: str
    call_id: str
    name: str
    arguments: str  # a JSON document in a string
    status: Status = "completed"


class Usage(BaseModel):
    """Token counters of one response."""

    input_tokens: int
    output_tokens: int
    total_tokens: int


class ResponseModel(BaseModel):
    """A finished model response, with the token data a training loop needs."""

    id: str
    object: Literal["response"] = "response"
    created_at: int
    model: str
    status: Status = "completed"
    temperature: float
    top_p: float
    output: list[Annotated[Message | FunctionCall, Field(discriminator="type")]]
    usage: Usage
    metadata: dict[str, str]
    prompt_token_ids: list[int]
    output_token_ids: list[int]
    output_logprobs: list[float]


class Delta(BaseModel):
    """What a chunk adds to the message."""

    role: Literal["assistant"] | None = None
    content: str | None = None


class Choice(BaseModel):
    """One choice of a chunk."""

    index: int
    delta: Delta
    logprobs: None = None
    finish_reason: Literal["stop", "length"] | None = None


class Chunk(BaseModel):
    """One streamed ``chat.completion.chunk``."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[Choice]


class Body(NamedTuple):
    """A body: the validated model, the ready dict (JSON types only), orjson's bytes, the class."""

    model: BaseModel
    data: dict[str, Any]
    json: bytes
    cls: type[BaseModel]


def _words(rng: random.Random, count: int) -> str:
    return " ".join(
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(count)
    )


def _logprob(rng: random.Random) -> float:
    # Engines compute logprobs in float32 and hand them over by tensor.tolist(): the widened
    # values have long shortest representations (~17 characters), which serializers must print.
    narrowed: float = struct.unpack("f", struct.pack("f", -rng.expovariate(2.0)))[0]
    return narrowed


def _message(rng: random.Random, index: int, parts: int, words: int) -> dict[str, Any]:
    content = []
    for _ in range(parts):
        text = _words(rng, words)
        annotations = [
            {
                "type": "url_citation",
                "url": f"https://docs.example.com/{_words(rng, 3).replace(' ', '/')}",
                "title": _words(rng, 5).capitalize(),
                "start_index": start,
                "end_index": start + rng.randint(5, 40),
            }
            for start in sorted(rng.sample(range(len(text)), 3))
        ]
        content.append({"type": "output_text", "text": text, "annotations": annotations})
    msg_id = f"msg_{index:04d}{rng.getrandbits(64):016x}"
    return {
        "type": "message",
        "id": msg_id,
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


def _function_call(rng: random.Random, index: int, argument_words: int) -> dict[str, Any]:
    arguments = {
        "query": _words(rng, argument_words),
        "filters": {"language": "en", "max_results": rng.randint(1, 50), "safe": True},
        "sources": [_words(rng, 2) for _ in range(3)],
    }
    return {
        "type": "function_call",
        "id": f"fc_{index:04d}{rng.getrandbits(64):016x}",
        "call_id": f"call_{rng.getrandbits(96):024x}",
        "name": rng.choice(["web_search", "read_file", "run_python", "get_weather"]),
        "arguments": orjson.dumps(arguments).decode(),
        "status": "completed",
    }


def raw(name: str) -> dict[str, Any]:
    """Return the dict of the body ``name``, built afresh.

    ``tokens-<n>``: n generated tokens, ``max(16, n // 16)`` prompt tokens, one message (about
    2 KB of text with citations) and one function call. ``toolcall``: an agent turn of 36 output
    items (messages and tool calls, ~37 KB), 256 prompt and 64 generated tokens.

    Raises:
        KeyError: ``name`` is neither ``toolcall`` nor ``tokens-<positive integer>``.
    """
    prefix, _, count = name.partition("-")
    if name == TOOLCALL:
        rng, prompt, tokens = random.Random(SEED), 256, 64
        output = [
            _message(rng, i, 2, 60) if i % 3 == 0 else _function_call(rng, i, 25) for i in range(36)
        ]
    elif prefix == "tokens" and count.isdigit() and int(count) > 0:
        tokens = int(count)
        rng, prompt = random.Random(SEED + tokens), max(16, tokens // 16)
        output = [_message(rng, 0, parts=2, words=120), _function_call(rng, 1, 20)]
    else:
        raise KeyError(name)
    return {
        "id": f"resp_{rng.getrandbits(128):032x}",
        "object": "response",
        "created_at": 1_717_200_000 + rng.randint(0, 10**6),
        "model": _MODEL,
        "status": "completed",
        "temperature": 1.0,
        "top_p": 0.95,
        "output": output,
        "usage": {"input_tokens": prompt, "output_tokens": tokens, "total_tokens": prompt + tokens},
        "metadata": {"run": "rollout-0042", "policy_version": "17", "sampler": "vllm"},
        "prompt_token_ids": [rng.randrange(VOCABULARY_SIZE) for _ in range(prompt)],
        "output_token_ids": [rng.randrange(VOCABULARY_SIZE) for _ in range(tokens)],
        "output_logprobs": [_logprob(rng) for _ in range(tokens)],
    }


def _sdk_training() -> dict[str, Any]:
    completion = sdk_corpus.chat_completion(tokens=65_536, top=0, tool_calls=1)
    return sdk_corpus.training_response(sdk_corpus.ChatCompletion.model_validate(completion))


#: The SDK-type bodies: their class and their wire JSON's builder.
SDK_BODIES: dict[str, tuple[type[BaseModel], Callable[[], dict[str, Any]]]] = {
    SDK_TRAINING: (sdk_corpus.TrainingResponse, _sdk_training),
    SDK_TOOLCALL: (
        sdk_corpus.TrainingResponse,
        lambda: sdk_corpus.response(items=36, words=64, prompt=256, tokens=64),
    ),
    "sdk-embeddings": (
        sdk_corpus.EmbeddingResponse,
        lambda: sdk_corpus.embeddings(count=64, dimensions=1536),
    ),
    "sdk-logprobs": (sdk_corpus.ProxyChatResponse, lambda: sdk_corpus.proxy_chat(tokens=4096)),
}


@cache
def body(name: str) -> Body:
    """Return the body ``name`` (:func:`raw`, :data:`SDK_BODIES`), built once per process.

    Raises:
        KeyError: no body is called ``name``.
    """
    cls, make = SDK_BODIES.get(name, (ResponseModel, lambda: raw(name)))
    model = cls.model_validate(make())
    data = model.model_dump(mode="json", by_alias=True)
    return Body(model, data, orjson.dumps(data), cls)


@cache
def chunk_models() -> tuple[Chunk, ...]:
    """Return a stream's :data:`CYCLE` chunks: the role, a token of content each, then stop."""
    rng = random.Random(SEED)
    stream_id = f"chatcmpl-{rng.getrandbits(96):024x}"
    return tuple(
        Chunk(
            id=stream_id,
            created=1_717_200_000,
            model=_MODEL,
            system_fingerprint="fp_0123456789",
            choices=[
                Choice(
                    index=0,
                    delta=Delta(role="assistant") if index == 0 else Delta(content=_token(rng)),
                    finish_reason="stop" if index == CYCLE - 1 else None,
                )
            ],
        )
        for index in range(CYCLE)
    )


def _token(rng: random.Random) -> str:
    return " " + "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))


@cache
def chunk_dicts() -> tuple[dict[str, Any], ...]:
    """Return the chunks as ready dicts (what untyped endpoints yield)."""
    return tuple(chunk.model_dump(mode="json") for chunk in chunk_models())


#: The bodies encoded in process: their class and the wire JSON of their values (each encoded
#: alone): one chunk (the role), a stream's chunks, the SDK bodies of model servers.
IN_PROCESS: dict[str, tuple[type[BaseModel], Callable[[], list[dict[str, Any]]]]] = {
    "chunk": (sdk_corpus.ChatCompletionChunk, lambda: sdk_corpus.chat_chunks(count=2)[:1]),
    f"chunks-{CYCLE}": (
        sdk_corpus.ChatCompletionChunk,
        lambda: sdk_corpus.chat_chunks(count=CYCLE),
    ),
    "chat-toolcall": (
        sdk_corpus.ChatCompletion,
        lambda: [sdk_corpus.chat_completion(tokens=64, top=3, tool_calls=4)],
    ),
    "response-12": (sdk_corpus.Response, lambda: [sdk_corpus.response(items=12)]),  # token extras
    SDK_TOOLCALL: (SDK_BODIES[SDK_TOOLCALL][0], lambda: [SDK_BODIES[SDK_TOOLCALL][1]()]),
    "anthropic-6": (sdk_corpus.AnthropicMessage, lambda: [sdk_corpus.anthropic_message(blocks=6)]),
    SDK_TRAINING: (SDK_BODIES[SDK_TRAINING][0], lambda: [SDK_BODIES[SDK_TRAINING][1]()]),
}


MULTI_TURN, CHAT = "multi-turn", "chat"  # the request bodies


class Turn(BaseModel):
    """One item of a request's conversation, with its token data (a multi-turn RL request)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    token_ids: list[int] = Field(default_factory=list)
    logprobs: list[float] | None = None


class TurnsRequest(BaseModel):
    """A request carrying a whole conversation, as agent and RL rollout servers receive."""

    model: str
    input: list[Turn]
    temperature: float = 1.0
    max_output_tokens: int | None = None
    metadata: dict[str, str] = Field(default_factory=dict)


@cache
def request(name: str) -> bytes:
    """Return the JSON of the request ``name``, built once per process.

    ``multi-turn``: 16 items, 52k token ids (8 user items of 2,500, 8 assistant items of 4,000
    with one logprob each: 32k), about 1.7 MB; ``chat``: 4 items of text alone, about 2 KB.

    Raises:
        KeyError: ``name`` is neither.
    """
    rng = random.Random(SEED)
    if name not in (MULTI_TURN, CHAT):
        raise KeyError(name)
    turns: list[dict[str, Any]] = []
    for index in range(16 if name == MULTI_TURN else 4):
        turn: dict[str, Any] = {"role": ("user", "assistant")[index % 2]}
        turn["content"] = _words(rng, 7_000 if name == MULTI_TURN else 68)
        if name == MULTI_TURN:
            count = (2_500, 4_000)[index % 2]
            turn["token_ids"] = [rng.randrange(VOCABULARY_SIZE) for _ in range(count)]
            if index % 2:
                turn["logprobs"] = [_logprob(rng) for _ in range(count)]
        turns.append(turn)
    data = {"model": _MODEL, "input": turns, "max_output_tokens": 4096, "metadata": {"run": "0042"}}
    return orjson.dumps(data)


def request_answer(name: str) -> dict[str, int]:
    """Return what every request configuration answers to ``request(name)``."""
    turns = orjson.loads(request(name))["input"]
    return {"items": len(turns), "tokens": sum(len(t.get("token_ids", ())) for t in turns)}


ITEMS = "items-1000"  # a server library's generic rows


@cache
def items(count: int = 1_000) -> list[dict[str, Any]]:
    """Return ``count`` rows of 8 keys, as a server library's generic route returns them."""
    rng = random.Random(SEED)
    return [
        {
            "id": index,
            "name": _words(rng, 2),
            "score": _logprob(rng),
            "active": index % 2 == 0,
            "tags": [_words(rng, 1), _words(rng, 1)],
            "owner": None,
            "created": 1_717_200_000 + index,
            "group": f"g{index % 16}",
        }
        for index in range(count)
    ]
