"""Hostile input: every malformed argument is a UCMAError with a clear message, nothing
already stored is lost, and ``close()`` racing ``consolidate()`` raises only UCMA errors."""

from __future__ import annotations

from pathlib import Path

from tests.faults.scenarios import hostile_trial


def test_hostile_input_raises_only_ucma_errors_and_keeps_what_is_stored(tmp_path: Path) -> None:
    outcomes = hostile_trial(tmp_path)
    bad = [o for o in outcomes if not o.clean]
    assert not bad, "\n".join(f"{o.fault}: {o.detail}" for o in bad)
    refused = {o.fault for o in outcomes if o.clear_errors}
    assert {
        "metadata nested 100,000 deep",
        "lone surrogate in a tag",
        "remember(now=1e300)",
        "timestamp in milliseconds",
        "NUL in user_id",
        "Memory('')",
        "custom embedder missing",
        "20 MB metadata",
        "5,000 tags",
        "10,000 trigger phrases",
    } <= refused
