"""TCP keepalive on every connection uvicorn accepts."""

__all__: list[str] = []
__version__ = "0.1.0"
