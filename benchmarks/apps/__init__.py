"""The ASGI applications the load benchmarks start, each in its own uvicorn process."""
