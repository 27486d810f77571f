"""The decorated function keeps its name, docstring, signature and (string) annotations."""

import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Query, Request, Response

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import Ask
from tests.orjson_dispatch.compare import assert_equivalent
from tests.orjson_dispatch.samples import Item


def test_decorated_function_keeps_name_doc_signature_and_annotations() -> None:
    async def create_item(
        item: Item, q: Annotated[int, Query(ge=0)] = 0, *, request: Request
    ) -> Item:
        """Create an item."""
        return item

    decorated = dispatch(create_item)
    assert decorated.__name__ == "create_item"
    assert decorated.__qualname__ == create_item.__qualname__
    assert decorated.__doc__ == "Create an item."
    assert decorated.__module__ == create_item.__module__
    assert decorated.__annotations__ == create_item.__annotations__
    original = inspect.signature(create_item)
    seen = inspect.signature(decorated)
    assert seen.return_annotation == original.return_annotation
    # dispatch may add a keyword-only Request and/or Response parameter, which FastAPI injects
    # and leaves out of the OpenAPI document (the route's settings and the status, headers and
    # cookies set on the injected Response); every parameter of the endpoint is kept, in order.
    added = [p for name, p in seen.parameters.items() if name not in original.parameters]
    assert [p for p in seen.parameters.values() if p not in added] == list(
        original.parameters.values()
    )
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in added)
    # create_item declares a Request itself, so at most the Response parameter is added.
    assert [p.annotation for p in added] in ([], [Response])


_FUTURE_MODULE = """
from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import FastAPI, Query, Response
from pydantic import BaseModel, Field

from orjson_dispatch import dispatch


class Event(BaseModel):
    title: str = Field(serialization_alias="Title")
    at: dt.datetime
    secret: str = Field(default="s", exclude=True)


app = FastAPI()


@app.get("/events/{event_id}")
@dispatch
async def get_event(
    event_id: int, response: Response, tz: Annotated[str, Query()] = "UTC"
) -> Event:
    response.headers["x-tz"] = tz
    return Event(title=f"e{event_id}", at=dt.datetime(2024, 1, 1, 12, 30))


@app.get("/plain/events/{event_id}")
async def get_event_plain(
    event_id: int, response: Response, tz: Annotated[str, Query()] = "UTC"
) -> Event:
    response.headers["x-tz"] = tz
    return Event(title=f"e{event_id}", at=dt.datetime(2024, 1, 1, 12, 30))
"""


def test_string_annotations_from_future_import(tmp_path: Path, ask: Ask) -> None:
    source = tmp_path / "future_app.py"
    source.write_text(textwrap.dedent(_FUTURE_MODULE))
    spec = importlib.util.spec_from_file_location("future_app", source)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["future_app"] = module
    try:
        spec.loader.exec_module(module)
        app: FastAPI = module.app
        ours = ask(app, "GET", "/events/3?tz=CET")
        fastapi = ask(app, "GET", "/plain/events/3?tz=CET")
    finally:
        del sys.modules["future_app"]
    assert fastapi.json() == {"Title": "e3", "at": "2024-01-01T12:30:00"}
    assert_equivalent(ours, fastapi)
    schema = app.openapi()
    decorated_op = schema["paths"]["/events/{event_id}"]["get"]
    plain_op = schema["paths"]["/plain/events/{event_id}"]["get"]
    for key in ("parameters", "responses"):
        assert decorated_op[key] == plain_op[key]
