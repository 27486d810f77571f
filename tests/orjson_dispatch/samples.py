"""Small fixed models, a dependency and an API the behaviour tests return, declare, send, inject
and document."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import BackgroundTasks, Depends, Header, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tests.orjson_dispatch.versions import NAN_AS_STRINGS


class Item(BaseModel):
    """A model with an alias, a default and an optional field."""

    name: str
    price: float = Field(serialization_alias="Price")
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


ITEM = Item(name="pen", price=1.5)


class Public(BaseModel):
    """Redacts its token, whatever the endpoint set it to."""

    name: str
    token: str = ""

    @model_validator(mode="after")
    def redact(self) -> Public:
        self.token = "***"
        return self


class Wrapped(BaseModel):
    """Upper-cases its name, whatever the endpoint set it to."""

    name: str

    @model_validator(mode="wrap")
    @classmethod
    def upper(cls, value: Any, handler: Any) -> Wrapped:
        model: Wrapped = handler(value)
        model.name = model.name.upper()
        return model


class Account(BaseModel):
    """The declared response model of the leak tests."""

    id: int
    email: str


class AccountInDB(Account):
    """What the database layer returns: an Account plus the secret."""

    password: str


@dataclasses.dataclass
class AccountRow:
    """An ORM-like object read through ``from_attributes``."""

    id: int
    email: str
    password: str


class NanConstants(BaseModel):
    """Writes NaN and infinities as pydantic's JSON tokens (``NaN``), which are not JSON."""

    model_config = ConfigDict(ser_json_inf_nan="constants")
    f: float


class NanStrings(BaseModel):
    """Writes NaN as the string ``"NaN"`` (null where pydantic cannot)."""

    model_config = ConfigDict(ser_json_inf_nan="strings" if NAN_AS_STRINGS else "null")
    f: float


class NewItem(BaseModel):
    """A request body."""

    name: str
    quantity: int = 1


class Envelope(JSONResponse):
    """A response class whose own ``__init__`` wraps the content it is given in an envelope."""

    def __init__(self, content: Any, **kwargs: Any) -> None:
        super().__init__({"data": content}, **kwargs)


def current_user(x_user: Annotated[str, Header()] = "anon") -> str:
    """A dependency: the ``x-user`` request header."""
    return x_user


def openapi_endpoints() -> list[tuple[str, str, Callable[..., Any], dict[str, Any]]]:
    """(method, path, endpoint, route options) of an API whose OpenAPI document is compared."""

    async def list_items(
        q: Annotated[str | None, Query(max_length=20, description="Search")] = None,
        limit: int = 10,
    ) -> list[Item]:
        """List items, filtered by ``q``."""
        return []

    def get_item(item_id: Annotated[int, PathParam(ge=1)], x_token: str | None = None) -> Item:
        return ITEM

    async def create_item(item: NewItem, tasks: BackgroundTasks, response: Response) -> Item:
        return ITEM

    async def update(
        item_id: int, item: NewItem, user: Annotated[str, Depends(current_user)]
    ) -> dict[str, Any]:
        return {}

    async def delete(item_id: int) -> None:
        return None

    async def untyped(request: Request):  # type: ignore[no-untyped-def]  # the untyped path
        return {}

    async def as_account(item_id: int) -> AccountInDB:
        return AccountInDB(id=1, email="e", password="p")

    return [
        ("GET", "/items", list_items, {"tags": ["items"], "summary": "All items"}),
        ("GET", "/items/{item_id}", get_item, {"responses": {404: {"description": "Missing"}}}),
        ("POST", "/items", create_item, {"status_code": 201, "tags": ["items"]}),
        ("PUT", "/items/{item_id}", update, {"deprecated": True, "operation_id": "upd"}),
        # response_model=None: FastAPI 0.115 reads the postponed "None" of this module
        # as NoneType, a body a 204 cannot have.
        ("DELETE", "/items/{item_id}", delete, {"status_code": 204, "response_model": None}),
        ("GET", "/raw", untyped, {"include_in_schema": True, "description": "Raw"}),
        (
            "GET",
            "/accounts/{item_id}",
            as_account,
            {"response_model": Account, "response_model_exclude": {"email"}},
        ),
        ("GET", "/html", untyped, {"response_class": HTMLResponse}),
    ]
