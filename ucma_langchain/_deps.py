"""One clear error when a framework package this adapter needs is not installed."""

from __future__ import annotations

from ucma_core.errors import DependencyMissingError

__all__ = ["missing"]


def missing(error: ImportError, *, extra: str, feature: str) -> DependencyMissingError:
    """The error to raise (``from error``) when importing a framework package failed.

    Args:
        error: The ``ImportError`` the import raised.
        extra: The ``ucma`` extra that installs the package (``"langchain"``, ``"agents"``).
        feature: What needs it, for the message.

    Examples:
        >>> error = ModuleNotFoundError("No module named 'langchain'", name="langchain")
        >>> str(missing(error, extra="agents", feature="UCMAMiddleware"))
        "UCMAMiddleware needs the 'langchain' package, which is not installed; install it with: \
pip install 'ucma[agents]'"
    """
    package = (error.name or "").split(".")[0].replace("_", "-") or "framework"
    return DependencyMissingError(
        f"{feature} needs the {package!r} package, which is not installed; "
        f"install it with: pip install 'ucma[{extra}]'"
    )
