"""The reference corpus (``sdk_corpus``) as examples and as hypothesis strategies.

``CORPUS`` names one small instance of each type, as wire JSON with its class; ``CASES`` pairs
each with how it is built (validated, or by the SDK's own ``construct``). ``sdk_values()`` draws
variations of them as servers send them: optional fields absent, ``None`` or kept, extra fields
(token ids, logprobs, numbers beyond 64 bits, nested objects) on the model and on the first
item of its first list (an output item, a choice, a content block), sizes and contents from
the builders' seeds.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from bodies.sdk_corpus import (
    BUILT,
    AnthropicMessage,
    Built,
    ChatCompletion,
    ChatCompletionChunk,
    EmbeddingResponse,
    ProxyChatResponse,
    PublicResponse,
    Response,
    TrainingResponse,
    anthropic_message,
    build,
    chat_chunks,
    chat_completion,
    embeddings,
    proxy_chat,
    response,
    training_response,
)

_INSTRUCTIONS = [
    {"type": "message", "role": "developer", "content": "Answer briefly."},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
]
#: How to make each corpus entry: its class and a builder taking a seed.
MAKERS: dict[str, tuple[type[BaseModel], Callable[[int], dict[str, Any]]]] = {
    "chat_completion": (ChatCompletion, lambda seed: chat_completion(seed=seed)),
    "chat_completion_no_tools": (
        ChatCompletion,
        lambda seed: chat_completion(tool_calls=0, top=0, seed=seed),
    ),
    "chunk": (ChatCompletionChunk, lambda seed: chat_chunks(count=3, seed=seed)[1]),
    "last_chunk": (ChatCompletionChunk, lambda seed: chat_chunks(count=3, seed=seed)[-1]),
    "response": (Response, lambda seed: response(seed=seed)),
    # instructions: str | list[ResponseInputItem] | None, the union the issue names.
    "response_input_items": (
        Response,
        lambda seed: response(instructions=_INSTRUCTIONS, seed=seed),
    ),
    "training_response": (TrainingResponse, lambda seed: response(items=3, seed=seed)),
    "public_response": (PublicResponse, lambda seed: response(items=3, seed=seed)),
    "anthropic_message": (AnthropicMessage, lambda seed: anthropic_message(seed=seed)),
    "embeddings": (EmbeddingResponse, lambda seed: embeddings(seed=seed)),
    "embeddings_base64": (
        EmbeddingResponse,
        lambda seed: {
            **embeddings(count=1, seed=seed),
            "data": [{"object": "embedding", "index": 0, "embedding": "AAAgQQAAoEA="}],
        },
    ),
    "proxy_chat": (ProxyChatResponse, lambda seed: proxy_chat(seed=seed)),
    # A provider's own logprobs shape (the legacy completions one): the union's Any member.
    "proxy_chat_other_logprobs": (
        ProxyChatResponse,
        lambda seed: _with_choice(
            proxy_chat(top=0, seed=seed),
            logprobs={"tokens": ["a", "b"], "token_logprobs": [-0.25, -1.5], "text_offset": [0, 1]},
        ),
    ),
}


def _with_choice(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**data, "choices": [{**data["choices"][0], **changes}]}


@dataclasses.dataclass(frozen=True)
class SdkCase:
    """A corpus entry: its name, class, wire JSON and how it is built."""

    name: str
    cls: type[BaseModel]
    data: dict[str, Any]
    built: Built

    def model(self) -> BaseModel:
        """A fresh instance (each test may change its own)."""
        return build(self.cls, self.data, self.built)


def _buildable(cls: type[BaseModel], built: Built) -> bool:
    return built == "validated" or hasattr(cls, "to_dict")  # the SDKs' own construct


CASES = [
    SdkCase(name, cls, make(0), built)
    for name, (cls, make) in MAKERS.items()
    for built in BUILT
    if _buildable(cls, built)
]
CASE_IDS = [f"{case.name}-{case.built}" for case in CASES]


def _training(tokens: int) -> dict[str, Any]:
    return training_response(ChatCompletion.model_validate(chat_completion(tokens=tokens, top=0)))


#: Bodies the size of the benchmarks' in their long lists, smaller in their count.
LARGE_CASES = [
    SdkCase(name, cls, data, built)
    for name, cls, data in (
        ("training_response_2k_tokens", TrainingResponse, _training(2048)),
        ("agent_turn_36_items", TrainingResponse, response(items=36, prompt=256, tokens=64)),
        ("embeddings_4x1536", EmbeddingResponse, embeddings(count=4, dimensions=1536)),
        ("proxy_chat_256_logprobs", ProxyChatResponse, proxy_chat(tokens=256)),
    )
    for built in BUILT
    if _buildable(cls, built)
]

_EXTRA_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()  # unbounded: beyond 64 bits too
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
#: Extra fields as servers add them (names no SDK model declares).
EXTRAS = st.dictionaries(
    st.sampled_from(["token_ids", "prompt_logprobs", "x_request_id", "kv_transfer_params", "é"]),
    _EXTRA_VALUES,
    max_size=3,
)


def _first_item(data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The key and the first item of the first list of objects in ``data``."""
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return key, value[0]
    return None


@st.composite
def sdk_values(draw: st.DrawFn) -> SdkCase:
    """A corpus entry drawn: its seed, optional fields absent/``None``/kept, extra fields."""
    name = draw(st.sampled_from(sorted(MAKERS)))
    cls, make = MAKERS[name]
    data = make(draw(st.integers(0, 3)))
    for field_name, field in cls.model_fields.items():
        if field.is_required():
            continue
        key = field.alias or field_name
        choice = draw(st.sampled_from(["kept", "absent", "none"]))
        if choice == "absent":
            data.pop(key, None)
        elif choice == "none" and type(None) in typing.get_args(field.annotation):
            data[key] = None
    data.update(draw(EXTRAS))
    first = _first_item(data)
    if first is not None:
        key, item = first
        data[key] = [{**item, **draw(EXTRAS)}, *data[key][1:]]
    built = draw(st.sampled_from([b for b in BUILT if _buildable(cls, b)]))
    return SdkCase(name, cls, data, built)


def field_selections(case: SdkCase) -> st.SearchStrategy[dict[str, Any]]:
    """``include`` and/or ``exclude``, or neither: a set of the model's field names, or the
    keys of the items of its first list (``{"output": {"__all__": {...}}}``, ``{0: ...}``)."""
    selection: st.SearchStrategy[Any] = st.sets(
        st.sampled_from(sorted(case.cls.model_fields)), max_size=4
    )
    first = _first_item(case.data)
    if first is not None and first[1]:  # an empty object has no keys to select
        key, item = first
        keys = st.sets(st.sampled_from(sorted(item)), min_size=1, max_size=3)
        which = st.sampled_from(["__all__", 0])
        selection |= st.builds(lambda index, names: {key: {index: names}}, which, keys)
    return st.fixed_dictionaries({}, optional={"include": selection, "exclude": selection})
