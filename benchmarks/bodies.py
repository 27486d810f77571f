"""Response bodies shaped like a model server's traffic, built deterministically.

Every benchmark (in process and over HTTP, in every framework) serves the data built here, so
that the configurations differ only in how they turn it into JSON bytes.

The shape follows an OpenAI-style "responses" object as a training or RL rollout server returns
it: an ``output`` list whose items are a tagged union of an assistant message and a function
call, the usage counters, and the raw token data (prompt token ids, generated token ids and one
logprob per generated token). The token data dominates the size: about 26 bytes of JSON per
generated token, so the training body (64k generated tokens, 4k prompt tokens) is about 1.7 MB.
"""

from __future__ import annotations

import random
import string
import struct
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, Field

#: Vocabulary size of a current open-weights model family (Qwen 2.5): token ids are below it.
VOCABULARY_SIZE = 151_936
#: Seed of every generator here: the same bodies on every run and in every process.
SEED = 20_240_601
#: The number of generated tokens of the training body (its prompt has 1/16 of that).
TRAINING_TOKENS = 65_536


class Annotation(BaseModel):
    """A URL citation attached to a span of output text."""

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
    status: Literal["completed", "in_progress", "incomplete"] = "completed"
    content: list[OutputText]


class FunctionCall(BaseModel):
    """A tool call in the output list; ``arguments`` is a JSON document in a string."""

    type: Literal["function_call"] = "function_call"
    id: str
    call_id: str
    name: str
    arguments: str
    status: Literal["completed", "in_progress", "incomplete"] = "completed"


#: The output list's item: a union told apart by its ``type`` field.
OutputItem = Annotated[Message | FunctionCall, Field(discriminator="type")]


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
    status: Literal["completed", "in_progress", "incomplete"] = "completed"
    temperature: float
    top_p: float
    output: list[OutputItem]
    usage: Usage
    metadata: dict[str, str]
    prompt_token_ids: list[int]
    output_token_ids: list[int]
    output_logprobs: list[float]


@dataclass(frozen=True)
class Body:
    """One body in the three forms the configurations start from.

    Attributes:
        name: The key used in URLs and result tables, e.g. ``tokens-65536`` or ``toolcall``.
        tokens: The number of generated tokens (0 for the tool-call body).
        model: The validated ``ResponseModel``.
        data: ``model.model_dump(mode="json")``: the ready dict, plain JSON types only.
        json: ``orjson.dumps(data)``: the finished bytes.
    """

    name: str
    tokens: int
    model: ResponseModel
    data: dict[str, Any]
    json: bytes


def _words(rng: random.Random, count: int) -> str:
    """Return ``count`` pseudo-words of 2 to 9 lowercase letters joined by spaces."""
    return " ".join(
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(count)
    )


def _logprob(rng: random.Random) -> float:
    """Return a negative logprob as a float32 value widened to a Python float.

    Inference engines compute logprobs in float32 and hand them to Python through
    ``tensor.tolist()``: the widened values have long shortest representations (about
    17 characters), which is what the serializers have to print.
    """
    value = -rng.expovariate(2.0)
    narrowed: float = struct.unpack("f", struct.pack("f", value))[0]
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
    return {
        "type": "message",
        "id": f"msg_{index:04d}{rng.getrandbits(64):016x}",
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


def _response(
    rng: random.Random, output: list[dict[str, Any]], prompt: int, tokens: int
) -> dict[str, Any]:
    return {
        "id": f"resp_{rng.getrandbits(128):032x}",
        "object": "response",
        "created_at": 1_717_200_000 + rng.randint(0, 10**6),
        "model": "Qwen/Qwen2.5-7B-Instruct",
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


def token_data(tokens: int) -> dict[str, Any]:
    """Return the raw dict of a response with ``tokens`` generated tokens.

    The prompt has ``max(16, tokens // 16)`` token ids; the output list holds one message
    (about 2 KB of text with citations) and one function call, so that the union type is
    exercised. The same ``tokens`` always gives the same dict.
    """
    rng = random.Random(SEED + tokens)
    output = [_message(rng, 0, parts=2, words=120), _function_call(rng, 1, argument_words=20)]
    return _response(rng, output, prompt=max(16, tokens // 16), tokens=tokens)


def toolcall_data() -> dict[str, Any]:
    """Return the raw dict of an agent turn: many messages and tool calls, few tokens.

    About 37 KB of nested content (messages with several text parts, each with citations,
    and tool calls with JSON arguments) around 256 prompt and 64 generated tokens.
    """
    rng = random.Random(SEED)
    output = [
        _message(rng, i, parts=2, words=60) if i % 3 == 0 else _function_call(rng, i, 25)
        for i in range(36)
    ]
    return _response(rng, output, prompt=256, tokens=64)


def _finish(name: str, tokens: int, raw: dict[str, Any]) -> Body:
    model = ResponseModel.model_validate(raw)
    data = model.model_dump(mode="json")
    return Body(name=name, tokens=tokens, model=model, data=data, json=orjson.dumps(data))


def body_name(tokens: int) -> str:
    """Return the name of the token body with ``tokens`` generated tokens."""
    return f"tokens-{tokens}"


#: The name of the nested tool-call body.
TOOLCALL = "toolcall"
#: The name of the training body (64k generated tokens).
TRAINING = body_name(TRAINING_TOKENS)


@cache
def body(name: str) -> Body:
    """Return the body called ``name`` (``toolcall`` or ``tokens-<n>``), built once per process.

    Raises:
        KeyError: ``name`` is neither ``toolcall`` nor ``tokens-<positive integer>``.
    """
    if name == TOOLCALL:
        return _finish(name, 0, toolcall_data())
    prefix, _, count = name.partition("-")
    if prefix != "tokens" or not count.isdigit() or int(count) < 1:
        raise KeyError(name)
    tokens = int(count)
    return _finish(name, tokens, token_data(tokens))
