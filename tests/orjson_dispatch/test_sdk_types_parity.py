"""Values of the ``openai`` and ``anthropic`` SDKs' root types, drawn from their fields, written
by ``dumps`` as FastAPI writes them, to each tier of the encoding contract (docs/dispatch.md,
"Encoding rules").

The types are a sample of the SDKs' root types, the models no other model has as a field (what a
server sends whole: responses, stream events, webhook payloads, the items of list pages; every
other model is a part of one), with the reference shapes servers answer most
(``sdk_types.sampled_roots``): the tests cover the SDKs' own shapes, where
``test_sdk_corpus.py`` covers the bodies of model servers. Each value is the JSON a server sends
for its type (``sdk_types.wire_data``), built as servers build it:

* validated (``Model.model_validate``) and by the SDK's own ``construct`` (recursive, no
  validation: an int no float holds exactly stays an int in a ``float`` field, a key that is an
  alias is kept as an extra too; both SDKs name it ``model_construct`` too):
  tier 1, FastAPI's JSON exactly, the same JSON value (numbers with their JSON type) and the
  same keys in the same order;
* then changed as a type checker accepts and validation would not produce (``sdk_types.mutated``:
  an int in a ``float`` field, a bool in an ``int`` field, ``None`` in an ``Optional`` field, an
  item appended to a list): tier 2, the same JSON, but for the items of containers declared with
  a scalar type, written as held (``oracles.same_json_or_held``);
* by pydantic's own ``BaseModel.model_construct`` (not recursive: nested objects stay dicts,
  dates strings, which pydantic warns of): tier 3, never a key FastAPI would not send, and
  never an answer where FastAPI fails.

Each value is written untyped and typed (declared as its class, or a list of it), with the
encoder's options drawn (``by_alias``, ``exclude_*``, ``include``/``exclude``); FastAPI's
answers are the oracles' (``oracles.fastapi_untyped``: ``jsonable_encoder`` and
``JSONResponse``; ``oracles.fastapi_typed``: the value validated against the declared type,
then pydantic's ``dump_json``). The contract promises the JSON and
its key order, not the bytes (orjson writes ``5e-8`` where ``json.dumps`` writes ``5e-08``),
which is what is compared. Where FastAPI's body repeats a key
(pydantic writes an aliased field and an extra of the same name, which the SDKs' ``construct``
keeps), bodies are compared as a JSON parser reads them, the last value in the first key's
place; ``test_repeated_keys_are_written_as_fastapi_writes_them`` pins that difference.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from anthropic.types import BrowserLeftClickDragInput
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from orjson_dispatch import dumps
from tests.orjson_dispatch.compare import json_pairs, outcome, same_json
from tests.orjson_dispatch.oracles import (
    fastapi_typed,
    fastapi_untyped,
    held_as_written,
    same_json_or_held,
)
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.http_cases import ENCODER_OPTIONS
from tests.orjson_dispatch.strategies.sdk import SdkCase, field_selections
from tests.orjson_dispatch.strategies.sdk_types import (
    mutated,
    qualified_name,
    sampled_roots,
    wire_data,
)
from tests.orjson_dispatch.strategies.unvalidated import holds_unvalidated

SAMPLE = sampled_roots(examples(24))
BY_TYPE = pytest.mark.parametrize("cls", SAMPLE, ids=[qualified_name(cls) for cls in SAMPLE])
#: pydantic warns of the dicts and strings ``model_construct`` leaves where models and dates are
#: declared, on both sides (the oracles and ``dumps`` call pydantic's serializer).
SERIALIZER_WARNINGS = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")

Body = bytes | Exception


def built(cls: type[BaseModel], data: dict[str, Any], how: str) -> BaseModel:
    """``cls`` holding ``data``: validated, by the SDK's ``construct``, or by pydantic's own
    ``model_construct`` (which the SDKs' ``model_construct`` hides)."""
    if how == "validated":
        return cls.model_validate(data)
    if how == "construct":
        return cls.construct(**data)
    return BaseModel.model_construct.__func__(cls, **data)  # type: ignore[attr-defined, no-any-return]


@st.composite
def answers(
    draw: st.DrawFn, cls: type[BaseModel], value: BaseModel, wire: dict[str, Any]
) -> list[tuple[str, Body, Body]]:
    """FastAPI's and ``dumps``'s bodies for ``value`` (built from ``wire``), untyped and typed
    (as ``cls`` or a list of it), with the encoder's options drawn, and for a value alone its
    ``include``/``exclude`` (``sdk.field_selections``): ``(path, FastAPI's, ours)`` each."""
    options = draw(ENCODER_OPTIONS)
    as_list = draw(st.booleans())
    if not as_list:
        options |= draw(field_selections(SdkCase(qualified_name(cls), cls, wire, "validated")))
    declared: Any = list[cls] if as_list else cls  # type: ignore[valid-type]
    returned: Any = [value] if as_list else value
    note(f"options={options} as a list: {as_list}")
    return [
        (
            "untyped",
            outcome(fastapi_untyped, returned, **options),
            outcome(dumps, returned, **options),
        ),
        (
            "typed",
            outcome(fastapi_typed, declared, returned, **options),
            outcome(dumps, returned, response_model=declared, **options),
        ),
    ]


def as_read(body: bytes) -> Any:
    """``body`` parsed with its keys in order, a repeated key's last value in its first place
    (how ``json.loads`` and JavaScript's ``JSON.parse`` read it)."""
    return json.loads(body, object_pairs_hook=lambda pairs: list(dict(pairs).items()))


def assert_fastapi_json(ours: Body, fastapi: Body, *, held: bool = False) -> None:
    """Tier 1: FastAPI's JSON value (numbers with their JSON type), its keys in FastAPI's order.

    ``held``: the value holds an int in a ``float`` field, which the SDKs' ``construct`` keeps
    where no float holds it exactly: written as held (``oracles.held_as_written``).
    """
    if isinstance(fastapi, Exception):
        assert isinstance(ours, Exception), f"FastAPI fails ({fastapi!r}): dumps must raise"
        return
    assert isinstance(ours, bytes), ours
    if held and not same_json(ours, fastapi):
        event("an int no float holds, kept by the SDK's construct in a float field, as held")
        assert held_as_written(ours, fastapi)
        return
    assert same_json(ours, fastapi)
    if json_pairs(fastapi) != as_read(fastapi):
        event("FastAPI's body repeats a key")
    assert as_read(ours) == as_read(fastapi)


@BY_TYPE
@settings(max_examples=examples(5))
@given(data=st.data())
def test_validated_and_constructed_values_are_written_as_fastapi_writes_them(
    cls: type[BaseModel], data: st.DataObject
) -> None:
    wire = data.draw(wire_data(cls), label="wire")
    how = data.draw(st.sampled_from(["validated", "construct"]), label="built")
    value = built(cls, wire, how)
    held = how == "construct" and holds_unvalidated(value)
    for path, fastapi, ours in data.draw(answers(cls, value, wire)):
        event(f"{how} {path}")
        assert_fastapi_json(ours, fastapi, held=held)


@BY_TYPE
@settings(max_examples=examples(3))
@given(data=st.data())
def test_values_changed_as_a_type_checker_accepts_are_written_as_held(
    cls: type[BaseModel], data: st.DataObject
) -> None:
    wire = data.draw(wire_data(cls), label="wire")
    how = data.draw(st.sampled_from(["validated", "construct"]), label="built")
    value = data.draw(mutated(built(cls, wire, how)), label="mutated")
    if holds_unvalidated(value):
        event("a list field holds items validation would not produce")
    for path, fastapi, ours in data.draw(answers(cls, value, wire)):
        if isinstance(fastapi, Exception):
            assert isinstance(ours, Exception), f"FastAPI fails ({fastapi!r}): dumps must raise"
            continue
        assert isinstance(ours, bytes), ours
        assert same_json_or_held(ours, fastapi, value), path


def keys_within(ours: Any, fastapi: Any) -> bool:
    """Whether every key of ``ours`` (parsed) is where ``fastapi``'s body has it too."""
    if isinstance(ours, dict):
        return isinstance(fastapi, dict) and all(
            key in fastapi and keys_within(item, fastapi[key]) for key, item in ours.items()
        )
    if isinstance(ours, list):
        return (
            isinstance(fastapi, list)
            and len(ours) <= len(fastapi)
            and all(map(keys_within, ours, fastapi[: len(ours)]))
        )
    return True


@SERIALIZER_WARNINGS
@BY_TYPE
@settings(max_examples=examples(3))
@given(data=st.data())
def test_model_construct_values_never_carry_a_key_fastapi_does_not_send(
    cls: type[BaseModel], data: st.DataObject
) -> None:
    wire = data.draw(wire_data(cls), label="wire")
    value = built(cls, wire, "model_construct")
    for path, fastapi, ours in data.draw(answers(cls, value, wire)):
        if isinstance(fastapi, Exception):
            assert isinstance(ours, Exception), f"FastAPI fails ({fastapi!r}): dumps must raise"
            continue
        assert isinstance(ours, bytes), ours
        assert keys_within(json.loads(ours), json.loads(fastapi)), path
        exact = same_json(ours, fastapi) and json_pairs(ours) == json_pairs(fastapi)
        event(f"{path}: {'FastAPI JSON exactly' if exact else 'other JSON'}")


# --- single examples -----------------------------------------------------------------------------


def test_repeated_keys_are_written_as_fastapi_writes_them() -> None:
    """Typed, a model built by the SDK's construct with an aliased field: the SDK keeps the
    alias's key as an extra too, and pydantic's writer writes both keys, FastAPI's typed body."""
    point = {"type": "coordinate", "x": 0, "y": 0}
    wire: dict[str, Any] = {"from": point, "target": point}
    value = BrowserLeftClickDragInput.construct(**wire)
    assert value.model_extra == {"from": point}  # the SDK's construct keeps the alias's key
    fastapi = fastapi_typed(BrowserLeftClickDragInput, value)
    assert fastapi.count(b'"from"') == 2
    assert json_pairs(dumps(value, response_model=BrowserLeftClickDragInput)) == json_pairs(fastapi)
    assert dumps(value) == fastapi_untyped(value)  # model_dump's dict holds the key once
    laid_out = dumps(value, option=orjson.OPT_INDENT_2)  # the model laid out, not its JSON
    assert json_pairs(laid_out) == json_pairs(fastapi_untyped(value))
