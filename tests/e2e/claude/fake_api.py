"""A fake Anthropic Messages API on 127.0.0.1 for driving the real Claude Code CLI offline.

The real client is the best test client there is (reference note, "Observed in Claude Code
2.1.332"): pointed at this server with `ANTHROPIC_BASE_URL`, `claude -p` runs its real tools on
the turns we script (a Read, a Bash, a Write, ...) and writes a complete transcript with real
tool results, then fires its real hooks.

What it answers:
- `POST /v1/messages` from the main conversation (a request that offers tools): the next
  scripted `Turn`, streamed as server-sent events in the order the Messages API streams them
  (`message_start`, per block `content_block_start` / `content_block_delta` (`text_delta` or
  `input_json_delta`) / `content_block_stop`, `message_delta` with the `stop_reason`,
  `message_stop`). When the script is used up it answers with a short text turn.
- Any other `POST /v1/messages` (title generation and other side requests, which offer no
  tools): a short text answer, so they never eat a scripted turn.
- `POST /v1/messages/count_tokens`, `GET /v1/models`: plausible small answers.
- Anything else: a 404 in the API's error shape.

Every request is recorded (method, path, parsed JSON body) so tests can assert on what the
client sent, for example that a resumed redacted session sends placeholders and not secrets.
A turn may carry a delay, to keep a session open long enough for Claude Code's cleanup sweep,
and a condition that ends the delay early (the sweep was seen to run), so no test waits longer
than the client needs.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

MODEL = "claude-sonnet-4-5-20250929"
FALLBACK_TEXT = "Done."
SIDE_TEXT = "Scripted session"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One `tool_use` block: a tool name as Claude Code names it and its input."""

    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted answer of the model: optional text, then tool calls (in parallel when
    several), sent after `delay` seconds, or as soon as `until()` is true when given (then
    `delay` is only the longest wait)."""

    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    delay: float = 0.0
    until: Callable[[], bool] | None = None

    def wait(self) -> None:
        if self.until is None:
            time.sleep(self.delay)
            return
        deadline = time.monotonic() + self.delay
        while not self.until() and time.monotonic() < deadline:
            time.sleep(0.05)

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.calls else "end_turn"


def text_turn(text: str, *, delay: float = 0.0, until: Callable[[], bool] | None = None) -> Turn:
    return Turn(text=text, delay=delay, until=until)


def tool_turn(name: str, delay: float = 0.0, **tool_input: Any) -> Turn:
    return Turn(calls=(ToolCall(name, tool_input),), delay=delay)


@dataclass(frozen=True, slots=True)
class Request:
    """What the client sent: method, path and the JSON body (None when absent or not JSON)."""

    method: str
    path: str
    body: Any

    @property
    def is_main(self) -> bool:
        """A conversation request (it offers tools), as opposed to a side request."""
        return (
            self.method == "POST"
            and self.path.split("?")[0] == "/v1/messages"
            and isinstance(self.body, dict)
            and bool(self.body.get("tools"))
        )

    def text(self) -> str:
        """The body as JSON text, to look for strings anywhere in it."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass(slots=True)
class _State:
    script: list[Turn]
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=itertools.count)


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _usage(output_tokens: int = 0) -> dict[str, int]:
    return {
        "input_tokens": 12,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _blocks(turn: Turn, number: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.text is not None:
        blocks.append({"type": "text", "text": turn.text})
    for index, call in enumerate(turn.calls):
        blocks.append(
            {
                "type": "tool_use",
                # tool_use ids look like the API's (`toolu_…`); unique per server.
                "id": f"toolu_fake{number:04d}{index:02d}",
                "name": call.name,
                "input": dict(call.input),
            }
        )
    return blocks


def stream_events(turn: Turn, number: int, model: str) -> bytes:
    """The turn as the Messages API streams it (server-sent events)."""
    message_id = f"msg_fake{number:06d}"
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _usage(1),
                },
            },
        )
    ]
    for index, block in enumerate(_blocks(turn, number)):
        start: dict[str, Any]
        delta: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        out.append(
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def message_json(turn: Turn, number: int, model: str) -> dict[str, Any]:
    """The turn as a non-streaming Messages API response."""
    return {
        "id": f"msg_fake{number:06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _blocks(turn, number),
        "stop_reason": turn.stop_reason,
        "stop_sequence": None,
        "usage": _usage(20),
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the client's requests carry planted secrets: never echo them

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Mapping[str, Any]) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _record(self, body: Any) -> Request:
        request = Request(self.command, self.path, body)
        with self.server.state.lock:
            self.server.state.requests.append(request)
        return request

    def do_GET(self) -> None:
        self._record(None)
        path = self.path.split("?")[0]
        if path.startswith("/v1/models"):
            model = {
                "type": "model",
                "id": MODEL,
                "display_name": "Fake Sonnet",
                "created_at": "2025-09-29T00:00:00Z",
            }
            if path == "/v1/models":
                self._json(
                    200, {"data": [model], "has_more": False, "first_id": MODEL, "last_id": MODEL}
                )
            else:
                self._json(200, model)
            return
        self._not_found()

    def do_HEAD(self) -> None:
        self._record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        request = self._record(self._body())
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            self._json(200, {"input_tokens": 42})
            return
        if path != "/v1/messages":
            self._not_found()
            return
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model") or MODEL)
        state = self.server.state
        with state.lock:
            number = next(state.ids)
            if request.is_main:
                turn = state.script.pop(0) if state.script else Turn(text=FALLBACK_TEXT)
            else:
                turn = Turn(text=SIDE_TEXT)
        if turn.delay:
            turn.wait()
        if body.get("stream"):
            self._send(200, stream_events(turn, number, model), "text/event-stream")
        else:
            self._json(200, message_json(turn, number, model))

    def _not_found(self) -> None:
        self._json(
            404,
            {"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}},
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: _State) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class FakeApi:
    """The server, run in a thread: `with FakeApi([turns…]) as api: … api.url …`."""

    def __init__(self, script: Sequence[Turn] = ()) -> None:
        self._state = _State(list(script))
        self._server = _Server(self._state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeApi:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def script(self, turns: Sequence[Turn]) -> None:
        """Replace what is left of the script (for the next `claude` run)."""
        with self._state.lock:
            self._state.script[:] = list(turns)

    @property
    def remaining(self) -> int:
        with self._state.lock:
            return len(self._state.script)

    @property
    def requests(self) -> list[Request]:
        with self._state.lock:
            return list(self._state.requests)

    def main_requests(self) -> list[Request]:
        return [r for r in self.requests if r.is_main]

    def clear(self) -> None:
        with self._state.lock:
            self._state.requests.clear()
