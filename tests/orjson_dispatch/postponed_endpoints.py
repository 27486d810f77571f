"""Endpoints that are not plain functions, defined under postponed annotations (PEP 563).

With ``from __future__ import annotations`` every annotation here is a string that FastAPI
resolves against this module's globals; ``test_route_endpoints.py`` defines the same endpoints
without it.
"""

from __future__ import annotations

import functools

from tests.orjson_dispatch.samples import Item


def item(prefix: str, q: int = 1) -> Item:
    """Read an item."""
    return Item(name=f"{prefix}{q}", price=q)


ITEM_PARTIAL = functools.partial(item, "partial")


class AsyncItem:
    async def __call__(self, q: int = 1) -> Item:
        return Item(name=f"async{q}", price=q)


class SyncItem:
    def __call__(self, q: int = 1) -> Item:
        return Item(name=f"sync{q}", price=q)
