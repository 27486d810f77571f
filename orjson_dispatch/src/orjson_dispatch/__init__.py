"""FastAPI and Starlette endpoints answered at orjson speed."""

__all__: list[str] = []
__version__ = "0.1.0"
