"""``GET /litestar/<body>``: Litestar returning msgspec Structs, the framework peer.

Litestar encodes Structs with msgspec's C encoder and does not validate return values: the
framework-level cost of the fastest idiomatic alternative to FastAPI.
"""

from functools import cache
from typing import Literal

import msgspec
from litestar import Litestar, get
from litestar.exceptions import NotFoundException

from benchmarks.bodies import body


# msgspec mirrors of the models of benchmarks.bodies.
class AnnotationStruct(msgspec.Struct):  # noqa: D101
    url: str
    title: str
    start_index: int
    end_index: int
    type: Literal["url_citation"] = "url_citation"


class OutputTextStruct(msgspec.Struct):  # noqa: D101
    text: str
    annotations: list[AnnotationStruct]
    type: Literal["output_text"] = "output_text"


class MessageStruct(msgspec.Struct, tag_field="type", tag="message"):  # noqa: D101
    id: str
    content: list[OutputTextStruct]
    role: Literal["assistant"] = "assistant"
    status: str = "completed"


class FunctionCallStruct(msgspec.Struct, tag_field="type", tag="function_call"):  # noqa: D101
    id: str
    call_id: str
    name: str
    arguments: str
    status: str = "completed"


class UsageStruct(msgspec.Struct):  # noqa: D101
    input_tokens: int
    output_tokens: int
    total_tokens: int


class ResponseStruct(msgspec.Struct):  # noqa: D101
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
    try:
        return msgspec.convert(body(name).data, ResponseStruct)
    except KeyError:
        raise NotFoundException(f"no body called {name!r}") from None


@get("/health", media_type="text/plain", sync_to_thread=False)
def health() -> str:
    return "ok"


@get("/litestar/{name:str}")
async def litestar_body(name: str) -> ResponseStruct:
    return _struct(name)


app = Litestar(route_handlers=[health, litestar_body], openapi_config=None)
