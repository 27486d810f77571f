"""Side-by-side benchmarks of orjson-dispatch and uvicorn-keepalive against their peers.

Run them with ``.venv/bin/python -m benchmarks`` (``--quick``: shorter runs); see
docs/benchmarks.md.
"""
