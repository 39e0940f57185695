"""The OpenAI client that :class:`~ucma_core.embedders.OpenAIEmbedder` and
:class:`~ucma_core.providers.OpenAIProvider` share: lazy SDK import, checked options,
created on first use, closed only when we created it."""

from __future__ import annotations

import importlib
import importlib.util
import threading
from typing import Any

from ucma_core.errors import ConfigurationError, DependencyMissingError, InvalidInputError

__all__ = ["OpenAIClientOwner", "import_openai"]

_INSTALL_HINT = "pip install 'ucma[openai]'"


def import_openai(who: str) -> Any:
    """The ``openai`` module, or :class:`DependencyMissingError` naming ``who`` needs it."""
    if importlib.util.find_spec("openai") is None:
        raise DependencyMissingError(f"{who} needs the 'openai' package: {_INSTALL_HINT}")
    try:
        return importlib.import_module("openai")
    except ImportError as e:
        raise DependencyMissingError(f"the 'openai' package cannot be imported ({e}); {_INSTALL_HINT}") from e


class OpenAIClientOwner:
    """Holds an ``openai.OpenAI`` client: the one passed in, or one built on first use."""

    def __init__(
        self, *, client: Any, api_key: str | None, base_url: str | None, timeout: float, max_retries: int
    ) -> None:
        if client is not None and (api_key is not None or base_url is not None):
            raise ConfigurationError("pass either client= or api_key=/base_url=, not both")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise InvalidInputError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InvalidInputError(f"max_retries must be an int >= 0, got {max_retries!r}")
        self._client = client
        self._owns_client = client is None
        self._client_options: dict[str, Any] = {
            "api_key": api_key,
            "base_url": base_url,
            "timeout": float(timeout),
            "max_retries": max_retries,
        }
        self._lock = threading.Lock()

    def _get_client(self, openai: Any) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    self._client = openai.OpenAI(**self._client_options)
                except openai.OpenAIError as e:
                    raise ConfigurationError(
                        f"cannot create the OpenAI client: {e} (pass api_key= or set OPENAI_API_KEY)"
                    ) from e
            return self._client

    def close(self) -> None:
        """Close the HTTP client if it was created here (a passed-in client is left open)."""
        if not self._owns_client:
            return
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
