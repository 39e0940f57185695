"""Kill -9 at random points of a framework's turn: a ``create_agent`` + ``UCMAMiddleware`` agent
and LlamaIndex chat engines with ``UCMAChatMemory``; then every acknowledged message must be in
the memory exactly once, and the folder must open consistently.

**Acknowledged** means the framework returned: the child prints an ``ack`` line after
``agent.invoke(...)`` / ``engine.chat(...)`` returned, naming the user message it sent and the
answer it got back. Both are then acknowledged (the middleware observes them in
``after_agent``, the chat engine puts them into its memory, before the call returns). A turn
in flight when the kill came may be stored or not, but never twice; for the middleware it is
all or nothing (one ``observe_turns`` call), for a chat engine the user message may be stored
without the answer (two ``put`` calls).

Every fifth user message is a pasted 150,000-character log, stored in parts: it counts as one
message, present when :meth:`ChatTurn.from_records` gives it back whole.

Shared by ``tests/faults/test_faults_adapters.py`` and ``python -m benchmarks.faults_report``;
imported by the child processes, so keep it free of pytest.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.faults.scenarios import REPO, Outcome, _env, base_config, failed_check, open_memory, reopen
from ucma_core import Memory
from ucma_core.conversation import ChatTurn

USER = "ana"
WARMUP = "warm-up"  # the user of the child's first turn, before it is ready (not checked)
SESSION = "chat"
#: Seconds after the child is ready within which the kill lands.
KILL_WINDOW = 4.0


@dataclass
class AdapterOutcome(Outcome):
    """One trial; ``acked`` counts acknowledged messages, ``duplicated`` messages stored twice."""

    duplicated: int = 0

    @property
    def clean(self) -> bool:
        return super().clean and not self.duplicated


COLUMNS = ("trials", "acked messages", "lost", "duplicated", "partial", "other errors", "hangs")


def table(outcomes: list[AdapterOutcome]) -> str:
    """One row per adapter, plus a total (the layout of the core's fault table)."""
    rows: dict[str, list[int]] = {}
    for o in outcomes:
        row = rows.setdefault(o.operation, [0] * len(COLUMNS))
        for i, v in enumerate((1, o.acked, o.lost, o.duplicated, o.partial, o.other_errors, o.hangs)):
            row[i] += v
    total = [sum(r[i] for r in rows.values()) for i in range(len(COLUMNS))]
    head = ["operation", "fault", *COLUMNS]
    body = [[op, "kill -9", *map(str, r)] for op, r in sorted(rows.items())]
    body.append(["total", "", *map(str, total)])
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += [
        "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |" for line in body
    ]
    return "\n".join(lines)


def user_text(step: int) -> str:
    """The user message of ``step``: short, or (every fifth) a 150,000-character log."""
    marker = f"zqstep{step}zq"
    if step % 5 != 4:
        return f"Note {marker}: I moved my plants to the balcony on day {step}."
    line = f"2026-03-04 10:00:{step % 60:02d} INFO worker step ok\n"
    return (line * (150_000 // len(line) + 1))[: 150_000 - 40] + f"\nERROR deploy failed {marker}"


def answer_text(user: str) -> str:
    """The fake model's answer to ``user`` (names its marker, so it is unique per step)."""
    marker = user.rsplit("zqstep", 1)[1].split("zq", 1)[0]  # the last: a prompt ends with the query
    return f"Answer zqanswer{marker}zq: got it."


# ---------------------------------------------------------------------------------------------
# The children: one framework each
# ---------------------------------------------------------------------------------------------


def _middleware_turns(mem: Memory, user: str) -> Any:
    from langchain.agents import create_agent
    from langchain_core.messages import BaseMessage, HumanMessage

    from tests.langchain.lc_fakes import ScriptedChatModel
    from ucma_langchain import UCMAMiddleware

    def reply(prompt: list[BaseMessage]) -> str:
        return answer_text(prompt[-1].text)

    model = ScriptedChatModel(script=[reply])
    middleware = UCMAMiddleware(mem, user_id=user, session_id=SESSION)
    agent = create_agent(model, tools=[], middleware=[middleware])

    def turn(text: str) -> str:
        out = agent.invoke({"messages": [HumanMessage(text)]})
        return str(out["messages"][-1].text)

    return turn


def _llamaindex_turns(mem: Memory, user: str, kind: str) -> Any:
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, CompletionResponse, LLMMetadata
    from llama_index.core.chat_engine import ContextChatEngine, SimpleChatEngine
    from llama_index.core.llms import MockLLM

    from ucma_llamaindex import UCMAChatMemory, UCMARetriever

    class AnsweringLLM(MockLLM):
        """MockLLM that answers with :func:`answer_text` of the last user message, with a context
        window that holds a pasted log (ContextChatEngine packs what the retriever found into it)."""

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(context_window=1_000_000, num_output=256)

        def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
            last = next(m for m in reversed(messages) if m.role.value == "user")
            return ChatResponse(
                message=ChatMessage(role="assistant", content=answer_text(last.content or ""))
            )

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            return CompletionResponse(text=answer_text(prompt))

    llm = AnsweringLLM()
    memory = UCMAChatMemory(mem, user_id=user, session_id=SESSION)
    if kind == "simple":
        engine: Any = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    else:
        retriever = UCMARetriever(mem, user_id=user, k=2)
        engine = ContextChatEngine.from_defaults(retriever=retriever, llm=llm, memory=memory)

    def turn(text: str) -> str:
        return str(engine.chat(text))

    return turn


#: name -> (memory, user) -> a function that runs one turn and returns the answer.
ADAPTERS = {
    "UCMAMiddleware (create_agent)": _middleware_turns,
    "UCMAChatMemory (SimpleChatEngine)": lambda mem, user: _llamaindex_turns(mem, user, "simple"),
    "UCMAChatMemory (ContextChatEngine)": lambda mem, user: _llamaindex_turns(mem, user, "context"),
}


def child_main(argv: list[str]) -> None:
    """Open the folder, build the adapter, run turns and acknowledge each one; never close."""
    folder, name = Path(argv[0]), argv[1]
    mem = open_memory(folder, base_config())
    ADAPTERS[name](mem, WARMUP)(user_text(0))  # first-call costs (imports, caches) before the kills
    turn = ADAPTERS[name](mem, USER)
    print(json.dumps({"k": "ready"}), flush=True)
    for step in range(1000):
        text = user_text(step)
        print(json.dumps({"k": "start", "step": step}), flush=True)
        answer = turn(text)
        print(json.dumps({"k": "ack", "step": step, "answer": answer}), flush=True)
    os._exit(0)


CHILD = "import sys\nfrom tests.faults import adapter_scenarios\nadapter_scenarios.child_main(sys.argv[1:])\n"


# ---------------------------------------------------------------------------------------------
# A trial
# ---------------------------------------------------------------------------------------------


def _run_child(
    folder: Path, name: str, kill_after: float, timeout: float = 180.0
) -> tuple[list[Any], int, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=_env(),
    )
    assert proc.stdout is not None
    raw = b""
    deadline = time.monotonic() + timeout
    kill_at: float | None = None
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                break
            if kill_at is None and b'"ready"' in raw:
                kill_at = time.monotonic() + kill_after
            if kill_at is not None and time.monotonic() >= kill_at:
                proc.send_signal(signal.SIGKILL)
                break
            ready, _, _ = select.select([proc.stdout], [], [], 0.01)
            if ready:
                raw += os.read(proc.stdout.fileno(), 65536)
        rest, err = proc.communicate(timeout=60)
        raw += rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    lines = [json.loads(line) for line in raw.decode("utf-8", "replace").split("\n")[:-1]]
    return lines, proc.returncode, err.decode("utf-8", "replace")[-3000:]


def stored_texts(mem: Memory) -> Counter[str]:
    """How many times each message text is stored (turns stored in parts joined back)."""
    counts: Counter[str] = Counter()
    for user, agent, session in mem.list_scopes(user_id=USER):
        if session is None:
            continue
        history = mem.history(session_id=session, user_id=user, agent_id=agent)
        counts.update(turn.text for turn in ChatTurn.from_records(history))
    return counts


def kill_trial(name: str, workdir: Path, rng: random.Random) -> AdapterOutcome:
    """Run the adapter's turns in a child, SIGKILL it at a random moment, reopen and count."""
    out = AdapterOutcome(name, "kill -9")
    folder = workdir / "memory"
    open_memory(folder, base_config()).close()
    lines, rc, err = _run_child(folder, name, rng.uniform(0.0, KILL_WINDOW))
    if rc not in (-signal.SIGKILL, 0):
        out.other_errors += 1
        out.detail.append(f"child exited {rc}: {err}")
    acked = [line for line in lines if line["k"] == "ack"]
    started = [line["step"] for line in lines if line["k"] == "start"]
    inflight = started[-1] if len(started) > len(acked) else None
    out.acked = 2 * len(acked)
    mem = reopen(folder, base_config(), out)
    if mem is None:
        return out
    try:
        counts = stored_texts(mem)
        for ack in acked:
            user = user_text(ack["step"])
            for text in (user, ack["answer"]):
                n = counts.get(text, 0)
                out.lost += n == 0
                out.duplicated += max(0, n - 1)
                if n != 1:
                    out.detail.append(f"step {ack['step']}: {text[:60]!r} stored {n} times")
        if inflight is not None:
            user = user_text(inflight)
            n_user, n_answer = counts.get(user, 0), counts.get(answer_text(user), 0)
            out.duplicated += max(0, n_user - 1) + max(0, n_answer - 1)
            if name.startswith("UCMAMiddleware") and n_user != n_answer:
                out.partial += 1
                out.detail.append(f"turn in flight: user stored {n_user}, answer {n_answer} times")
        known = {user_text(s) for s in started} | {answer_text(user_text(s)) for s in started}
        known |= {ack["answer"] for ack in acked} | {"Empty Response"}  # LlamaIndex's answer without context
        strangers = [t[:60] for t in counts if t not in known]
        if strangers:
            out.partial += 1
            out.detail.append(f"unexpected memories: {strangers[:3]}")
        report = mem.verify()
        if not report.ok or report.skipped:
            out.partial += 1
            out.detail.append(f"verify: {report}")
    except Exception as e:
        failed_check(out, e)
    finally:
        mem.close()
    return out
