"""The ASGI applications the benchmarks run, each configuration in its own uvicorn process."""
