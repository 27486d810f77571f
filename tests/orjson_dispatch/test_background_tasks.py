"""Background tasks run after the last body chunk is sent, as under FastAPI."""

import pytest
from fastapi import BackgroundTasks
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.orjson_dispatch.apps import Ask, Twin


class RecordSend:
    """ASGI middleware appending ``"body sent"`` to ``events`` once the last body chunk is sent."""

    def __init__(self, app: ASGIApp, events: list[str]) -> None:
        self.app = app
        self.events = events

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def recording_send(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.events.append("body sent")

        await self.app(scope, receive, recording_send)


@pytest.mark.parametrize("is_async", [True, False])
def test_background_tasks_run_after_the_response_is_sent(
    is_async: bool, twin: Twin, ask: Ask
) -> None:
    events: list[str] = []

    async def async_endpoint(tasks: BackgroundTasks) -> dict[str, str]:
        tasks.add_task(events.append, "task")
        return {"ok": "yes"}

    def sync_endpoint(tasks: BackgroundTasks) -> dict[str, str]:
        tasks.add_task(events.append, "task")
        return {"ok": "yes"}

    twin.add("GET", "/t", async_endpoint if is_async else sync_endpoint)
    recorded = RecordSend(twin.app, events)
    for side in ("fastapi", "dispatch"):
        events.clear()
        answer = ask(recorded, "GET", f"/{side}/t")
        assert answer.json() == {"ok": "yes"}
        assert events == ["body sent", "task"], side
