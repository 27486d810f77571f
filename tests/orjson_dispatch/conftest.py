"""Hypothesis profiles for the orjson_dispatch tests.

``HYPOTHESIS_PROFILE=thorough`` multiplies every parity test's example count by ten (for a long
local run); the default profile is what CI runs. Example counts are per test (see
``tests.orjson_dispatch.strategies.examples``); the profiles set what every test shares.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_SHARED = {
    "deadline": None,
    # Generated model classes and whole FastAPI apps per example are slow and large by design.
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
    "print_blob": True,
}
settings.register_profile("default", **_SHARED)  # type: ignore[arg-type]
settings.register_profile("thorough", **_SHARED)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
