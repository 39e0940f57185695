"""The command line's global choices: ``--config FILE`` and ``--provider`` / ``--model`` / ``--base-url``.

A configuration file is TOML (``.toml``) or JSON (any other name) whose keys are
:class:`~ucma_core.config.MemoryConfig`'s fields; a nested group is a table::

    importance_threshold = 0.3
    timezone = "Europe/Lisbon"

    [forgetting]
    retention_threshold = 0.05

    [ranking]
    recency = 0.2

Keys are checked against the dataclasses and values against their types, so a typo
fails with the key's name instead of being ignored. The provider is the model behind
consolidation: ``offline`` (the default, no model) or ``openai`` (any OpenAI-compatible
server with ``--base-url``); its API key is read from ``OPENAI_API_KEY`` only, never
from a command-line flag, where it would land in the shell history.

Examples:
    >>> config = config_from_dict({"importance_threshold": 0.3, "forgetting": {"retention_threshold": 0.05}})
    >>> config.importance_threshold, config.forgetting.retention_threshold
    (0.3, 0.05)
    >>> config_from_dict({"forgeting": {}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ucma_core.errors.InvalidInputError: unknown config key 'forgeting'; expected one of: ...
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ucma_core.config import MemoryConfig
from ucma_core.errors import ConfigurationError, InvalidInputError
from ucma_core.providers import OfflineProvider, OpenAIProvider
from ucma_core.providers.protocols import Provider

__all__ = ["PROVIDERS", "Settings", "add_options", "config_from_dict", "load_config"]

#: What ``--provider`` accepts.
PROVIDERS = ("offline", "openai")
#: The environment variable ``--provider openai`` reads its API key from.
API_KEY_VARIABLE = "OPENAI_API_KEY"


def _value(hint: Any, value: Any, name: str) -> Any:
    """``value`` checked against the field's type ``hint`` (a nested config is built from a table)."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(value, Mapping):
            raise InvalidInputError(f"config key {name!r} is a group of settings: give a table of them")
        return _build(hint, value, f"{name}.")
    args = typing.get_args(hint)
    if type(None) in args:
        if value is None:
            return None
        hint = next(a for a in args if a is not type(None))
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif hint is str:
        ok = isinstance(value, str)
    else:  # a type this reader does not know how to check: refuse rather than guess
        ok = False
    if not ok:
        expected = getattr(hint, "__name__", str(hint))
        raise InvalidInputError(f"config key {name!r} must be a {expected}, got {value!r}")
    return value


def _build(cls: type[Any], data: Mapping[str, Any], prefix: str = "") -> Any:
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidInputError(
            f"unknown config key {prefix + str(unknown[0])!r}; expected one of: {', '.join(sorted(known))}"
        )
    values = {key: _value(hints[key], value, prefix + key) for key, value in data.items()}
    try:
        return cls(**values)
    except ConfigurationError as e:
        raise InvalidInputError(f"config{' ' + prefix.rstrip('.') if prefix else ''}: {e}") from e


def config_from_dict(data: Mapping[str, Any]) -> MemoryConfig:
    """A :class:`~ucma_core.config.MemoryConfig` from plain data (a parsed TOML or JSON file).

    Raises:
        InvalidInputError: an unknown key, a value of the wrong type, or a value the
            configuration refuses (the message names the key).
    """
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"a configuration is a table of settings, not {type(data).__name__}")
    config: MemoryConfig = _build(MemoryConfig, data)
    return config


def _parse(path: Path, text: str) -> Any:
    if path.suffix.lower() == ".toml":
        if sys.version_info < (3, 11):  # pragma: no cover - tomllib is in the standard library from 3.11
            raise ConfigurationError(f"reading {path} needs Python 3.11 (tomllib); write it as JSON instead")
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InvalidInputError(f"{path} is not valid TOML: {e}") from e
    try:
        return json.loads(text)
    except ValueError as e:
        raise InvalidInputError(f"{path} is not valid JSON: {e}") from e


def load_config(file: str | os.PathLike[str]) -> MemoryConfig:
    """The :class:`~ucma_core.config.MemoryConfig` a TOML (``.toml``) or JSON file describes.

    Raises:
        ConfigurationError: the file does not exist or cannot be read.
        InvalidInputError: the file is not valid TOML / JSON, or a key or value is wrong
            (the message names the file and the key).
    """
    path = Path(file)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise ConfigurationError(f"no config file at {path}") from e
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigurationError(f"cannot read the config file {path}: {e}") from e
    try:
        return config_from_dict(_parse(path, text))
    except InvalidInputError as e:
        message = str(e)
        raise InvalidInputError(message if message.startswith(str(path)) else f"{path}: {message}") from e


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--config``, ``--provider``, ``--model`` and ``--base-url`` to a parser (they are
    accepted before or after the command name)."""
    group = parser.add_argument_group("configuration")
    group.add_argument(
        "--config",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="MemoryConfig settings from a TOML (.toml) or JSON file (default: the defaults)",
    )
    group.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=argparse.SUPPRESS,
        help="the model behind consolidation: offline (default, no model) or openai "
        f"(API key from {API_KEY_VARIABLE})",
    )
    group.add_argument(
        "--model", default=argparse.SUPPRESS, help="the chat model of --provider openai (default gpt-4o-mini)"
    )
    group.add_argument(
        "--base-url",
        dest="base_url",
        default=argparse.SUPPRESS,
        help="the API root of --provider openai, for an OpenAI-compatible server",
    )


class Settings:
    """The configuration and provider every command opens folders with (made from the options
    :func:`add_options` adds). The provider is made on first use and closed by :meth:`close`."""

    def __init__(
        self,
        *,
        config: str | os.PathLike[str] | None = None,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        name = provider or "offline"
        if name not in PROVIDERS:
            raise InvalidInputError(f"unknown --provider {provider!r}; use one of: {', '.join(PROVIDERS)}")
        if name == "offline" and (model is not None or base_url is not None):
            raise InvalidInputError("--model and --base-url choose the OpenAI model: add --provider openai")
        self.provider_name = name
        self.config = load_config(config) if config is not None else None
        self._model = model
        self._base_url = base_url
        self._environ = os.environ if environ is None else environ
        self._provider: Provider | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Settings:
        return cls(
            config=getattr(args, "config", None),
            provider=getattr(args, "provider", None),
            model=getattr(args, "model", None),
            base_url=getattr(args, "base_url", None),
        )

    @property
    def provider(self) -> Provider:
        """The provider ``--provider`` chose."""
        if self._provider is None:
            self._provider = self._make_provider()
        return self._provider

    def _make_provider(self) -> Provider:
        if self.provider_name == "offline":
            return OfflineProvider()
        key = self._environ.get(API_KEY_VARIABLE, "").strip()
        if not key:
            raise ConfigurationError(
                f"--provider openai reads its API key from the {API_KEY_VARIABLE} environment variable, "
                "which is not set (a local server that needs no key accepts any value)"
            )
        return OpenAIProvider(self._model or "gpt-4o-mini", api_key=key, base_url=self._base_url)

    def memory_options(self) -> dict[str, Any]:
        """The ``config`` and ``provider`` keyword arguments of :class:`~ucma_core.Memory`."""
        return {"config": self.config, "provider": self.provider}

    def describe(self) -> str:
        """``offline`` or ``openai gpt-4o-mini`` (for reports)."""
        if self.provider_name == "offline":
            return "offline"
        return f"openai {self._model or 'gpt-4o-mini'}" + (f" at {self._base_url}" if self._base_url else "")

    def close(self) -> None:
        """Close the provider's HTTP client, if one was made."""
        close = getattr(self._provider, "close", None)
        if callable(close):
            close()
