"""Whole HTTP cases for the typed parity test: a return type, a returned value, a route.

Also the option sets both parity tests draw: the route's ``response_model_*`` flags
(``ROUTE_FLAGS``), the encoder's options (``ENCODER_OPTIONS``), a response class.

``typed_cases()`` draws how the type is declared (return annotation, ``response_model`` or both),
the route's ``response_model_*`` options (include/exclude drawn from the model's fields), an
explicit response class now and then (``JSONResponse`` or a subclass whose ``__init__`` sets a
header), and the endpoint's shape (``endpoints.make``: function, partial or callable object, sync
or async, annotations evaluated or postponed).
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import Any

from hypothesis import note
from hypothesis import strategies as st

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import UNTYPED, Route
from tests.orjson_dispatch.strategies import endpoints
from tests.orjson_dispatch.strategies.hostile import RESPONSE_CLASSES
from tests.orjson_dispatch.strategies.returned import Returned, disguised_values, returned_values
from tests.orjson_dispatch.strategies.specs import TypeSpec, type_specs
from tests.orjson_dispatch.versions import FASTAPI, FASTAPI_NESTED_EXCLUDE_DEFAULTS

#: The route's boolean ``response_model_*`` flags, each present or not.
ROUTE_FLAGS = st.fixed_dictionaries(
    {},
    optional={
        "response_model_by_alias": st.booleans(),
        "response_model_exclude_unset": st.booleans(),
        "response_model_exclude_defaults": st.booleans(),
        "response_model_exclude_none": st.booleans(),
    },
)


#: The options of ``jsonable_encoder`` (and ``dumps``), each present or not.
ENCODER_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "by_alias": st.booleans(),
        "exclude_unset": st.booleans(),
        # Before FastAPI 0.140.9 a model inside a dict kept its defaults: not comparable there.
        **({"exclude_defaults": st.booleans()} if FASTAPI_NESTED_EXCLUDE_DEFAULTS else {}),
        "exclude_none": st.booleans(),
    },
)


#: An explicit response class, now and then (the default is FastAPI's own).
RESPONSE_CLASS_OPTIONS: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({}), st.just({}), st.sampled_from(RESPONSE_CLASSES).map(lambda c: {"response_class": c})
)


@dataclasses.dataclass(frozen=True)
class Shape:
    """How an endpoint is written (see ``endpoints.make``)."""

    kind: str
    is_async: bool
    postponed: bool

    def endpoint(self, value: Any, annotation: Any) -> Any:
        """A fresh endpoint of this shape returning ``value``, declared ``-> annotation``."""
        return endpoints.make(
            value,
            annotation,
            kind=self.kind,
            is_async=self.is_async,
            postponed=self.postponed,
        )


def _fastapi_serves(shape: Shape) -> bool:
    """Whether the installed FastAPI serves endpoints of this shape (test_route_endpoints.py)."""
    if shape.kind != "function" and shape.postponed and FASTAPI < (0, 123, 7):
        return False  # FastAPI evaluates postponed annotations of partials and objects from 0.123.7
    # FastAPI awaits an object's async __call__ from 0.124.
    return not (shape.kind == "object" and shape.is_async and FASTAPI < (0, 124))


shapes = st.builds(Shape, st.sampled_from(endpoints.KINDS), st.booleans(), st.booleans()).filter(
    _fastapi_serves
)


@dataclasses.dataclass(frozen=True)
class TypedCase:
    """A return type, the returned value, how the type is declared and the route options."""

    spec: TypeSpec
    returned: Returned
    declared: str
    options: dict[str, Any]
    shape: Shape

    def route(self, path: str, value: Any, *, decorate: bool) -> Route:
        """The route for this case, returning ``value``, optionally under ``@dispatch``."""
        annotation = {"annotation": self.spec.annotation, "response_model": UNTYPED}.get(
            self.declared, Any
        )
        options = dict(self.options)
        if self.declared != "annotation":
            options["response_model"] = self.spec.annotation
        endpoint = self.shape.endpoint(value, annotation)
        return Route(path, dispatch(endpoint) if decorate else endpoint, options)


def route_options(spec: TypeSpec) -> st.SearchStrategy[dict[str, Any]]:
    """The route's ``response_model_*`` options, with include/exclude drawn from model fields."""
    flags = ROUTE_FLAGS
    if spec.model is None or not spec.model.model_fields:
        return flags
    names = sorted(spec.model.model_fields)
    subsets = st.sets(st.sampled_from([*names, "not_a_field"]), max_size=len(names))
    return st.tuples(flags, st.none() | subsets, st.none() | subsets).map(
        lambda t: {
            **t[0],
            **({"response_model_include": t[1]} if t[1] is not None else {}),
            **({"response_model_exclude": t[2]} if t[2] is not None else {}),
        }
    )


@st.composite
def typed_cases(draw: st.DrawFn) -> TypedCase:
    """A typed endpoint case: type, returned value, declaration, route options, sync/async."""
    spec = draw(type_specs())
    return TypedCase(
        spec=spec,
        returned=draw(returned_values(spec) | disguised_values(spec)),
        declared=draw(st.sampled_from(["annotation", "annotation", "response_model", "both"])),
        options={
            **draw(route_options(spec) | st.builds(dict)),
            # An explicit response class switches FastAPI from dump_json to dump_python + render.
            **draw(RESPONSE_CLASS_OPTIONS),
        },
        shape=draw(shapes),
    )


def note_case(case: TypedCase) -> None:
    """Tell hypothesis what ``case`` is (``hypothesis.note``: shown with a failing example)."""
    note(f"declared {case.declared}: {case.spec.annotation!r} options={case.options}")
    note(f"endpoint: {case.shape}")
    if case.spec.model is not None:
        note(f"config: {case.spec.model.model_config}")
        note(f"fields: {case.spec.model.model_fields}")
        note(f"computed: {case.spec.model.model_computed_fields}")
    note(f"returned ({case.returned.how}): {short_repr(case.returned.value)}")


_REPR = reprlib.Repr()
_REPR.maxlevel = 8
_REPR.maxstring = _REPR.maxother = 200


def short_repr(value: Any) -> str:
    """``repr(value)``, shortened and cut 8 levels deep (values nest deeper than repr can go)."""
    return _REPR.repr(value)
