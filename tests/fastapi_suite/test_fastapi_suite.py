"""FastAPI's own test suite passes with every route served through orjson-dispatch.

The suite of the installed FastAPI (suite_runner.py fetches it) runs in one process with
dispatch_plugin.py, which wraps every APIRoute endpoint in `dispatch` (or, in route mode, gives
every router `orjson_dispatch.DispatchRoute`). Then every test that did not pass runs again
without orjson-dispatch (the baseline): each one that passes in the baseline and not through
dispatch is a difference, and must be listed in expected_differences.txt. The tests that run
their body in a child interpreter, which the plugin does not reach, are left out (they would
test FastAPI alone). Tests that cannot pass here (a missing tool, no network) fail or skip in
both runs, which is fine.

Not pytest-xdist's workers: each worker would import the whole suite again (a fifth of the
run's CPU time), and two workers share the working directory, where some of FastAPI's tests
fail beside another module's fixture (a static/ directory it removes) under FastAPI too. Route
mode runs in one process; dispatch mode in two side by side, the tutorials (where every such
fixture is) and the rest (`suite_runs`), so that it does not end long after our other tests.
The two tests of this module run beside each other and beside the rest of our suite.

The baseline runs only the tests that did not pass because a full baseline run costs as much
as a run through dispatch, and the CI's whole budget is 4 minutes on 2 cores; the outcomes are
the same, since a test that passes through dispatch is no difference whatever the baseline says.
For a full baseline by hand: ``.venv/bin/python tests/fastapi_suite/suite_runner.py --baseline``.

Route mode runs the part of the suite about what DispatchRoute takes over from FastAPI's own
route (`ROUTE_MODE_FILES`: streams, response classes, models and fields, validation errors,
telemetry, route classes and router inclusion, JSON request bodies), about a third of the tests,
for the same budget reason: the whole suite takes as long in route mode as in dispatch mode.
The whole suite in route mode by hand:
``.venv/bin/python tests/fastapi_suite/suite_runner.py --mode route -n 2``.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

import orjson_dispatch
from tests.fastapi_suite import suite_runner
from tests.fastapi_suite.suite_runner import Run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

HERE = Path(__file__).resolve().parent
# The paths, relative to the suite, of the test files route mode runs.
ROUTE_MODE_FILES = re.compile(
    r"stream|sse|server_sent|response|serializ|validation_error|telemetry|route_handler"
    r"|route_class|include_router|router_include|dump_json|wrapped"
    # JSON request bodies, which DispatchRoute parses with orjson: their content types, limits and
    # errors, and requests read directly or through a custom request class.
    r"|body|content_type|json_type|custom_request|using_request"
)


def suite_runs(mode: str) -> list[list[str]]:
    """The test paths of each run of `mode`, the runs side by side: in dispatch mode the
    tutorials and the rest of `tests`, so that the longest test of our suite (a minute and a
    half of one core in one run) does not end after all the others (every test that makes or
    removes a directory in the working directory, which the runs share, is a tutorial's); in
    route mode `ROUTE_MODE_FILES`."""
    if mode == "dispatch":
        return [["tests/test_tutorial"], ["tests", "--ignore=tests/test_tutorial"]]
    root = suite_runner.fastapi_tests()
    return [
        sorted(
            str(path.relative_to(root))
            for path in (root / "tests").rglob("test_*.py")
            if ROUTE_MODE_FILES.search(str(path.relative_to(root)))
        )
    ]


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


def outcome(run: Run, test: str) -> dict[str, str]:
    """The outcome of `test` in `run`; for a test that did not run, its module's error, if any."""
    module = run.outcomes.get(test.partition("::")[0], {})
    return run.outcomes.get(test) or {"outcome": "missing", "reason": module.get("reason", "")}


def check_suite(mode: str, summary: list[str]) -> None:
    through = suite_runner.run_side_by_side(mode, [["-q", *paths] for paths in suite_runs(mode)])
    # Tests (or modules that failed to import) that did not pass run again without dispatch.
    again = sorted(
        test for test, result in through.outcomes.items() if result["outcome"] != "passed"
    )
    baseline = suite_runner.run(None, ["-q", *again]) if again else Run({})
    # The suite really ran, with its dependencies installed (dev group): nearly all pass.
    assert len(through.outcomes) > {"dispatch": 4000, "route": 500}[mode], through.output[-5000:]
    failing = len(baseline.outcomes) - baseline.count("passed") - baseline.count("skipped")
    assert failing < 0.02 * len(through.outcomes), baseline.output[-5000:]

    listed = expected_differences()
    unknown = [test for test in listed if outcome(through, test)["outcome"] == "missing"]
    assert not unknown, f"expected_differences.txt names tests FastAPI's suite lacks: {unknown}"
    differences = {
        test: outcome(through, test)
        for test, result in baseline.outcomes.items()
        if result["outcome"] == "passed" and outcome(through, test)["outcome"] != "passed"
    }
    unexpected = {test: result for test, result in differences.items() if test not in listed}
    routes = ", ".join(f"{number} {what}" for what, number in through.routes.most_common())
    summary.append(
        f"FastAPI {version('fastapi')}, {mode} mode: {len(through.outcomes)} tests, "
        f"{through.count('passed')} passed in {through.seconds:.0f}s "
        f"({len(through.deselected)} run in a child interpreter deselected); routes: {routes}; "
        f"of the {len(again)} others, {baseline.count('passed')} passed without dispatch; "
        f"{len(differences)} differences "
        f"({len(differences) - len(unexpected)} expected)"
    )
    report = "\n".join(
        f"{test}: {result['outcome']}: {result['reason']}"
        for test, result in sorted(unexpected.items())
    )
    if unexpected:
        pytest.fail(
            f"{len(unexpected)} of FastAPI's tests pass without orjson-dispatch and fail with "
            f"it ({mode} mode):\n{report}\n(for the messages of the failing asserts, run them "
            f"by hand: .venv/bin/python tests/fastapi_suite/suite_runner.py --mode {mode} ID...)",
            pytrace=False,
        )
    assert through.routes[{"dispatch": "wrapped", "route": "DispatchRoute"}[mode]] > 0.9 * sum(
        through.routes.values()
    ), through.routes


def test_every_endpoint_wrapped_in_dispatch(summary: list[str]) -> None:
    check_suite("dispatch", summary)


@pytest.mark.skipif(
    not hasattr(orjson_dispatch, "DispatchRoute"), reason="orjson_dispatch has no DispatchRoute"
)
def test_every_router_on_dispatch_route(summary: list[str]) -> None:
    check_suite("route", summary)
