"""Write docs/benchmarks.md: how the benchmarks work, then the committed results."""

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.report import render

_INTRO = """\
# Benchmarks

Side-by-side benchmarks of `orjson-dispatch` and `uvicorn-keepalive` against what users run
today. Absolute numbers on a shared machine drift from run to run; ratios measured side by side
in one run, with the configurations interleaved, do not. That is why every figure below comes
with the ratio to its baselines, measured in the same round.

## Run them

```console
$ scripts/system-packages          # wrk, from Debian packages (as root)
$ scripts/bootstrap dev docs bench # the virtualenv with the bench dependency group
$ .venv/bin/python -m benchmarks           # the full suite, ~20-25 minutes
$ .venv/bin/python -m benchmarks --quick   # about two minutes, into benchmarks/results/quick/
```

The full run writes `benchmarks/results/results.json` (every raw measurement and the machine
description), `benchmarks/results/results.md` (the tables below) and the PNG plots, and
regenerates this page. `--only serialization,inprocess,streaming,keepalive,connections`
runs a subset (add `--update` to merge it into the committed results, keeping the other suites'
figures); `--render benchmarks/results/results.json` redraws tables, plots and this page
from a results file without measuring.

## Method

- **Servers.** Every configuration is its own uvicorn process (1 worker unless stated,
  `--http httptools`, `--loop uvloop`, no access log) on 127.0.0.1 and a free port, started
  and stopped by the harness. Before measuring, the harness checks that every configuration
  answers every body with the same JSON document.
- **Load.** [wrk](https://github.com/wg/wrk) with one thread on loopback (the server gets one
  core, wrk the other), `--latency` percentiles from a Lua `done` hook. A run lasts at least
  the profile's duration and long enough for ~15 requests of slow configurations. After each
  run the harness waits until the server is idle again: wrk leaves one request in flight per
  connection, which uvicorn still computes. A run whose leftover work would exceed 10 s
  (256 connections on the slowest configurations) is skipped and listed.
- **Interleaving.** Rounds (at least 3) go over every workload; within a round the
  configurations of a workload run back to back, their order rotated each round. Tables show
  the median over rounds with min-max; ratios are the median of the per-round ratios.
- **Bodies** (`benchmarks/bodies.py`, deterministic): an OpenAI-style response whose `output`
  list is a discriminated union of a message and a function call, plus the prompt's token ids
  and the generated token ids and logprobs (float32 values, as inference engines return
  them). `tokens-N` has N generated tokens and N/16 prompt tokens: `tokens-65536` is the
  training body (~1.7 MB), `tokens-1024` ~31 KB, `tokens-32` ~4.5 KB, `tokens-1536` (the
  small body of the goals) ~45 KB. `toolcall` is an agent turn of 36 output items with nested
  content (~37 KB).
- **Configurations** (`benchmarks/apps/fastapi_app.py`, one FastAPI app): `untyped` returns
  the model without annotation (FastAPI's `jsonable_encoder` + `json.dumps`); `typed`
  declares `-> ResponseModel` (validation + Pydantic's `dump_json`, FastAPI >= 0.130);
  `orjson-response` is typed with `response_class=ORJSONResponse` (still shipped by FastAPI
  0.165 but **deprecated**: it now costs `model_dump` + `orjson.dumps`); `starlette-json`
  returns `JSONResponse(d)` on the ready dict; `dispatch-model` and `dispatch-dict` use
  `@dispatch` returning the model (typed) and the ready dict (untyped); `orjson-limit`
  returns `Response(orjson.dumps(d))` on a ready dict (orjson's limit) and `bytes-limit`
  returns bytes serialized at startup (the transport's limit). `litestar` serves the same data
  as msgspec Structs from Litestar (`benchmarks/apps/litestar_app.py`).
- **Serialization alone** is timed in process by [pyperf](https://pyperf.readthedocs.io/):
  worker processes, calibrated loops, warmups, the machine's metadata. Its file is also
  written as `benchmarks/results/inprocess.json`, so that `python -m pyperf compare_to
  OLD.json benchmarks/results/inprocess.json` compares two runs.
- **Streaming** (`benchmarks/apps/streaming_app.py`): small OpenAI `chat.completion.chunk`
  events (a chunk holds choices holding a delta) streamed as JSON Lines by FastAPI's
  generator endpoints (`-> AsyncIterable[Chunk]`, FastAPI >= 0.134) and untyped (dicts), as
  Server-Sent Events by FastAPI's `EventSourceResponse` (FastAPI >= 0.135), typed and
  untyped, and by sse-starlette, against a hand-written `StreamingResponse` of
  `orjson.dumps(d)` lines (the limit). A client on asyncio and h11 reads whole streams: the
  time per event of one stream, the time between events under 32 concurrent streams, and
  the server's VmRSS over one long stream. FastAPI adds an `anyio.sleep(0)` after each event
  (a cancellation point), its SSE a producer task and memory streams; the limit yields
  without pausing, so under concurrent streams it sends until the socket buffer is full
  and readers of the other streams wait longer. The orjson-dispatch streaming
  configurations join once the package ships them (`DISPATCH_STREAMING_CONFIGS` in
  `benchmarks/configs.py`).
- **Keepalive.** A raw ASGI app answering `{}` (`benchmarks/apps/plain.py`), 32 connections,
  with `Connection: close` (a new TCP connection per request) and with long-lived
  connections; stock `HttpToolsProtocol` against `uvicorn_keepalive.Protocol`, with 1 and 2
  workers, and a second stock server (`stock-b`) whose ratio to the first (an A/A
  comparison) shows how far apart two identical servers measure: the noise floor against
  which the 0.97x goal is read. The cost behind it is also measured in process: the time of
  `connection_made` per accepted connection (where uvicorn-keepalive does all its work) for
  both protocols under uvloop and asyncio, interleaved over rounds.

## Results

"""


def write(
    results: dict[str, Any], plot_dir: Path, docs_dir: Path, notes: str, plots: Sequence[str]
) -> Path:
    """Write ``docs_dir/benchmarks.md`` and copy the plots to ``docs_dir/assets/benchmarks``.

    ``notes`` (hand-written Markdown) is shown after the goal table; ``plots`` are the file
    names of the plots drawn into ``plot_dir``. Images of other plots are removed.

    Returns:
        The page's path.
    """
    assets = docs_dir / "assets" / "benchmarks"
    assets.mkdir(parents=True, exist_ok=True)
    for stale in assets.glob("*.png"):
        stale.unlink()
    for name in plots:
        shutil.copyfile(plot_dir / name, assets / name)
    page = docs_dir / "benchmarks.md"
    page.write_text(_INTRO + render(results, "assets/benchmarks/", notes, plots) + "\n")
    return page
