"""The example app of ``compose.yaml``: one shared UCMA memory behind a WSGI app that
gunicorn runs in 4 worker processes. ``tests/postgres/test_deploy_app.py`` runs it under
gunicorn against throwaway servers; ``compose.yaml`` itself is untested (no docker there).

Each worker opens the memory once, by URL, with its vectors in the Chroma server::

    POST /observe   {"user_id": "ana", "text": "I moved to Lisbon"}  -> {"id": "...", "worker": pid}
    GET  /remember?user_id=ana&q=where+do+I+live                     -> {"memories": [...], "worker": pid}
    GET  /health                                                     -> {"ok": true, "worker": pid}

(``worker`` is the process id of the worker that answered.)

Configuration from the environment: ``UCMA_URL`` (``postgresql://…?memory=…``),
``CHROMA_HOST``, ``CHROMA_PORT``. The hashing embedder keeps the example offline; use
your own embedder in a real app (every worker must use the same one).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

memory = Memory(
    os.environ["UCMA_URL"],
    embedder=HashingEmbedder(),
    config=MemoryConfig(
        chroma=ChromaConfig(host=os.environ["CHROMA_HOST"], port=int(os.environ.get("CHROMA_PORT", "8000")))
    ),
)


def _reply(start: Callable[..., Any], status: str, body: dict[str, Any]) -> Iterable[bytes]:
    data = json.dumps(body).encode("utf-8")
    start(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


def app(environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
    """The WSGI entry point (``gunicorn deploy.app:app``)."""
    method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "/")
    if method == "POST" and path == "/observe":
        size = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(size) or b"{}")
        memory_id = memory.observe(body["text"], user_id=body["user_id"], importance=1.0)
        return _reply(start, "200 OK", {"id": memory_id, "worker": os.getpid()})
    if method == "GET" and path == "/remember":
        query = parse_qs(environ.get("QUERY_STRING", ""))
        hits = memory.remember(query["q"][0], user_id=query["user_id"][0], k=5)
        return _reply(start, "200 OK", {"memories": [h.record.content for h in hits], "worker": os.getpid()})
    if method == "GET" and path == "/health":
        return _reply(start, "200 OK", {"ok": True, "worker": os.getpid()})
    return _reply(start, "404 Not Found", {"error": f"no route {method} {path}"})
