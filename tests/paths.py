"""Where the tests find the repository: ``ROOT``, its top folder (the one with pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
