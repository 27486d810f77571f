"""pytest plugin: record the outcome of every test of the run in a JSON file.

Loaded with ``-p outcome_plugin`` in both runs of FastAPI's suite, the baseline and the one
through orjson-dispatch; it changes nothing in the run. The file, ``outcomes.json`` in the
directory named by ``ORJSON_DISPATCH_SUITE_OUT``, maps each test id (a module's id for a
module that failed to import) to ``passed``, ``failed``, ``error`` (in setup or teardown),
``skipped``, ``xfailed`` or ``xpassed``, with the first line of the failure as ``reason``.
With xdist the controller receives every worker's reports and writes the file alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

OUT_VARIABLE = "ORJSON_DISPATCH_SUITE_OUT"

outcomes: dict[str, dict[str, str]] = {}


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None) or str(report.longrepr)
    lines = message.strip().splitlines()
    return lines[0] if lines else ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    recorded = outcomes.get(report.nodeid)
    if recorded is not None and recorded["outcome"] in ("failed", "error"):
        return  # the first failure of a test is its outcome (teardown may fail again)
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    elif report.failed:
        outcome = "failed" if report.when == "call" else "error"
    elif report.skipped:
        outcome = "skipped"
    elif report.when == "call":
        outcome = "passed"
    else:
        return  # a passing setup or teardown says nothing yet
    outcomes[report.nodeid] = {
        "outcome": outcome,
        "reason": _reason(report) if report.failed else "",
    }


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        outcomes[report.nodeid] = {"outcome": "error", "reason": _reason(report)}
    elif report.skipped:  # a module that skips itself (pytest.importorskip)
        outcomes[report.nodeid] = {"outcome": "skipped", "reason": ""}


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get(OUT_VARIABLE)
    if out and not hasattr(session.config, "workerinput"):
        (Path(out) / "outcomes.json").write_text(json.dumps(outcomes, indent=0, sort_keys=True))


def pytest_report_header(config: pytest.Config) -> Any:
    return f"outcome_plugin: writing outcomes to {os.environ.get(OUT_VARIABLE) or 'nowhere'}"
