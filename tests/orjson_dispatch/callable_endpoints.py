"""Endpoints that are not plain functions: a partial and callable objects, async and sync.

Their annotations are evaluated here; ``postponed()`` gives the same code compiled again under
postponed annotations (PEP 563, ``from __future__ import annotations``), where every
annotation is a string that FastAPI resolves against the module's globals.
"""

import __future__

import functools
import sys
import types
from pathlib import Path

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


def postponed() -> types.ModuleType:
    """This module's code compiled under ``from __future__ import annotations``, as the module
    ``tests.orjson_dispatch.postponed_endpoints`` (in ``sys.modules``, where ``typing`` looks
    names up)."""
    name = "tests.orjson_dispatch.postponed_endpoints"
    if name not in sys.modules:
        source = Path(__file__).read_text()
        code = compile(source, __file__, "exec", flags=__future__.annotations.compiler_flag)
        module = sys.modules[name] = types.ModuleType(name)
        module.__file__ = __file__
        exec(code, module.__dict__)
    return sys.modules[name]
