"""pytest plugin: every FastAPI route of the run is served through orjson-dispatch.

Loaded with ``-p dispatch_plugin`` into a run of FastAPI's own test suite, whose files stay
untouched. ``ORJSON_DISPATCH_SUITE_MODE`` picks how:

- ``dispatch`` (the default): every endpoint given to ``fastapi.routing.APIRoute`` is replaced by
  ``orjson_dispatch.dispatch(endpoint)``. APIRoute's constructor is the one seam every route goes
  through: ``app.get``/``app.post``/``api_route``/``add_api_route`` build their route with the
  router's route class, custom route classes call ``APIRoute.__init__``, and since FastAPI
  0.165 ``include_router`` keeps the included router's route objects instead of copying them.
  Endpoints that ``dispatch`` refuses (generator functions, classes) are left as they are and
  counted with the reason.
- ``route``: every ``APIRouter`` (so every ``FastAPI`` app, whose router is one) that does not
  name a route class of its own gets ``orjson_dispatch.DispatchRoute``, which parses JSON
  request bodies of every size with orjson.

Tests that run their body in a child interpreter (FastAPI's ``run_in_subprocess``, in
tests/test_telemetry/_subprocess.py) are deselected: the plugin does not reach the child, so
they would test FastAPI alone, at the cost of a Python start each.

The counts are printed in the terminal summary and, when ``ORJSON_DISPATCH_SUITE_OUT`` names a
directory, written there as ``routes-<pid>.json`` (one file per xdist worker), beside the ids
of the deselected tests in ``deselected-<pid>.json``.
"""

from __future__ import annotations

import functools
import json
import os
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi import routing

import orjson_dispatch

MODES = ("dispatch", "route")
MODE_VARIABLE = "ORJSON_DISPATCH_SUITE_MODE"
OUT_VARIABLE = "ORJSON_DISPATCH_SUITE_OUT"

# What happened to each APIRoute built in this process: "wrapped", "already wrapped",
# "DispatchRoute", "other route class" or "refused: <reason>".
counts: Counter[str] = Counter()
deselected: list[str] = []
_wrappers: weakref.WeakSet[Any] = weakref.WeakSet()


def _name(endpoint: Any) -> str:
    qualname = getattr(endpoint, "__qualname__", None) or getattr(endpoint, "__name__", "")
    return f"{getattr(endpoint, '__module__', '')}.{qualname}"


def _wrap(endpoint: Any) -> Any:
    if endpoint in _wrappers:  # a route built from another route's endpoint
        counts["already wrapped"] += 1
        return endpoint
    try:
        wrapper = orjson_dispatch.dispatch(endpoint)
    except TypeError as error:
        counts["refused: " + str(error).replace(_name(endpoint), "<endpoint>")] += 1
        return endpoint
    _wrappers.add(wrapper)
    counts["wrapped"] += 1
    return wrapper


def _patch_endpoints() -> None:
    original = routing.APIRoute.__init__

    @functools.wraps(original)
    def __init__(
        self: routing.APIRoute, path: str, endpoint: Any, *args: Any, **kwargs: Any
    ) -> None:
        original(self, path, _wrap(endpoint), *args, **kwargs)

    routing.APIRoute.__init__ = __init__  # type: ignore[method-assign]


def _patch_route_class() -> None:
    route_class = getattr(orjson_dispatch, "DispatchRoute", None)
    if route_class is None:
        msg = f"{MODE_VARIABLE}=route needs orjson_dispatch.DispatchRoute, which this version lacks"
        raise pytest.UsageError(msg)
    original_router = routing.APIRouter.__init__
    original_route = routing.APIRoute.__init__

    @functools.wraps(original_router)
    def router_init(self: routing.APIRouter, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("route_class", routing.APIRoute) is routing.APIRoute:
            kwargs["route_class"] = route_class
        original_router(self, *args, **kwargs)

    @functools.wraps(original_route)
    def route_init(self: routing.APIRoute, *args: Any, **kwargs: Any) -> None:
        counts["DispatchRoute" if isinstance(self, route_class) else "other route class"] += 1
        original_route(self, *args, **kwargs)

    routing.APIRouter.__init__ = router_init  # type: ignore[method-assign]
    routing.APIRoute.__init__ = route_init  # type: ignore[method-assign]
    # FastAPI's request bodies are small: orjson parses them too (not json.loads, as it does
    # bodies of up to 2 KB), so that the suite checks orjson's parse.
    request_body = getattr(orjson_dispatch, "_request_body", None)
    if request_body is not None:
        request_body._SMALL = -1


def mode() -> str:
    """The mode named by ORJSON_DISPATCH_SUITE_MODE (default ``dispatch``)."""
    chosen = os.environ.get(MODE_VARIABLE, "dispatch")
    if chosen not in MODES:
        msg = f"{MODE_VARIABLE}={chosen!r}: the modes are {', '.join(MODES)}"
        raise pytest.UsageError(msg)
    return chosen


def pytest_configure(config: pytest.Config) -> None:
    if mode() == "dispatch":
        _patch_endpoints()
    else:
        _patch_route_class()


def _runs_in_child(item: pytest.Item) -> bool:
    code = getattr(getattr(item, "function", None), "__code__", None)
    return code is not None and Path(code.co_filename).name == "_subprocess.py"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    in_child = [item for item in items if _runs_in_child(item)]
    if in_child:
        config.hook.pytest_deselected(items=in_child)
        items[:] = [item for item in items if item not in in_child]
        deselected.extend(item.nodeid for item in in_child)


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get(OUT_VARIABLE)
    if out:
        (Path(out) / f"routes-{os.getpid()}.json").write_text(json.dumps(dict(counts)))
        (Path(out) / f"deselected-{os.getpid()}.json").write_text(json.dumps(deselected))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if counts:  # in a run with xdist the workers built the routes, not this process
        terminalreporter.section(f"orjson-dispatch ({mode()} mode): routes built")
        for what, number in counts.most_common():
            terminalreporter.write_line(f"{number:6d}  {what}")
