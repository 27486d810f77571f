"""Installed as tests/protocols/conftest.py of uvicorn's own test suite (see test_uvicorn_suite.py).

It replaces uvicorn's ``http_protocol_cls`` fixture: every test of
tests/protocols/test_http.py that takes it runs with ``uvicorn_keepalive.Protocol`` and
``uvicorn_keepalive.H11Protocol`` instead of uvicorn's classes. Tests that do not take the
fixture exercise uvicorn's own classes only and are deselected.
"""

from __future__ import annotations

import pytest

import uvicorn_keepalive

# uvicorn skips this test for httptools by class name (``__name__ ==
# "HttpToolsProtocol"``); Protocol is httptools under another name.
_SKIPPED_FOR_HTTPTOOLS_BY_NAME = "test_keepalive_timeout_with_pipelined_websocket_upgrade"


@pytest.fixture(
    params=[
        pytest.param(uvicorn_keepalive.Protocol, id="uvicorn_keepalive.Protocol"),
        pytest.param(uvicorn_keepalive.H11Protocol, id="uvicorn_keepalive.H11Protocol"),
    ]
)
def http_protocol_cls(request: pytest.FixtureRequest) -> type:
    cls: type = request.param
    return cls


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept = []
    for item in items:
        if "http_protocol_cls" not in getattr(item, "fixturenames", ()):
            config.hook.pytest_deselected(items=[item])
            continue
        if (
            getattr(item, "originalname", "") == _SKIPPED_FOR_HTTPTOOLS_BY_NAME
            and "[uvicorn_keepalive.Protocol" in item.name
        ):
            item.add_marker(pytest.mark.skip(reason="uvicorn skips it for httptools by class name"))
        kept.append(item)
    items[:] = kept
