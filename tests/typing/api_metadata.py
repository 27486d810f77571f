# pyright: strict
"""What both distributions' modules declare about themselves, as their users read it.

Never run, only type-checked (``mypy --strict`` and ``pyright`` strict): a literal version
string and a list of the public names.
"""

from __future__ import annotations

import orjson_dispatch
import uvicorn_keepalive

versions: tuple[str, str] = (orjson_dispatch.__version__, uvicorn_keepalive.__version__)
public: tuple[list[str], list[str]] = (orjson_dispatch.__all__, uvicorn_keepalive.__all__)
