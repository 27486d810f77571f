"""Side-by-side benchmarks of orjson-dispatch and uvicorn-keepalive against their peers.

Run them with ``.venv/bin/python -m benchmarks`` (``--quick`` for a few minutes' subset); see
docs/benchmarks.md.
"""
