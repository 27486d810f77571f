"""gunicorn workers serving with `uvicorn_keepalive.Protocol` (the ``gunicorn`` extra).

``gunicorn -k uvicorn_keepalive.workers.UvicornWorker app:app``. gunicorn's arbiter imports
this module before it forks a worker: a bad variable ends the arbiter there with status 3.
"""

from typing import Any, ClassVar

from uvicorn_worker import UvicornWorker as _UvicornWorker

from uvicorn_keepalive import H11Protocol, Protocol


class UvicornWorker(_UvicornWorker):  # type: ignore[misc]  # uvicorn-worker is untyped
    """uvicorn-worker's worker serving with `uvicorn_keepalive.Protocol`."""

    CONFIG_KWARGS: ClassVar[dict[str, Any]] = {"loop": "auto", "http": Protocol}


class UvicornH11Worker(UvicornWorker):
    """The same with `uvicorn_keepalive.H11Protocol` on the asyncio loop."""

    CONFIG_KWARGS: ClassVar[dict[str, Any]] = {"loop": "asyncio", "http": H11Protocol}
