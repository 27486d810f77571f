"""Chat-completion chunks, the events of the streaming suite (OpenAI's chat.completion.chunk).

A chunk holds choices holding a delta: the role in the first chunk, then a few characters of
content per chunk, the finish reason in the last. Streams cycle through :data:`CYCLE`
distinct chunks built deterministically, so every configuration streams the same events.
"""

import random
import string
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel

from benchmarks.bodies import SEED

#: Distinct chunks a stream cycles through.
CYCLE = 64


class Delta(BaseModel):
    """What a chunk adds to the message."""

    role: Literal["assistant"] | None = None
    content: str | None = None


class Choice(BaseModel):
    """One choice of a chunk."""

    index: int
    delta: Delta
    logprobs: None = None
    finish_reason: Literal["stop", "length"] | None = None


class Chunk(BaseModel):
    """One streamed ``chat.completion.chunk``."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[Choice]


def _token(rng: random.Random) -> str:
    """Return a space and 2 to 9 lowercase letters: one token of generated text."""
    return " " + "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))


@cache
def chunk_models() -> tuple[Chunk, ...]:
    """Return the :data:`CYCLE` chunks of a stream, in order."""
    rng = random.Random(SEED)
    stream_id = f"chatcmpl-{rng.getrandbits(96):024x}"
    found = []
    for index in range(CYCLE):
        delta = Delta(role="assistant") if index == 0 else Delta(content=_token(rng))
        finish: Literal["stop"] | None = "stop" if index == CYCLE - 1 else None
        found.append(
            Chunk(
                id=stream_id,
                created=1_717_200_000,
                model="Qwen/Qwen2.5-7B-Instruct",
                system_fingerprint="fp_0123456789",
                choices=[Choice(index=0, delta=delta, finish_reason=finish)],
            )
        )
    return tuple(found)


@cache
def chunk_dicts() -> tuple[dict[str, Any], ...]:
    """Return the chunks as ready dicts (what untyped endpoints yield), JSON values equal."""
    return tuple(chunk.model_dump(mode="json") for chunk in chunk_models())
