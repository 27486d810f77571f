"""Hypothesis strategies for the parity tests of orjson_dispatch against FastAPI.

* ``leaves``: leaf values (numbers of every size, awkward text, temporal types, numpy, ...)
  and the sample classes values are built from;
* ``untyped``: ``untyped_values()``, arbitrary values for FastAPI's untyped path;
* ``specs``: ``type_specs()``, annotations for typed endpoints (generated pydantic models
  included) with strategies for values that validate against them;
* ``returned``: ``returned_values(spec)`` and ``disguised_values(spec)``, what an endpoint declared
  ``-> spec.annotation`` may return (valid values and stand-ins for them);
* ``http_cases``: ``typed_cases()``, whole typed endpoint cases for the HTTP parity test, and
  ``shapes``/``RESPONSE_CLASS_OPTIONS`` shared with the untyped one;
* ``hostile``: classes whose protocols disagree with what they hold (enums whose value is not
  their content, dicts hiding keys, sequences iterating in another order, response classes
  setting headers);
* ``unvalidated``: model fields assigned without validation;
* ``endpoints``: endpoints as functions, partials and callable objects, annotations evaluated
  or postponed.

``examples(count)`` is a test's example count under the active hypothesis profile
(``tests/hypothesis_runs.py``, the one place that sizes hypothesis runs).
"""

from __future__ import annotations

from tests.hypothesis_runs import examples

__all__ = ["examples"]
