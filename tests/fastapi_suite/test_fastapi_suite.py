"""FastAPI's own test suite passes with every route served through orjson-dispatch.

The suite of the installed FastAPI (suite_runner.py fetches it) runs twice on 2 cores: as it is
(the baseline) and with dispatch_plugin.py, which wraps every APIRoute endpoint in `dispatch`
(or, in route mode, gives every router `orjson_dispatch.DispatchRoute`). Every test that passes
in the baseline must pass through dispatch, except those in expected_differences.txt. Tests
that cannot pass here (a missing tool, no network) fail or skip in both runs, which is fine.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

import orjson_dispatch
from tests.fastapi_suite import suite_runner
from tests.fastapi_suite.suite_runner import Run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

HERE = Path(__file__).resolve().parent
PYTEST_ARGS = ["-n", "2", "-q", "tests"]


def expected_differences() -> dict[str, str]:
    """Test id to reason, from expected_differences.txt."""
    listed = {}
    for line in (HERE / "expected_differences.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            test_id, separator, reason = line.partition(" -- ")
            assert separator, f"expected_differences.txt: no ' -- <reason>' in: {line}"
            assert reason.strip(), f"expected_differences.txt: empty reason in: {line}"
            listed[test_id.strip()] = reason.strip()
    return listed


@pytest.fixture(scope="module")
def baseline() -> Run:
    run = suite_runner.run(None, PYTEST_ARGS)
    # The suite really ran, with its dependencies installed (dev group): nearly all pass.
    assert run.count("passed") > 0.98 * len(run.outcomes), run.output[-5000:]
    return run


def missing(run: Run, test: str) -> dict[str, str]:
    """The outcome of a test that did not run: its module's collection error, if any."""
    module = run.outcomes.get(test.partition("::")[0], {})
    return {"outcome": "missing", "reason": module.get("reason", "")}


def compare(baseline: Run, through: Run, mode: str, summary: list[str]) -> None:
    listed = expected_differences()
    stale = [test for test in listed if baseline.outcomes.get(test, {}).get("outcome") != "passed"]
    assert not stale, (
        f"expected_differences.txt names tests that do not pass without dispatch: {stale}"
    )
    differences = {
        test: through.outcomes.get(test) or missing(through, test)
        for test, result in baseline.outcomes.items()
        if result["outcome"] == "passed"
        and through.outcomes.get(test, {}).get("outcome") != "passed"
    }
    unexpected = {test: result for test, result in differences.items() if test not in listed}
    routes = ", ".join(f"{number} {what}" for what, number in through.routes.most_common())
    summary.append(
        f"FastAPI {version('fastapi')} suite, {len(baseline.outcomes)} tests: "
        f"baseline {baseline.count('passed')} passed in {baseline.seconds:.0f}s; "
        f"{mode} mode {through.count('passed')} passed in {through.seconds:.0f}s; "
        f"{len(differences)} passed only without dispatch "
        f"({len(differences) - len(unexpected)} expected); routes: {routes}"
    )
    report = "\n".join(
        f"{test}: {result['outcome']}: {result['reason']}"
        for test, result in sorted(unexpected.items())
    )
    if unexpected:
        pytest.fail(
            f"{len(unexpected)} of FastAPI's tests pass without orjson-dispatch and fail with "
            f"it ({mode} mode):\n{report}",
            pytrace=False,
        )


def test_every_endpoint_wrapped_in_dispatch(baseline: Run, summary: list[str]) -> None:
    through = suite_runner.run("dispatch", PYTEST_ARGS)
    assert through.routes["wrapped"] > 0.9 * sum(through.routes.values()), through.routes
    compare(baseline, through, "dispatch", summary)


@pytest.mark.skipif(
    not hasattr(orjson_dispatch, "DispatchRoute"), reason="orjson_dispatch has no DispatchRoute"
)
def test_every_router_on_dispatch_route(baseline: Run, summary: list[str]) -> None:
    through = suite_runner.run("route", PYTEST_ARGS)
    assert through.routes["DispatchRoute"] > 0.9 * sum(through.routes.values()), through.routes
    compare(baseline, through, "route", summary)
