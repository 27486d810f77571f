"""Models for the per-class fast path tests: plain classes with aliases, unions, extra fields."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field, computed_field
from pydantic.alias_generators import to_camel


class Message(BaseModel):
    type: Literal["message"] = "message"
    content: str


class FunctionCall(BaseModel):
    type: Literal["function_call"] = "function_call"
    name: str
    call_id: str = Field(alias="callId")


class Completion(BaseModel):
    ids: list[int]
    logprobs: list[float]
    output: list[Message | FunctionCall]
    meta: dict[str, Any] = {}
    finished: datetime | None = None


class SecretCompletion(Completion):
    password: str


class Camel(BaseModel):
    model_config = ConfigDict(alias_generator=AliasGenerator(serialization_alias=to_camel))
    token_ids: list[int]
    hidden: str = Field(default="x", exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def token_count(self) -> int:
        return len(self.token_ids)


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


class Holder(BaseModel):
    inner: Message
    many: dict[str, Message] = {}
