"""Side-by-side benchmarks of orjson-dispatch and uvicorn-keepalive against their peers.

Run the whole suite with ``python -m benchmarks`` (``--quick`` for a two-minute version); see
docs/benchmarks.md.
"""
