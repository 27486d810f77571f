"""Every headline figure of the READMEs and the docs is a row of a committed benchmark result.

The results the pages quote are those of the ``--quick`` profile, committed in
``benchmarks/results/quick/``: the benchmarks page includes their summary
(``summary.md``, exactly what ``--render`` prints for them), and each figure quoted in prose
is listed below with the row it comes from, computed again here from the files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import summary
from benchmarks.cli import QUICK, RESULTS, load_results
from benchmarks.rounds import paired_ratios

ROOT = Path(__file__).resolve().parents[2]
QUICK_RESULTS = RESULTS / "quick"
PAGES = ["README.md", "orjson_dispatch/README.md", "uvicorn_keepalive/README.md"]
PAGES += ["docs/index.md", "docs/benchmarks.md"]

#: (page, the text around the figure, suite, cell, configuration, baseline): ``{}`` is the
#: median over the rounds of the paired ratio of the configuration to the baseline, as the
#: summary's tables format it. ``python -m tests.docs.test_figures`` prints them filled in.
BENCHMARKS = "docs/benchmarks.md"
RATIOS = [
    (BENCHMARKS, "on the training body `@dispatch` answered {}x the requests of FastAPI's typed",
     "serialization", "tokens-65536@c32", "dispatch-model", "typed"),
    (BENCHMARKS, "and `DispatchRoute` {}x (orjson", "serialization", "tokens-65536@c32",
     "dispatch-route", "typed"),
    (BENCHMARKS, "the limit: {}x)", "serialization", "tokens-65536@c32", "orjson-limit", "typed"),
    (BENCHMARKS, "on the tool-call turn `@dispatch` answered {}x", "serialization", "toolcall@c32",
     "dispatch-model", "typed"),
    (BENCHMARKS, "JSON Lines stream sent {}x the events per second", "streaming", "ready@c1",
     "dispatch-route-jsonl", "orjson-limit"),
    (BENCHMARKS, "{}x with 32 streams of bursts", "streaming", "burst8@c32",
     "dispatch-route-jsonl", "orjson-limit"),
    (BENCHMARKS, "cost uvicorn-keepalive {}x stock uvicorn's requests per second", "keepalive",
     "plain@c32+close", "keepalive", "stock"),
]  # fmt: skip
METRICS = {"serialization": "rps", "keepalive": "rps", "streaming": "events_per_s"}


def figure(suite: str, cell: str, config: str, baseline: str) -> str:
    """The median paired ratio of ``config`` to ``baseline`` on ``cell``, as tables show it."""
    rounds = summary.by_round(load_results(QUICK_RESULTS)[suite], METRICS[suite])
    ratio = paired_ratios(rounds[cell, config], rounds[cell, baseline])
    assert ratio is not None, (suite, cell, config, baseline)
    return summary.number(ratio.median)


def test_the_benchmarks_page_includes_the_summary_of_the_committed_quick_results() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert '--8<-- "benchmarks/results/quick/summary.md"' in page
    rendered = summary.render(load_results(QUICK_RESULTS))
    assert (QUICK_RESULTS / "summary.md").read_text() == rendered + "\n", (
        "run: .venv/bin/python -m benchmarks --render benchmarks/results/quick"
        " > benchmarks/results/quick/summary.md"
    )
    assert set(load_results(QUICK_RESULTS)) == {
        "serialization",
        "inprocess",
        "streaming",
        "keepalive",
    }


def test_the_quick_results_are_the_quick_profiles() -> None:
    """Each figure quoted is one ``--quick`` measures: the files are that profile's, whole."""
    found = load_results(QUICK_RESULTS)
    for suite in ("serialization", "streaming", "keepalive"):
        assert "--quick" in found[suite]["run"]["command"]
        assert {c["name"] for c in found[suite]["configs"]} == QUICK.only[suite], suite
    for suite in ("serialization", "keepalive"):
        cells = {cell.key for cell in getattr(QUICK, suite)[0]}
        assert {c["key"] for c in found[suite]["cells"]} == cells, suite
    assert {c["key"] for c in found["streaming"]["cells"]} == set(QUICK.streaming[0])
    bodies = {name.split("/")[0] for name in summary.inprocess_benchmarks(found["inprocess"])}
    assert bodies == set(QUICK.inprocess[0])


@pytest.mark.parametrize("quoted", RATIOS, ids=lambda q: f"{q[0]}:{q[3]}:{q[4]}")
def test_a_quoted_figure_is_a_row_of_the_quick_results(quoted: tuple[str, ...]) -> None:
    page, text, *row = quoted
    expected = text.format(figure(*row))
    assert expected in re.sub(r"\s+", " ", (ROOT / page).read_text()), f"{page}: {expected!r}"


if __name__ == "__main__":
    for page, text, *row in RATIOS:
        print(f"{page}: {text.format(figure(*row))}")
