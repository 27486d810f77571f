"""Statuses without content send no body, over the wire too (HEAD, 204, 304, 205).

The in-process 204/304 cases are parity examples in ``parity_cases.py``.
"""

from typing import Any

import httpx
import pytest
from fastapi import Response

from tests.orjson_dispatch.apps import UNTYPED, LiveServer, Twin, declare, make_endpoint
from tests.orjson_dispatch.compare import header_list
from tests.orjson_dispatch.samples import ITEM, Item


@pytest.mark.parametrize("typed", [True, False])
def test_status_205_sends_an_empty_body_with_a_matching_content_length(
    typed: bool, twin: Twin
) -> None:
    """Deliberate difference: FastAPI empties a 205 body but keeps the old content-length.

    Starlette only omits content-length for 1xx/204/304, so FastAPI 0.165 announces the
    length of the body it then drops; RFC 9110 section 15.3.6 forbids content in a 205.
    ``dispatch`` sends ``content-length: 0`` and the same other headers.
    """

    async def endpoint(response: Response) -> Any:
        response.status_code = 205
        return ITEM

    twin.add("GET", "/e", declare(endpoint, Item if typed else UNTYPED))
    fastapi, ours = twin.both("GET", "/e")
    assert fastapi.status_code == ours.status_code == 205
    assert fastapi.content == ours.content == b""
    assert fastapi.headers["content-length"] != "0"  # FastAPI's inconsistency, see above
    assert ours.headers["content-length"] == "0"
    others = [h for h in header_list(fastapi) if h[0] != "content-length"]
    assert [h for h in header_list(ours) if h[0] != "content-length"] == others


def test_empty_bodies_and_head_over_a_real_server(twin: Twin, live_server: LiveServer) -> None:
    """Over the wire (uvicorn, h11 or httptools): 204/304 and HEAD answer as under FastAPI."""

    async def no_content(response: Response) -> dict[str, int]:
        response.status_code = 204
        return {"a": 1}

    async def not_modified(response: Response) -> dict[str, int]:
        response.status_code = 304
        return {"a": 1}

    twin.add("GET", "/204", no_content)
    twin.add("GET", "/304", not_modified)
    twin.add(["GET", "HEAD"], "/item", make_endpoint(ITEM, annotation=Item))
    with httpx.Client(base_url=live_server(twin.app)) as client:
        for method, path in [("GET", "/204"), ("GET", "/304"), ("HEAD", "/item")]:
            fastapi = client.request(method, f"/fastapi{path}")
            ours = client.request(method, f"/dispatch{path}")
            drop = {"date"}  # the server's clock, a second apart at most
            assert ours.status_code == fastapi.status_code
            assert [h for h in header_list(ours) if h[0] not in drop] == [
                h for h in header_list(fastapi) if h[0] not in drop
            ]
            assert ours.content == fastapi.content == b""
        get = client.get("/dispatch/item")
        head = client.head("/dispatch/item")
        assert head.headers["content-length"] == get.headers["content-length"]
