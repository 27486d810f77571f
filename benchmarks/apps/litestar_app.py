"""Litestar serving the same bodies through msgspec, the second framework peer.

Litestar encodes msgspec ``Struct`` return values with msgspec's C encoder and does not
validate return values, so this is the framework-level cost of the fastest idiomatic
alternative to FastAPI. ``GET /litestar/<body>`` answers the same JSON document as every
route of :mod:`benchmarks.apps.fastapi_app`.
"""

from functools import cache
from typing import Literal

import msgspec
from litestar import Litestar, get
from litestar.exceptions import NotFoundException

from benchmarks.bodies import body


class AnnotationStruct(msgspec.Struct):
    """msgspec mirror of :class:`benchmarks.bodies.Annotation`."""

    url: str
    title: str
    start_index: int
    end_index: int
    type: Literal["url_citation"] = "url_citation"


class OutputTextStruct(msgspec.Struct):
    """msgspec mirror of :class:`benchmarks.bodies.OutputText`."""

    text: str
    annotations: list[AnnotationStruct]
    type: Literal["output_text"] = "output_text"


class MessageStruct(msgspec.Struct, tag_field="type", tag="message"):
    """msgspec mirror of :class:`benchmarks.bodies.Message` (the tag is ``type``)."""

    id: str
    content: list[OutputTextStruct]
    role: Literal["assistant"] = "assistant"
    status: str = "completed"


class FunctionCallStruct(msgspec.Struct, tag_field="type", tag="function_call"):
    """msgspec mirror of :class:`benchmarks.bodies.FunctionCall` (the tag is ``type``)."""

    id: str
    call_id: str
    name: str
    arguments: str
    status: str = "completed"


class UsageStruct(msgspec.Struct):
    """msgspec mirror of :class:`benchmarks.bodies.Usage`."""

    input_tokens: int
    output_tokens: int
    total_tokens: int


class ResponseStruct(msgspec.Struct):
    """msgspec mirror of :class:`benchmarks.bodies.ResponseModel`."""

    id: str
    object: Literal["response"]
    created_at: int
    model: str
    status: str
    temperature: float
    top_p: float
    output: list[MessageStruct | FunctionCallStruct]
    usage: UsageStruct
    metadata: dict[str, str]
    prompt_token_ids: list[int]
    output_token_ids: list[int]
    output_logprobs: list[float]


@cache
def _struct(name: str) -> ResponseStruct:
    """Return the body called ``name`` converted to structs once per process."""
    try:
        data = body(name).data
    except KeyError:
        raise NotFoundException(f"no body called {name!r}") from None
    return msgspec.convert(data, ResponseStruct)


@get("/health", media_type="text/plain", sync_to_thread=False)
def health() -> str:
    """Answer 200 once the application is up."""
    return "ok"


@get("/litestar/{name:str}")
async def litestar_body(name: str) -> ResponseStruct:
    """Litestar's default path: the returned struct encoded by msgspec."""
    return _struct(name)


app = Litestar(route_handlers=[health, litestar_body], openapi_config=None)
