"""``ucma --config FILE`` and ``--provider offline|openai`` (``--model``, ``--base-url``), and the
progress bars the command line shows; the provider is exercised against a loopback server that
speaks the OpenAI API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli_run import ucma
from tests.openai_server import FakeOpenAIServer
from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.cli.settings import Settings, config_from_dict, load_config
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError, InvalidInputError

DAY = 86_400.0


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A closed folder (hashing embedder) with a few weeks-old turns of Ana's."""
    now = [1_700_000_000.0]
    path = tmp_path / "memory"
    with Memory(
        path, embedder=HashingEmbedder(), clock=lambda: now[0], config=MemoryConfig(importance_threshold=0)
    ) as m:
        for day in range(3):
            m.observe_many(
                [f"Day {day}: we finally moved to Lisbon.", f"Day {day}: I went hiking in the Alps."],
                user_id="ana",
                session_id=f"s{day}",
            )
            now[0] += DAY
    return path


def semantic_count(path: Path) -> int:
    with Memory(path, embedder=HashingEmbedder()) as m:
        return len(m.list_memories(user_id=ANY, memory_types=["semantic"]))


# ------------------------------------------------------------------ --config
def test_config_from_dict_checks_keys_types_and_values() -> None:
    config = config_from_dict({"timezone": "Europe/Lisbon", "ranking": {"importance": 0, "recency": 0.5}})
    assert config.timezone == "Europe/Lisbon"
    assert (config.ranking.importance, config.ranking.recency) == (0.0, 0.5)
    assert isinstance(config.ranking.importance, float)
    assert config.forgetting == MemoryConfig().forgetting
    with pytest.raises(InvalidInputError, match=r"'ranking\.importanse'"):
        config_from_dict({"ranking": {"importanse": 0.1}})
    with pytest.raises(InvalidInputError, match="'importance_threshold' must be a float"):
        config_from_dict({"importance_threshold": "high"})
    with pytest.raises(InvalidInputError, match="'fsync' must be a bool"):
        config_from_dict({"fsync": 1})
    with pytest.raises(InvalidInputError, match="'ranking' is a group"):
        config_from_dict({"ranking": 0.5})
    with pytest.raises(InvalidInputError, match="importance_threshold must be in"):
        config_from_dict({"importance_threshold": 2.0})
    with pytest.raises(InvalidInputError, match="table"):
        config_from_dict([1, 2])  # type: ignore[arg-type]
    assert config_from_dict({"chroma": {"host": None}}).chroma.host is None
    assert config_from_dict({"shared": {"read_hold_seconds": 0}}).shared.read_hold_seconds == 0
    with pytest.raises(InvalidInputError, match="read_hold_at_most_seconds must be >= read_hold_seconds"):
        config_from_dict({"shared": {"read_hold_seconds": 0.2, "read_hold_at_most_seconds": 0.1}})
    with pytest.raises(InvalidInputError, match=r"read_hold_seconds must be in \[0, 60\]"):
        config_from_dict({"shared": {"read_hold_seconds": -1}})


def test_load_config_reads_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "ucma.toml"
    toml.write_text('timezone = "Asia/Tokyo"\n\n[forgetting]\nretention_threshold = 0.05\n', encoding="utf-8")
    config = load_config(toml)
    assert (config.timezone, config.forgetting.retention_threshold) == ("Asia/Tokyo", 0.05)
    as_json = tmp_path / "ucma.json"
    as_json.write_text(json.dumps({"timezone": "Asia/Tokyo", "forgetting": {"retention_threshold": 0.05}}))
    assert load_config(as_json) == config
    (tmp_path / "bad.toml").write_text("timezone = ", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"bad\.toml is not valid TOML"):
        load_config(tmp_path / "bad.toml")
    (tmp_path / "typo.json").write_text('{"forgeting": {}}', encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"typo.json: unknown config key 'forgeting'"):
        load_config(tmp_path / "typo.json")
    with pytest.raises(ConfigurationError, match="no config file"):
        load_config(tmp_path / "missing.toml")


def test_the_config_file_shapes_what_a_command_does(folder: Path, tmp_path: Path) -> None:
    plain = ucma("search", folder, "where did we move?", "--json").json()["results"]
    assert plain and all(r["contributions"]["importance"] > 0 for r in plain)
    weights = tmp_path / "weights.toml"
    weights.write_text("[ranking]\nimportance = 0.0\nrecency = 0.0\nretention = 0.0\n", encoding="utf-8")
    # the global options go before or after the command name
    for argv in (
        ("--config", weights, "search", folder, "where did we move?", "--json"),
        ("search", folder, "where did we move?", "--json", "--config", weights),
    ):
        results = ucma(*argv).json()["results"]
        assert results and all(r["contributions"]["importance"] == 0 for r in results)
        assert all(r["score"] == pytest.approx(r["contributions"]["relevance"]) for r in results)


def test_a_bad_config_file_is_a_usage_error_with_its_key(folder: Path, tmp_path: Path) -> None:
    typo = tmp_path / "typo.toml"
    typo.write_text("[ranking]\nimportanse = 0.1\n", encoding="utf-8")
    run = ucma("--config", typo, "info", folder)
    assert run.code == 2 and "ranking.importanse" in run.err and run.err.count("\n") == 1
    zone = tmp_path / "zone.json"
    zone.write_text('{"timezone": "Mars/Olympus"}', encoding="utf-8")
    run = ucma("--config", zone, "info", folder)
    assert run.code == 2 and "Mars/Olympus" in run.err
    missing = ucma("--config", tmp_path / "nowhere.toml", "info", folder)
    assert missing.code == 1 and "no config file" in missing.err


# ------------------------------------------------------------------ --provider
def _model(body: dict[str, Any]) -> dict[str, Any]:
    """A model that finds "lives in Lisbon" in every text that mentions Lisbon."""
    system, user = body["messages"][0]["content"], json.loads(body["messages"][1]["content"])
    if "triples" in system:
        return {
            "items": [
                {
                    "index": it["index"],
                    "facts": [
                        {
                            "subject": it.get("speaker") or "Ana",
                            "predicate": "lives in",
                            "object": "Lisbon",
                            "confidence": 0.9,
                        }
                    ]
                    if "Lisbon" in it["text"]
                    else [],
                }
                for it in user["items"]
            ]
        }
    if "summaries" in system:
        return {
            "items": [{"index": g["index"], "summary": " ".join(g["texts"])[:60]} for g in user["groups"]]
        }
    return {"items": [{"index": it["index"], "conflict": False} for it in user.get("items", [])]}


def test_consolidate_apply_with_the_openai_provider(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    assert semantic_count(folder) == 0
    with FakeOpenAIServer() as server:
        server.on_chat = _model
        argv = ["--provider", "openai", "--model", "gpt-test", "--base-url", server.url]
        run = ucma(*argv, "consolidate", folder, "--apply", "--phase", "extract", "--json")
        assert run.code == 0, run.err
        data = run.json()
        assert data["dry_run"] is False and data["errors"] == []
        assert data["provider"] == f"openai gpt-test at {server.url}"
        assert data["phases"]["extract"]["episodes"] == 6
        chats = server.requests_to("/v1/chat/completions")
        assert chats and {r.body["model"] for r in chats} == {"gpt-test"}
        assert {r.headers["authorization"] for r in chats} == {"Bearer sk-loopback"}
    assert semantic_count(folder) >= 1  # the model's fact was stored in the folder


def test_the_offline_provider_calls_no_model(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    with FakeOpenAIServer() as server:
        run = ucma("consolidate", folder, "--apply", "--phase", "extract", "--json")
        assert run.code == 0 and run.json()["provider"] == "offline"
        assert server.requests == []


def test_the_api_key_comes_only_from_the_environment(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run = ucma("--provider", "openai", "consolidate", folder, "--apply")
    assert run.code == 1 and "OPENAI_API_KEY" in run.err and "Traceback" not in run.err
    assert ucma("--provider", "openai", "--api-key", "sk-x", "info", folder).code == 2
    assert ucma("--provider", "anthropic", "info", folder).code == 2
    run = ucma("--model", "gpt-test", "info", folder)
    assert run.code == 2 and "--provider openai" in run.err


def test_settings_close_the_provider_they_made() -> None:
    settings = Settings(provider="openai", model="gpt-test", environ={"OPENAI_API_KEY": "sk-x"})
    assert settings.describe() == "openai gpt-test"
    assert type(settings.provider).__name__ == "OpenAIProvider"
    settings.close()
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        _ = Settings(provider="openai", environ={}).provider


# ------------------------------------------------------------------ progress on the command line
def test_consolidate_and_import_show_progress_when_asked(folder: Path, tmp_path: Path) -> None:
    run = ucma("consolidate", folder, "--apply", "--progress")
    assert run.code == 0
    for phase in ("compress", "extract", "patterns", "prune"):
        assert f"consolidate {phase} [" in run.err
    assert "100%" in run.err
    quiet = ucma("consolidate", folder, "--apply", "--no-progress")
    assert quiet.code == 0 and quiet.err == ""
    assert ucma("export", folder, tmp_path / "a.jsonl", "--no-progress").code == 0
    imported = ucma("import", tmp_path / "a.jsonl", tmp_path / "copy", "--progress")
    assert imported.code == 0 and "import [" in imported.err and "100%" in imported.err
    # by default (stderr is not a terminal here) nothing is drawn
    assert ucma("import", tmp_path / "a.jsonl", tmp_path / "again").err == ""


def test_search_only_looks(folder: Path) -> None:
    def state() -> list[tuple[str, float, float, int]]:
        with Memory(folder, embedder=HashingEmbedder()) as m:
            return [(r.id, r.stability, r.last_access, r.access_count) for r in m.list_memories(user_id=ANY)]

    before = state()
    assert ucma("search", folder, "where did we move?", "--json").json()["results"]
    assert state() == before
