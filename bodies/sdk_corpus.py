"""The reference corpus: the types model servers return, built as servers build them.

The ``openai`` SDK's ``ChatCompletion`` (logprobs, tool calls), ``ChatCompletionChunk`` (a
stream), ``responses.Response`` (messages, function calls, reasoning items, and the training data
servers add: token ids and logprobs, as extra fields or declared by a subclass,
:class:`TrainingResponse`), the ``anthropic`` SDK's ``Message`` (text, thinking, tool_use), and
the response models of an OpenAI-compatible proxy built on FastAPI (:class:`EmbeddingResponse`,
:class:`ProxyChatResponse`), whose unions (``list[float] | str``, ``ChoiceLogprobs | Any |
None``) are how servers type their bulk data.

Every builder returns the wire JSON (a dict) of a deterministic instance (the same in every
process, from ``seed``), sized by its arguments: small for tests, big for the benchmarks
(:mod:`bodies`). :func:`build` turns it into a model, validated
(``Model.model_validate``) or built without validation by the SDKs' own ``construct``, which
builds nested models recursively (``openai._models.BaseModel.construct``; the proxy's plain
pydantic models have only pydantic's ``model_construct``, which does not).
"""

from __future__ import annotations

import random
import string
import struct
from typing import Any, Literal, TypeVar

import orjson
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response
from pydantic import BaseModel

from bodies.proxy_models import EmbeddingResponse, ProxyChatResponse

__all__ = [
    "AnthropicMessage",
    "ChatCompletion",
    "ChatCompletionChunk",
    "EmbeddingResponse",
    "ProxyChatResponse",
    "PublicResponse",
    "Response",
    "TrainingResponse",
]

SEED = 20_240_601
VOCABULARY_SIZE = 151_936  # Qwen 2.5's: token ids are below it
MODEL = "Qwen/Qwen2.5-7B-Instruct"
CREATED = 1_717_200_000
Built = Literal["validated", "constructed"]
BUILT: tuple[Built, ...] = ("validated", "constructed")
M = TypeVar("M", bound=BaseModel)


class TrainingResponse(Response):
    """A ``responses.Response`` with the token data an RL trainer reads, declared as fields."""

    prompt_token_ids: list[int]
    output_token_ids: list[int]
    output_logprobs: list[float]


class PublicResponse(TrainingResponse):
    """A :class:`TrainingResponse` whose ``model_dump`` leaves the prompt's token ids out, as a
    server hiding them from its public API writes it (FastAPI's untyped path calls it)."""

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        exclude = kwargs.get("exclude") or set()
        if isinstance(exclude, dict):
            kwargs["exclude"] = {**exclude, "prompt_token_ids": True}
        else:
            kwargs["exclude"] = {*exclude, "prompt_token_ids"}
        return super().model_dump(**kwargs)


# --- building ------------------------------------------------------------------------------------


def build(cls: type[M], data: dict[str, Any], built: Built) -> M:
    """``cls`` holding ``data``: validated, or made by the class's ``construct`` (no validation).

    The SDKs define ``construct`` themselves (recursive: nested dicts become their models); a
    plain pydantic model's ``construct`` is pydantic's deprecated alias of ``model_construct``,
    so the proxy's models are only ever validated here.
    """
    if built == "validated":
        return cls.model_validate(data)
    if not hasattr(cls, "to_dict"):  # not an SDK model (both SDKs' models have to_dict)
        raise ValueError(f"{cls.__name__} is no SDK model: construct is not recursive")
    constructed: M = cls.construct(**data)
    return constructed


def _rng(seed: int) -> random.Random:
    return random.Random(SEED + seed)


def _words(rng: random.Random, count: int) -> str:
    return " ".join(
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(count)
    )


def _token(rng: random.Random) -> str:
    return rng.choice(("", " ")) + "".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 5)))


def _logprob(rng: random.Random) -> float:
    # Engines compute logprobs in float32 and hand them over by tensor.tolist(): the widened
    # values have long shortest representations (~17 characters), which serializers must print.
    narrowed: float = struct.unpack("f", struct.pack("f", -rng.expovariate(2.0)))[0]
    return narrowed


def _token_ids(rng: random.Random, count: int) -> list[int]:
    return [rng.randrange(VOCABULARY_SIZE) for _ in range(count)]


def _arguments(rng: random.Random, words: int) -> str:
    arguments = {
        "query": _words(rng, words),
        "filters": {"language": "en", "max_results": rng.randint(1, 50), "safe": True},
        "sources": [_words(rng, 2) for _ in range(3)],
    }
    return orjson.dumps(arguments).decode()


def _token_logprobs(rng: random.Random, tokens: int, top: int) -> list[dict[str, Any]]:
    logprobs = []
    for _ in range(tokens):
        token = _token(rng)
        alternatives = [
            {
                "token": (other := _token(rng)),
                "logprob": _logprob(rng),
                "bytes": list(other.encode()),
            }
            for _ in range(top)
        ]
        logprobs.append(
            {
                "token": token,
                "logprob": _logprob(rng),
                "bytes": list(token.encode()),
                "top_logprobs": alternatives,
            }
        )
    return logprobs


def chat_completion(
    *, tokens: int = 8, top: int = 2, tool_calls: int = 2, seed: int = 0
) -> dict[str, Any]:
    """A ``chat.completion``: the content of ``tokens`` tokens with their logprobs (``top``
    alternatives each), ``tool_calls`` function calls, usage, and the extra fields vLLM adds
    (``prompt_token_ids``, each choice's ``token_ids``)."""
    rng = _rng(seed)
    logprobs = _token_logprobs(rng, tokens, top)
    prompt = max(16, tokens // 16)
    calls = [
        {
            "id": f"call_{rng.getrandbits(96):024x}",
            "type": "function",
            "function": {
                "name": rng.choice(["web_search", "read_file", "run_python"]),
                "arguments": _arguments(rng, 12),
            },
        }
        for _ in range(tool_calls)
    ]
    message = {
        "role": "assistant",
        "content": "".join(lp["token"] for lp in logprobs),
        "refusal": None,
        "tool_calls": calls or None,
    }
    choice = {
        "index": 0,
        "message": message,
        "logprobs": {"content": logprobs, "refusal": None},
        "finish_reason": "tool_calls" if calls else "stop",
        "token_ids": _token_ids(rng, tokens),
    }
    return {
        "id": f"chatcmpl-{rng.getrandbits(96):024x}",
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "system_fingerprint": "fp_0123456789",
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": tokens,
            "total_tokens": prompt + tokens,
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
        "prompt_token_ids": _token_ids(rng, prompt),
    }


def chat_chunks(*, count: int = 8, seed: int = 0) -> list[dict[str, Any]]:
    """A stream of ``count`` (at least 2) ``chat.completion.chunk`` events: the role, a token
    each, then the finish reason with the usage."""
    rng = _rng(seed)
    stream_id = f"chatcmpl-{rng.getrandbits(96):024x}"

    def chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> dict[str, Any]:
        return {
            "id": stream_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": MODEL,
            "system_fingerprint": "fp_0123456789",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }

    tokens = [chunk({"content": _token(rng)}, None) for _ in range(count - 2)]
    usage = {"prompt_tokens": 16, "completion_tokens": count - 2, "total_tokens": 14 + count}
    return [
        chunk({"role": "assistant", "content": ""}, None),
        *tokens,
        chunk({}, "stop", usage=usage),
    ]


def _message_item(rng: random.Random, index: int, text: str, logprobs: int) -> dict[str, Any]:
    annotations = [
        {
            "type": "url_citation",
            "url": f"https://docs.example.com/{_words(rng, 2).replace(' ', '/')}",
            "title": _words(rng, 4).capitalize(),
            "start_index": start,
            "end_index": start + 5,
        }
        for start in sorted(rng.sample(range(max(len(text), 3)), 2))
    ]
    part = {
        "type": "output_text",
        "text": text,
        "annotations": annotations,
        "logprobs": _token_logprobs(rng, logprobs, 1),
    }
    return {
        "type": "message",
        "id": f"msg_{index:04d}{rng.getrandbits(64):016x}",
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }


def _function_call_item(rng: random.Random, index: int, words: int) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{index:04d}{rng.getrandbits(64):016x}",
        "call_id": f"call_{rng.getrandbits(96):024x}",
        "name": rng.choice(["web_search", "read_file", "run_python", "get_weather"]),
        "arguments": _arguments(rng, words),
        "status": "completed",
    }


def _reasoning_item(rng: random.Random, index: int, words: int) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": f"rs_{index:04d}{rng.getrandbits(64):016x}",
        "summary": [{"type": "summary_text", "text": _words(rng, words // 4 + 1)}],
        "content": [{"type": "reasoning_text", "text": _words(rng, words)}],
        "encrypted_content": None,
        "status": "completed",
    }


_TOOLS = [
    {
        "type": "function",
        "name": "web_search",
        "description": "Search the web.",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
]


def _response(
    rng: random.Random, output: list[dict[str, Any]], prompt: int, tokens: int, instructions: Any
) -> dict[str, Any]:
    usage = {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + tokens,
    }
    return {
        "id": f"resp_{rng.getrandbits(128):032x}",
        "object": "response",
        "created_at": float(CREATED + rng.randint(0, 10**6)),
        "model": MODEL,
        "status": "completed",
        "instructions": instructions,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": _TOOLS,
        "temperature": 1.0,
        "top_p": 0.95,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
        "metadata": {"run": "rollout-0042", "policy_version": "17", "sampler": "vllm"},
    }


def response(
    *,
    items: int = 6,
    words: int = 20,
    prompt: int = 16,
    tokens: int = 8,
    instructions: Any = "You are a helpful agent.",
    seed: int = 0,
) -> dict[str, Any]:
    """A ``response``: ``items`` output items cycling through a reasoning item, a message (its
    text with logprobs) and a function call, ``words`` words of text each; and the training data
    (``prompt_token_ids``, ``output_token_ids``, ``output_logprobs`` of ``prompt`` and
    ``tokens`` tokens), extra fields of the SDK's ``Response``, declared by
    :class:`TrainingResponse`. The agent turn of the benchmarks is ``items=36``."""
    rng = _rng(seed)
    makers = (
        lambda i: _reasoning_item(rng, i, words),
        lambda i: _message_item(rng, i, _words(rng, words), 2),
        lambda i: _function_call_item(rng, i, words),
    )
    output = [makers[index % 3](index) for index in range(items)]
    return {
        **_response(rng, output, prompt, tokens, instructions),
        "prompt_token_ids": _token_ids(rng, prompt),
        "output_token_ids": _token_ids(rng, tokens),
        "output_logprobs": [_logprob(rng) for _ in range(tokens)],
    }


def training_response(completion: ChatCompletion) -> dict[str, Any]:
    """The ``response`` an RL rollout server answers for a chat completion it generated (vLLM's
    extra fields ``prompt_token_ids`` and ``token_ids`` read from the completion): the message
    and its tool calls as output items, the token ids and one logprob per generated token."""
    choice = completion.choices[0]
    extra_choice, extra = choice.model_extra or {}, completion.model_extra or {}
    rng = _rng(len(extra_choice["token_ids"]))
    content = choice.logprobs.content if choice.logprobs and choice.logprobs.content else []
    output = [_message_item(rng, 0, choice.message.content or "", 0)]
    output += [
        {
            "type": "function_call",
            "id": f"fc_{index:04d}",
            "call_id": call.id,
            "name": call.function.name,
            "arguments": call.function.arguments,
            "status": "completed",
        }
        for index, call in enumerate(choice.message.tool_calls or [], 1)
        if call.type == "function"
    ]
    usage = completion.usage
    prompt, tokens = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
    return {
        **_response(rng, output, prompt, tokens, "You are a helpful agent."),
        "prompt_token_ids": extra["prompt_token_ids"],
        "output_token_ids": extra_choice["token_ids"],
        "output_logprobs": [lp.logprob for lp in content],
    }


def anthropic_message(*, blocks: int = 3, words: int = 20, seed: int = 0) -> dict[str, Any]:
    """A ``message`` of ``blocks`` content blocks cycling through thinking, text and tool_use."""
    rng = _rng(seed)
    makers = (
        lambda: {
            "type": "thinking",
            "thinking": _words(rng, words),
            "signature": f"{rng.getrandbits(256):064x}",
        },
        lambda: {"type": "text", "text": _words(rng, words), "citations": None},
        lambda: {
            "type": "tool_use",
            "id": f"toolu_{rng.getrandbits(96):024x}",
            "name": "web_search",
            "input": orjson.loads(_arguments(rng, words)),
        },
    )
    content = [makers[index % 3]() for index in range(blocks)]
    usage = {
        "input_tokens": 512,
        "output_tokens": blocks * words,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 256,
        "service_tier": "standard",
    }
    return {
        "id": f"msg_{rng.getrandbits(96):024x}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": "tool_use" if blocks > 2 else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def embeddings(*, count: int = 2, dimensions: int = 8, seed: int = 0) -> dict[str, Any]:
    """An embeddings answer of ``count`` float32 vectors of ``dimensions`` values each."""
    rng = _rng(seed)

    def value() -> float:
        widened: float = struct.unpack("f", struct.pack("f", rng.gauss(0.0, 0.05)))[0]
        return widened

    data = [
        {"object": "embedding", "index": index, "embedding": [value() for _ in range(dimensions)]}
        for index in range(count)
    ]
    usage = {"prompt_tokens": 8 * count, "total_tokens": 8 * count}
    return {"object": "list", "data": data, "model": "BAAI/bge-large-en-v1.5", "usage": usage}


def proxy_chat(*, tokens: int = 8, top: int = 3, seed: int = 0) -> dict[str, Any]:
    """A proxy's ``chat.completion`` of ``tokens`` tokens, each with its logprob and ``top``
    alternatives (``4096`` tokens and ``top=3``: 16k small models)."""
    rng = _rng(seed)
    logprobs = _token_logprobs(rng, tokens, top)
    message = {"role": "assistant", "content": "".join(lp["token"] for lp in logprobs)}
    choice = {
        "index": 0,
        "message": message,
        "logprobs": {"content": logprobs},
        "finish_reason": "stop",
    }
    return {
        "id": f"chatcmpl-{rng.getrandbits(96):024x}",
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [choice],
        "usage": {"prompt_tokens": 16, "completion_tokens": tokens, "total_tokens": 16 + tokens},
    }


def anthropic_stream(*, deltas: int = 3, seed: int = 0) -> list[dict[str, Any]]:
    """The events of a streamed ``message`` (``RawMessageStreamEvent``, a tagged union): its
    start, a thinking block and a text block of ``deltas`` deltas each, the stop reason with
    the usage, the stop."""
    rng = _rng(seed)
    start = {**anthropic_message(blocks=0, seed=seed), "stop_reason": None}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    blocks = (
        ({"type": "thinking", "thinking": "", "signature": ""}, "thinking_delta", "thinking"),
        ({"type": "text", "text": "", "citations": None}, "text_delta", "text"),
    )
    for index, (block, delta, field) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events += [
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": delta, field: _words(rng, 3)},
            }
            for _ in range(deltas)
        ]
        events.append({"type": "content_block_stop", "index": index})
    stop = {"stop_reason": "end_turn", "stop_sequence": None}
    events.append({"type": "message_delta", "delta": stop, "usage": {"output_tokens": 6 * deltas}})
    return [*events, {"type": "message_stop"}]
