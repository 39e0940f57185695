"""The export file: one JSON object per line, written and read back with every field checked.

See :mod:`ucma_core.portable` for the layout. Reading never trusts the file: a
record is rebuilt field by field against its dataclass, ids, scope ids, content and
metadata pass the core's own checks, and a line's ``state`` may not overwrite a
field of its record, so a hand-edited or hostile file fails with a clear
:class:`~ucma_core.errors.InvalidInputError` naming the line.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import os
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from ucma_core.errors import InvalidInputError, StorageError
from ucma_core.progress import ProgressCallback, notify
from ucma_core.records import MemoryRecord, MemoryType
from ucma_core.storage import codec
from ucma_core.storage.graph import EdgeType
from ucma_core.validation import check_content, check_metadata, check_scope_id

__all__ = [
    "FORMAT",
    "VECTORS",
    "VERSION",
    "Checked",
    "ExportHeader",
    "check_file",
    "decode_vector",
    "dumps",
    "encode_vector",
    "read_header",
    "read_lines",
    "record_from_json",
    "record_to_json",
    "state_of",
]

FORMAT = "ucma-export"
VERSION = 1
#: How vectors are written: little-endian float32, base64.
VECTORS = "float32-le-base64"
_MAX_ID = 256


@dataclass(frozen=True)
class ExportHeader:
    """What the first line of an export file says about it."""

    version: int
    embedder_name: str
    dimension: int
    vectors: bool
    counts: dict[str, int]
    ucma_version: str = ""
    exported_at: str = ""


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def record_to_json(record: MemoryRecord) -> dict[str, Any]:
    """Every field of ``record`` as JSON values (enums by value, tuples as lists)."""
    return {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)}


_FIELDS: dict[type[MemoryRecord], tuple[tuple[str, Any, bool], ...]] = {}


def _fields(cls: type[MemoryRecord]) -> tuple[tuple[str, Any, bool], ...]:
    """``(name, type hint, has a default)`` of each field of a record class."""
    if cls in _FIELDS:
        return _FIELDS[cls]
    hints = typing.get_type_hints(cls)
    _FIELDS[cls] = tuple(
        (
            f.name,
            hints[f.name],
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    )
    return _FIELDS[cls]


def _convert(hint: Any, value: Any, name: str) -> Any:
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return None if value is None else _convert(args[0], value, name)
    if origin is tuple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{name} must be a list of strings")
        return tuple(value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false")
        return value
    if hint in (int, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number")
        if hint is int and value != int(value):
            raise ValueError(f"{name} must be a whole number")
        return hint(value)
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string")
        return value
    return value


def _check_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_ID or "\x00" in value:
        raise ValueError(f"{what} must be a non-empty string of at most {_MAX_ID} characters")
    return value


def record_from_json(data: Mapping[str, Any], *, max_chars: int) -> MemoryRecord:
    """The record ``data`` describes (as :func:`record_to_json` wrote it), checked field by field.

    Raises:
        ValueError: a missing, unknown or malformed field (the message names it).
    """
    if not isinstance(data, Mapping):
        raise ValueError("record must be an object")
    cls = codec.RECORD_CLASSES[MemoryType.parse(data.get("memory_type", ""))]
    fields = _fields(cls)
    unknown = set(data) - {name for name, _, _ in fields}
    if unknown:
        raise ValueError(f"unknown field(s) for a {cls.__name__}: {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    for name, hint, has_default in fields:
        if name in data:
            values[name] = _convert(hint, data[name], name)
        elif not has_default:
            raise ValueError(f"missing field {name!r}")
    memory_id = _check_id(values["id"], "id")
    if memory_id.startswith("entity:"):
        raise ValueError("a memory id cannot start with 'entity:'")
    check_content(values["content"], max_chars=max_chars)
    for scope in ("user_id", "agent_id", "session_id"):
        check_scope_id(values[scope], scope)
    check_metadata(values["metadata"])
    return cls(**values)


#: Node attributes an export's ``state`` may not set: they come from the record itself.
_RESERVED_STATE = frozenset({"kind", "memory_type", "key"})


def state_of(obj: Mapping[str, Any], record: MemoryRecord) -> dict[str, Any]:
    """The graph bookkeeping of a memory line, checked not to overwrite the record's own fields."""
    state = obj.get("state", {})
    if not isinstance(state, dict):
        raise ValueError("state must be an object")
    clash = set(state) & (_RESERVED_STATE | {f.name for f in dataclasses.fields(record)})
    if clash:
        raise ValueError(f"state may not set the record's own field(s): {', '.join(sorted(clash))}")
    return state


def encode_vector(vector: np.ndarray) -> str:
    """A vector as base64 of its little-endian float32 bytes (exact for the float32 Chroma stores)."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: object, dimension: int) -> list[float]:
    """The vector :func:`encode_vector` wrote, checked to have ``dimension`` finite values."""
    if not isinstance(text, str):
        raise ValueError("vector must be a base64 string")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as e:
        raise ValueError(f"vector is not valid base64: {e}") from e
    if len(raw) != 4 * dimension:
        raise ValueError(f"vector has {len(raw) // 4} dimensions, the header says {dimension}")
    array = np.frombuffer(raw, dtype="<f4")
    if not np.isfinite(array).all():
        raise ValueError("vector has a NaN or infinite value")
    return list(array.astype(float).tolist())


def dumps(obj: Any) -> str:
    """One line of the file: compact JSON, readable UTF-8 (escaped only if it cannot be UTF-8)."""
    line = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: keep it, escaped, rather than fail the export
        line = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return line


@dataclass
class Checked:
    """A file that :func:`check_file` accepted: its header and the number of its last line."""

    header: ExportHeader
    lines: int


def read_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of ``path``, one at a time."""
    try:
        with open(path, encoding="utf-8") as fh:
            for number, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                try:
                    obj = json.loads(text)
                except ValueError as e:
                    raise InvalidInputError(f"{path}, line {number}: not valid JSON ({e})") from e
                if not isinstance(obj, dict):
                    raise InvalidInputError(f"{path}, line {number}: expected a JSON object")
                yield number, obj
    except UnicodeDecodeError as e:
        raise InvalidInputError(f"{path} is not UTF-8 text: {e}") from e
    except OSError as e:
        raise StorageError(f"cannot read {path}: {e}") from e


def _header(path: Path, number: int, obj: dict[str, Any]) -> ExportHeader:
    if obj.get("kind") != "header" or obj.get("format") != FORMAT:
        raise InvalidInputError(f"{path} is not a UCMA export (its first line is not a {FORMAT} header)")
    version = obj.get("version")
    if version != VERSION:
        raise InvalidInputError(
            f"{path} is a version {version!r} export; this UCMA reads version {VERSION}. "
            "Import it with a matching UCMA release."
        )
    try:
        embedder = obj["embedder"]
        counts = obj.get("counts") or {}
        return ExportHeader(
            version=VERSION,
            embedder_name=str(embedder["name"]),
            dimension=int(embedder["dimension"]),
            vectors=obj.get("vectors") == VECTORS,
            counts={str(k): int(v) for k, v in counts.items()},
            ucma_version=str(obj.get("ucma_version", "")),
            exported_at=str(obj.get("exported_at", "")),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidInputError(f"{path}, line {number}: malformed header ({e})") from e


def read_header(file: str | os.PathLike[str]) -> ExportHeader:
    """The header of an export file (its format version, embedder and counts)."""
    path = Path(file)
    for number, obj in read_lines(path):
        return _header(path, number, obj)
    raise InvalidInputError(f"{path} is empty; expected a UCMA export")


def _check_entity(obj: dict[str, Any]) -> None:
    _check_id(obj.get("id"), "entity id")
    if not str(obj["id"]).startswith("entity:"):
        raise ValueError("an entity id starts with 'entity:'")
    attrs = obj.get("attrs")
    if not isinstance(attrs, dict) or not isinstance(attrs.get("name"), str):
        raise ValueError("entity attrs must be an object with a name")
    check_scope_id(attrs.get("user_id"), "user_id")
    check_scope_id(attrs.get("agent_id"), "agent_id")


def _check_edge(obj: dict[str, Any]) -> None:
    _check_id(obj.get("from"), "edge from")
    _check_id(obj.get("to"), "edge to")
    EdgeType.parse(obj.get("type"))  # type: ignore[arg-type]
    weight = obj.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 < weight <= 1.0:
        raise ValueError(f"edge weight must be a number in (0, 1], got {weight!r}")


def check_file(path: Path, *, max_chars: int, progress: ProgressCallback | None) -> Checked:
    """Read the whole file once and check every line, so a bad file stores nothing."""
    header: ExportHeader | None = None
    ended = False
    seen = {"memory": 0, "entity": 0, "edge": 0}
    number = 0
    for number, obj in read_lines(path):
        if header is None:
            header = _header(path, number, obj)
            notify(progress, 0, 0, "check")
            continue
        kind = obj.get("kind")
        try:
            if ended:
                raise ValueError("a line after the end line")
            if kind == "memory":
                state_of(obj, record_from_json(obj.get("record"), max_chars=max_chars))  # type: ignore[arg-type]
                if "vector" in obj:
                    decode_vector(obj["vector"], header.dimension)
            elif kind == "entity":
                _check_entity(obj)
            elif kind == "edge":
                _check_edge(obj)
            elif kind == "end":
                ended = True
            else:
                raise ValueError(f"unknown line kind {kind!r}")
        except (ValueError, KeyError, TypeError) as e:
            raise InvalidInputError(f"{path}, line {number}: {e}") from e
        if kind in seen:
            seen[kind] += 1
            if seen[kind] % 1000 == 0:
                notify(progress, number, 0, "check")
    if header is None:
        raise InvalidInputError(f"{path} is empty; expected a UCMA export")
    if not ended:
        raise InvalidInputError(
            f"{path} ends before its end line: the export was cut short; export the folder again"
        )
    plural = {"memory": "memories", "entity": "entities", "edge": "edges"}
    wanted = {k: header.counts.get(plural[k], v) for k, v in seen.items()}
    if wanted != seen:
        raise InvalidInputError(f"{path} has {seen} lines but its header announces {header.counts}")
    notify(progress, number, number, "check")
    return Checked(header, number)
