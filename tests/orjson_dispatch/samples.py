"""Small fixed models and a dependency the behaviour tests return, declare, send and inject."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from fastapi import Header
from pydantic import BaseModel, Field


class Item(BaseModel):
    """A model with an alias, a default and an optional field."""

    name: str
    price: float = Field(serialization_alias="Price")
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


ITEM = Item(name="pen", price=1.5)


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


class NewItem(BaseModel):
    """A request body."""

    name: str
    quantity: int = 1


def current_user(x_user: Annotated[str, Header()] = "anon") -> str:
    """A dependency: the ``x-user`` request header."""
    return x_user
