"""Every headline figure of the READMEs and the docs is a row of a committed benchmark result.

The results the pages quote are those of the ``--quick`` profile, committed in
``benchmarks/results/quick/``: the benchmarks page holds their summary between two markers
(exactly what ``--render`` prints for them), and each figure quoted in prose is listed below
with the row it comes from, computed again here from the files; a ratio or a time in the
prose of a page that no listed sentence accounts for fails.
``python -m tests.docs.test_figures`` prints the quoted sentences as the files have them;
``--write`` rewrites the summary on the benchmarks page.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

import pytest

from benchmarks import inprocess, keepalive, requests, serialization, streaming, summary
from benchmarks.cli import RESULTS, SUITES, load_results, render
from benchmarks.summary import paired_ratios
from bodies import IN_PROCESS

ROOT = Path(__file__).resolve().parents[2]
QUICK_RESULTS = RESULTS / "quick"
PAGES = ["README.md", "orjson_dispatch/README.md", "uvicorn_keepalive/README.md"]
PAGES += ["docs/index.md", "docs/getting-started.md", "docs/keepalive.md", "docs/dispatch.md"]
PAGES += ["docs/benchmarks.md"]

#: (page, the text around the figure, suite, cell, configuration, baseline): ``{}`` is the
#: median over the rounds of the paired ratio of the configuration to the baseline, as the
#: summary's tables format it. ``python -m tests.docs.test_figures`` prints them filled in.
BENCHMARKS = "docs/benchmarks.md"
RATIOS = [
    (BENCHMARKS, "on the training body `@dispatch` answered {}x the requests of FastAPI's typed",
     "serialization", "tokens-65536@c32", "dispatch-model", "typed"),
    (BENCHMARKS, "and `DispatchRoute` {}x (orjson", "serialization", "tokens-65536@c32",
     "dispatch-route", "typed"),
    (BENCHMARKS, "the limit: {}x)", "serialization", "tokens-65536@c32", "orjson-limit",
     "typed"),
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
#: (page, the text around the figure, body, approach): ``{}`` is the median time of the
#: approach on the validated body in ms.
INPROCESS = [
    ("README.md", "FastAPI's untyped path (`jsonable_encoder` + `json.dumps`) takes {} ms",
     "sdk-training", "jsonable-encoder"),
    ("README.md", "`orjson_dispatch.dumps` on the same model {} ms", "sdk-training",
     "dumps-untyped"),
]  # fmt: skip
#: (page, the text around the figure, suite, cell, configuration, percentile): ``{}`` is the
#: median over the rounds of wrk's latency percentile, in ms.
LATENCIES = [
    ("README.md", "delayed ACK ({} ms p50", "keepalive", "plain@c1",
     "stock-asyncio-w2", "p50"),
    ("README.md", "against {} ms with uvicorn-keepalive in the `--quick`", "keepalive",
     "plain@c1", "keepalive-asyncio-w2", "p50"),
    ("uvicorn_keepalive/README.md", "delayed ACK ({} ms p50 per request on a reused",
     "keepalive", "plain@c1", "stock-asyncio-w2", "p50"),
    ("docs/keepalive.md", "({} ms p50 in the `--quick` keepalive suite", "keepalive",
     "plain@c1", "stock-asyncio-w2", "p50"),
    ("docs/keepalive.md", "against {} ms with uvicorn-keepalive: the", "keepalive",
     "plain@c1", "keepalive-asyncio-w2", "p50"),
]  # fmt: skip


def figure(suite: str, cell: str, config: str, baseline: str) -> str:
    """The median paired ratio of ``config`` to ``baseline`` on ``cell``, as tables show it."""
    rounds = summary.by_round(load_results(QUICK_RESULTS)[suite], METRICS[suite])
    ratio = paired_ratios(rounds[cell, config], rounds[cell, baseline])
    assert ratio is not None, (suite, cell, config, baseline)
    return summary.number(ratio.median)


START = "<!-- summary of benchmarks/results/quick: python -m tests.docs.test_figures --write -->\n"
END = "<!-- end of the summary -->\n"


def page_with_summary() -> str:
    """The benchmarks page with the summary of the committed quick results between the markers."""
    page = (ROOT / BENCHMARKS).read_text()
    before, rest = page.split(START)
    return (
        before
        + START
        + "\n"
        + render(load_results(QUICK_RESULTS))
        + "\n"
        + END
        + rest.split(END)[1]
    )


def test_the_benchmarks_page_holds_the_summary_of_the_committed_quick_results() -> None:
    assert (ROOT / BENCHMARKS).read_text() == page_with_summary(), (
        "python -m tests.docs.test_figures --write"
    )
    assert set(load_results(QUICK_RESULTS)) == set(SUITES)


def test_the_quick_results_hold_every_configuration_and_cell_of_each_script() -> None:
    """Each figure quoted is one ``--quick`` measures: the files are the scripts' runs, whole."""
    found = load_results(QUICK_RESULTS)
    for suite in SUITES:
        assert "--quick" in found[suite]["run"]["command"], suite
    measured = {
        "serialization": (serialization.CONFIGS, serialization.CELLS),
        "requests": (requests.CONFIGS, requests.CELLS),
        "keepalive": (keepalive.CONFIGS, keepalive.CELLS),
        "streaming": (streaming.CONFIGS, streaming.cells(streaming.EVENTS)),
    }
    for suite, (configs, cells) in measured.items():
        assert {c["name"] for c in found[suite]["configs"]} == {c.name for c in configs}, suite
        assert {c["key"] for c in found[suite]["cells"]} == {c.key for c in cells}, suite
    assert {s["body"] for s in found["inprocess"]["samples"]} == set(IN_PROCESS)


def median_ms(body: str, approach: str) -> str:
    """The median time of ``approach`` on the validated ``body`` in ms, as tables format it."""
    found = inprocess.ratios(load_results(QUICK_RESULTS)["inprocess"], body, "validated")
    return summary.number(found[approach]["us"] / 1e3)


def latency_ms(suite: str, cell: str, config: str, percentile: str) -> str:
    """The median over the rounds of a wrk latency percentile, in ms."""
    rounds = summary.by_round(load_results(QUICK_RESULTS)[suite], "latency_us", percentile)
    return summary.number(statistics.median(rounds[cell, config].values()) / 1e3)


def quoted() -> list[tuple[str, str]]:
    """Every quoted sentence with its figure from the files: (page, text)."""
    return [
        *((page, text.format(figure(*row))) for page, text, *row in RATIOS),
        *((page, text.format(median_ms(*row))) for page, text, *row in INPROCESS),
        *((page, text.format(latency_ms(*row))) for page, text, *row in LATENCIES),
    ]


@pytest.mark.parametrize("index", range(len(RATIOS) + len(INPROCESS) + len(LATENCIES)))
def test_every_quoted_figure_is_a_row_of_the_quick_results(index: int) -> None:
    page, expected = quoted()[index]
    assert expected in re.sub(r"\s+", " ", (ROOT / page).read_text()), f"{page}: {expected!r}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        (ROOT / BENCHMARKS).write_text(page_with_summary())
    for page, text in quoted():
        print(f"{page}: {text}")


#: Figures in prose that are settings, not measurements.
SETTINGS = {"docs/benchmarks.md": ["one chunk every ~1 ms"]}
#: A measured figure in prose: a ratio (``1.35x``) or a time (``7.53 ms``, ``2.5 us``).
_FIGURE = re.compile(r"(?<![\w.])\d[\d.]*(?:x|\s?(?:ms|us|µs))(?![\w-])")


def unquoted_figures(page: str) -> list[str]:
    """The figures of ``page``'s prose that no quoted sentence accounts for."""
    text = (ROOT / page).read_text()
    if START in text:
        text = text.split(START)[0] + text.split(END)[1]
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"\s+", " ", text)
    for quoted_page, sentence in quoted():
        text = text.replace(sentence, "") if quoted_page == page else text
    for setting in SETTINGS.get(page, []):
        text = text.replace(setting, "")
    text = re.sub(r"`[^`]*`", "", text)  # code spans: values, not figures
    return _FIGURE.findall(text)


@pytest.mark.parametrize("page", PAGES)
def test_no_page_quotes_a_figure_the_list_does_not_trace_to_a_row(page: str) -> None:
    assert unquoted_figures(page) == []
