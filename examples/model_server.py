"""A small model server: text completions with token ids and logprobs.

The "model" is a toy (a seeded random walk over a small vocabulary), but the
shape of the API is that of a real inference server, and so is its serving:

* every connection gets TCP keepalive from ``uvicorn_keepalive.Protocol``, so a
  reply after a long generation still gets through an idle-dropping NAT or load
  balancer;
* every endpoint answers through ``orjson_dispatch.dispatch``, so large token
  id and logprob lists are encoded at orjson speed with FastAPI's semantics
  (validation, status codes, headers set on the injected ``Response``, OpenAPI).

Run it with ``scripts/demo``, or by hand::

    uvicorn --app-dir examples --http uvicorn_keepalive:Protocol model_server:app
"""

from __future__ import annotations

import math
import random
import time
import uuid
from typing import Literal

from fastapi import FastAPI, Response
from pydantic import BaseModel, Field

from orjson_dispatch import dispatch

MODEL = "toy-lm-1"
# Token ids 0-255 are the UTF-8 bytes of the prompt; the model generates words.
BYTE_TOKENS = 256
VOCABULARY = (
    "the", "model", "server", "answers", "after", "a", "long", "silence", "and",
    "every", "token", "arrives", "with", "its", "logprob", "through", "load",
    "balancer", "that", "keeps", "connection", "alive", "because", "probes", "flow",
)  # fmt: skip
MAX_TOKENS = 65_536


class CompletionRequest(BaseModel):
    """The body of ``POST /v1/completions``."""

    prompt: str = Field(min_length=1, max_length=32_768)
    max_tokens: int = Field(default=16, ge=1, le=MAX_TOKENS)
    seed: int | None = Field(default=None, description="Same seed, same completion.")
    logprobs: bool = Field(default=True, description="Return the logprob of every token.")


class Choice(BaseModel):
    index: int
    text: str
    token_ids: list[int]
    logprobs: list[float] | None
    finish_reason: Literal["length", "stop"]


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class Completion(BaseModel):
    id: str
    object: Literal["text_completion"] = "text_completion"
    created: int
    model: str
    prompt_token_ids: list[int]
    choices: list[Choice]
    usage: Usage


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    max_tokens: int
    vocabulary_size: int


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class Health(BaseModel):
    status: Literal["ok"]
    model: str


app = FastAPI(
    title="Toy model server",
    version="1.0.0",
    description="Completions served with uvicorn-keepalive and orjson-dispatch.",
)


@app.get("/health")
@dispatch
def health() -> Health:
    """Liveness: the server is up and the model is loaded."""
    return Health(status="ok", model=MODEL)


@app.get("/v1/models")
@dispatch
def models() -> ModelList:
    """The models this server can run."""
    card = ModelCard(id=MODEL, max_tokens=MAX_TOKENS, vocabulary_size=BYTE_TOKENS + len(VOCABULARY))
    return ModelList(data=[card])


@app.post("/v1/completions")
@dispatch
async def completions(request: CompletionRequest, response: Response) -> Completion:
    """Generate ``max_tokens`` tokens after the prompt."""
    prompt_ids = list(request.prompt.encode())
    rng = random.Random(request.seed if request.seed is not None else request.prompt)
    token_ids = [BYTE_TOKENS + rng.randrange(len(VOCABULARY)) for _ in range(request.max_tokens)]
    logprobs = [math.log(rng.uniform(0.05, 1.0)) for _ in token_ids]
    text = "".join(f" {VOCABULARY[token - BYTE_TOKENS]}" for token in token_ids)
    # A header on the injected Response: dispatch keeps it, as FastAPI does.
    response.headers["x-model"] = MODEL
    return Completion(
        id=f"cmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=MODEL,
        prompt_token_ids=prompt_ids,
        choices=[
            Choice(
                index=0,
                text=text,
                token_ids=token_ids,
                logprobs=logprobs if request.logprobs else None,
                finish_reason="length",
            )
        ],
        usage=Usage(
            prompt_tokens=len(prompt_ids),
            completion_tokens=len(token_ids),
            total_tokens=len(prompt_ids) + len(token_ids),
        ),
    )
