"""A loopback HTTP server that speaks enough of the OpenAI REST API for the ``openai`` SDK.

First-party fake for tests: no network beyond 127.0.0.1, no API key, fully
scripted. Point the SDK (or any UCMA provider) at ``server.url``::

    from tests.openai_server import FakeOpenAIServer, error, malformed, slow

    with FakeOpenAIServer() as server:
        client = openai.OpenAI(api_key="test", base_url=server.url, max_retries=0)

Endpoints
    ``POST /v1/embeddings``
        Deterministic vectors from :class:`~ucma_core.embedders.hashing.HashingEmbedder`
        (the same text always gets the same vector). ``input`` may be a string or
        a list of strings; ``dimensions`` is honoured, otherwise the model's
        native size is used (1536 for unknown models); ``encoding_format``
        ``"float"`` and ``"base64"`` are both served. Each item carries its
        ``index``; set ``server.reverse_embeddings = True`` to send the items in
        reverse order (clients must sort by ``index``). A ``usage`` block counts
        words as tokens.
    ``POST /v1/chat/completions``
        Answers come from a queue the test fills with :meth:`FakeOpenAIServer.queue_chat`:
        a ``str`` is the message content, a ``dict``/``list`` is JSON-encoded
        into the content (for ``response_format`` ``json_object`` /
        ``json_schema`` requests), a :class:`ChatAnswer` also sets tool calls or
        ``finish_reason``. When the queue is empty the ``on_chat`` callable is
        asked (it gets the request body and returns any of the above); with no
        callable the server answers 400 "no scripted chat answer", which the SDK
        does not retry. ``"stream": true`` is served as server-sent events.
    anything else
        404 with an OpenAI-style error body.

Scripted replies, per request
    :meth:`FakeOpenAIServer.script` queues :class:`Scripted` replies. Each
    request takes the next reply queued for its path (``"/v1/embeddings"``,
    ``"/v1/chat/completions"``), or else for ``"*"`` (any path); when none is
    queued it gets the normal answer. Helpers build the common ones:

    - ``error(500)`` — that status with an OpenAI error JSON. It sends
      ``retry-after-ms: 1`` so the SDK's retries do not slow tests down.
    - ``slow(2.0)`` — wait 2 s, then the normal answer (or ``slow(2.0, then=error(503))``).
    - ``malformed()`` — status 200, ``Content-Type: application/json``, body not JSON.
    - ``Scripted(status=..., body=..., raw=..., headers=..., delay_s=...)`` for anything else;
      ``body=None`` and ``raw=None`` mean "the normal answer".

    Remember that the SDK retries 408/409/429/5xx and timeouts ``max_retries``
    times, and every try consumes one scripted reply: to fail a call for good,
    queue ``max_retries + 1`` failures (or create the client with ``max_retries=0``).

Recorded requests
    ``server.errors`` lists exceptions raised inside the fake itself (answered as 400).
    ``server.requests`` is a list of :class:`RecordedRequest` (method, path,
    headers with lower-cased names, parsed JSON body) in arrival order;
    ``server.requests_to("/v1/embeddings")`` filters by path.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from ucma_core.embedders.hashing import HashingEmbedder

__all__ = [
    "ANY_PATH",
    "CHAT_PATH",
    "EMBEDDINGS_PATH",
    "ChatAnswer",
    "FakeOpenAIServer",
    "RecordedRequest",
    "Scripted",
    "error",
    "malformed",
    "slow",
]

EMBEDDINGS_PATH = "/v1/embeddings"
CHAT_PATH = "/v1/chat/completions"
ANY_PATH = "*"
_HOST = "127.0.0.1"

_NATIVE_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_DEFAULT_DIMENSION = 1536


@dataclass(frozen=True)
class Scripted:
    """One scripted reply.

    Attributes:
        status: HTTP status.
        body: JSON-serialisable body; with ``raw`` also ``None`` the endpoint's
            normal answer is sent (with ``status`` and ``headers`` applied).
        raw: Bytes sent as the body as they are (for malformed answers).
        headers: Extra response headers.
        delay_s: Seconds to wait before answering.
    """

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class ChatAnswer:
    """A scripted chat completion with more than plain content.

    Attributes:
        content: The assistant message text (``dict``/``list`` is JSON-encoded).
        tool_calls: OpenAI-format tool calls, e.g.
            ``[{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]``.
        finish_reason: ``"stop"``, ``"length"``, ``"tool_calls"``...
    """

    content: Any = None
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def error(status: int = 500, message: str = "scripted failure", *, code: str = "server_error") -> Scripted:
    """A reply with ``status`` and an OpenAI-style error body."""
    body = {"error": {"message": message, "type": code, "param": None, "code": code}}
    return Scripted(status=status, body=body, headers={"retry-after-ms": "1"})


def slow(seconds: float, then: Scripted | None = None) -> Scripted:
    """Wait ``seconds``, then send ``then`` (by default the normal answer)."""
    base = then if then is not None else Scripted()
    return Scripted(status=base.status, body=base.body, raw=base.raw, headers=base.headers, delay_s=seconds)


def malformed(status: int = 200) -> Scripted:
    """A reply that claims to be JSON but is not."""
    return Scripted(status=status, raw=b'{"object": "list", "data": [{"embedding": [0.1, ')


ChatScript = str | dict[str, Any] | list[Any] | ChatAnswer


class FakeOpenAIServer:
    """Loopback OpenAI-compatible server on 127.0.0.1 (random port), run in a background thread.

    Use it as a context manager, or call :meth:`start` and :meth:`close`.

    Attributes:
        reverse_embeddings: Send embedding items in reverse order.
        on_chat: Called with the request body when the chat queue is empty.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._scripts: dict[str, deque[Scripted]] = {}
        self._chat: deque[ChatScript] = deque()
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._embedders: dict[int, HashingEmbedder] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.reverse_embeddings = False
        self.on_chat: Callable[[dict[str, Any]], ChatScript] | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        httpd = _QuietServer((_HOST, 0), handler)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; sleeping scripted replies are cut short."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def url(self) -> str:
        """Base URL to give the SDK, ending in ``/v1``."""
        if self._httpd is None:
            raise RuntimeError("the fake OpenAI server is not running; use it as a context manager")
        return f"http://{_HOST}:{self._httpd.server_port}/v1"

    # -- scripting ---------------------------------------------------------

    def script(self, *replies: Scripted, path: str = ANY_PATH) -> None:
        """Queue replies for the next requests to ``path`` (``"*"``: any path)."""
        with self._lock:
            self._scripts.setdefault(path, deque()).extend(replies)

    def queue_chat(self, *answers: ChatScript) -> None:
        """Queue chat completion answers, used in order."""
        with self._lock:
            self._chat.extend(answers)

    def pending(self) -> int:
        """How many scripted replies and chat answers are still queued."""
        with self._lock:
            return sum(len(q) for q in self._scripts.values()) + len(self._chat)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised inside the fake while answering (bugs in the fake); should stay empty."""
        return list(self._errors)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The requests received for one path."""
        return [r for r in self.requests if r.path == path]

    # -- used by the handler -----------------------------------------------

    def _record(self, request: RecordedRequest) -> Scripted | None:
        with self._lock:
            self._requests.append(request)
            for key in (request.path, ANY_PATH):
                queue = self._scripts.get(key)
                if queue:
                    return queue.popleft()
        return None

    def _next_chat(self, body: dict[str, Any]) -> ChatScript | None:
        with self._lock:
            if self._chat:
                return self._chat.popleft()
        return self.on_chat(body) if self.on_chat is not None else None

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _embedder(self, dimension: int) -> HashingEmbedder:
        with self._lock:
            if dimension not in self._embedders:
                self._embedders[dimension] = HashingEmbedder(dimension)
            return self._embedders[dimension]

    def _embeddings(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or "input" not in body or "model" not in body:
            return 400, _error_body("'model' and 'input' are required", "invalid_request_error")
        texts = body["input"]
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return 400, _error_body(
                "'input' must be a string or a non-empty list of strings", "invalid_request_error"
            )
        model = str(body["model"])
        dimension = body.get("dimensions") or _NATIVE_DIMENSIONS.get(model, _DEFAULT_DIMENSION)
        if not isinstance(dimension, int) or dimension < 1:
            return 400, _error_body("'dimensions' must be a positive integer", "invalid_request_error")
        vectors = self._embedder(dimension).embed(texts)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {"object": "embedding", "index": i, "embedding": _b64(v) if as_base64 else v}
            for i, v in enumerate(vectors)
        ]
        if self.reverse_embeddings:
            data.reverse()
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}

    def _chat_completion(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or "messages" not in body or "model" not in body:
            return 400, _error_body("'model' and 'messages' are required", "invalid_request_error")
        answer = self._next_chat(body)
        if answer is None:
            return 400, _error_body(
                "no scripted chat answer (use queue_chat or on_chat)", "invalid_request_error"
            )
        if not isinstance(answer, ChatAnswer):
            answer = ChatAnswer(content=answer)
        content = answer.content
        if content is not None and not isinstance(content, str):
            content = json.dumps(content)
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if answer.tool_calls:
            message["tool_calls"] = answer.tool_calls
        finish = answer.finish_reason or ("tool_calls" if answer.tool_calls else "stop")
        prompt_tokens = sum(
            len(str(m.get("content", "")).split()) for m in body["messages"] if isinstance(m, dict)
        )
        completion_tokens = len((content or "").split())
        return 200, {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body["model"]),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout test) closes its socket while a slow reply
        # is pending; that is expected here and not worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    server_version = "FakeOpenAI/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = _UNPARSEABLE
        self._serve(body)

    def _serve(self, body: Any) -> None:
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        scripted = self.fake._record(RecordedRequest(self.command, path, headers, body))
        scripted = scripted or Scripted()
        if scripted.delay_s:
            self.fake._sleep(scripted.delay_s)
        if scripted.raw is not None:
            self._send(scripted.status, scripted.raw, scripted.headers)
            return
        if scripted.body is not None:
            self._send(scripted.status, json.dumps(scripted.body).encode(), scripted.headers)
            return
        try:
            status, payload = self._normal(path, body)
        except Exception as e:  # a bug in the fake: record it, answer 400 so the SDK does not retry
            self.fake._errors.append(e)
            status, payload = 400, _error_body(f"fake OpenAI server bug: {e!r}", "fake_server_error")
        if scripted.status != 200:
            status = scripted.status
        if status == 200 and path == CHAT_PATH and isinstance(body, dict) and body.get("stream"):
            self._stream(payload, scripted.headers)
            return
        self._send(status, json.dumps(payload).encode(), scripted.headers)

    def _normal(self, path: str, body: Any) -> tuple[int, Any]:
        if body is _UNPARSEABLE:
            return 400, _error_body("request body is not valid JSON", "invalid_request_error")
        if self.command == "POST" and path == EMBEDDINGS_PATH:
            return self.fake._embeddings(body)
        if self.command == "POST" and path == CHAT_PATH:
            return self.fake._chat_completion(body)
        return 404, _error_body(f"no route {self.command} {path} in the fake OpenAI server", "not_found")

    def _send(self, status: int, payload: bytes, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client went away (e.g. it timed out)
            return

    def _stream(self, completion: dict[str, Any], headers: Mapping[str, str]) -> None:
        choice = completion["choices"][0]
        base = {k: completion[k] for k in ("id", "created", "model")}
        delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
        if "tool_calls" in choice["message"]:
            delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(choice["message"]["tool_calls"])]
        chunks = [
            {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
            },
            {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
            },
        ]
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
        except OSError:
            return


_UNPARSEABLE = object()


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _b64(vector: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
