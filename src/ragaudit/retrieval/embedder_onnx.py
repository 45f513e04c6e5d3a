"""Sentence embeddings with ONNX Runtime: the packaged int8 MiniLM, or any local ONNX model folder.

An ONNX model folder holds ``model.onnx`` (a transformer encoder: inputs ``input_ids`` and
``attention_mask``, optionally ``token_type_ids``; output the token embeddings, batch x sequence x
dim, or an already pooled batch x dim) and ``tokenizer.json`` (a Hugging Face ``tokenizers`` file).
Optional: ``sentence_bert_config.json`` (``max_seq_length``) and ``config.json`` (``hidden_size``).

Encoding, for texts ``t_1..t_n``:

1. tokenise (truncating at ``max_seq_length`` tokens, special tokens included);
2. group the texts by their exact token count and cut each group into batches of at most
   ``batch_size`` texts and :data:`TOKENS_PER_BATCH` tokens: a batch is never padded, so no text is
   ever computed at another length than its own (:func:`length_batches`);
3. run the graph on ``intra_op_num_threads`` = the cores this process may use;
4. mean-pool: ``e = Σ_j m_j h_j / max(Σ_j m_j, 1e-9)`` over the token embeddings ``h_j`` with the
   attention mask ``m_j``; then L2-normalise, ``e / max(‖e‖, 1e-12)`` (as sentence-transformers'
   Pooling and Normalize modules do);
5. put the rows back in the callers' order.

**Batch invariance.** A text's vector is a function of the text and the model alone: bit-identical
whether it is embedded alone, in any batch, in any order, on any thread count, locally or on a Ray
actor. Three things make it so: no padding (step 2); the packaged int8 graph quantises each token
row's activations with that row's own scale and accumulates in int32, which is exact, so GEMM
blocking cannot change a result (``scripts/rowwise_int8.py``); every other operator (attention,
softmax, GELU, layer norm, pooling) works within one sequence or one row. ``tests/test_batch_invariance.py``
compares the bytes.

The packaged model is ``models/minilm-l6-v2-int8`` inside ragaudit (made by ``scripts/export_onnx.py``:
int8 weights per output column, int8 activations per token row); its ``model.onnx`` must hash to
:data:`PACKAGED_INT8_SHA256`, checked when it loads. The fp32 export is not shipped (about 90 MB): the
script writes it to :func:`user_models_dir`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.retrieval.embedding_types import (
    FloatMatrix,
    configured_max_seq_length,
    package_versions,
    read_json,
)

INT8_FOLDER = "minilm-l6-v2-int8"
FP32_FOLDER = "minilm-l6-v2-fp32"
PACKAGED_INT8_SHA256 = "fd29220ea02c0211d7d44ba30eb7e700b5f71656331f75b031df903cf5a451ff"
TOKENS_PER_BATCH = 1024  # per ONNX Runtime call: long texts run one or a few at a time, queries ~100
MODELS_ENV = "RAGAUDIT_MODELS_DIR"
DEFAULT_MAX_SEQ_LENGTH = 512
_TOKEN_OUTPUTS = ("last_hidden_state", "token_embeddings")
EXPORT_FIX = (
    "build it from a ragaudit checkout: pip install -e '.[torch,export]' && "
    "python scripts/export_onnx.py --no-int8"
)

_SESSIONS: dict[tuple[str, int], OnnxModel] = {}
_LOCK = threading.Lock()


def packaged_int8_dir() -> Path:
    """The folder of the int8 MiniLM shipped inside the ragaudit package."""
    return Path(__file__).resolve().parents[1] / "models" / INT8_FOLDER


def user_models_dir() -> Path:
    """Where generated models live: ``$RAGAUDIT_MODELS_DIR``, else ``~/.cache/ragaudit/models``."""
    env = os.environ.get(MODELS_ENV, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ragaudit" / "models"


def fp32_dir() -> Path:
    """Where ``backend = "onnx"`` finds the fp32 MiniLM written by ``scripts/export_onnx.py``."""
    return user_models_dir() / FP32_FOLDER


def is_onnx_folder(path: Path) -> bool:
    """Whether ``path`` holds ``model.onnx`` and ``tokenizer.json``."""
    return (path / "model.onnx").is_file() and (path / "tokenizer.json").is_file()


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    """Raise :class:`InputError` unless the file at ``path`` hashes to ``expected``."""
    got = file_sha256(path)
    if got != expected:
        raise InputError(
            str(path),
            None,
            f"sha256 {got} differs from the pinned {expected}: the packaged model file is damaged or "
            "was replaced",
            'reinstall ragaudit (pip install --force-reinstall ragaudit), or use backend = "torch"',
        )


def _read_object(path: Path) -> dict[str, Any]:
    value = read_json(path)
    return value if isinstance(value, dict) else {}


def onnx_max_seq_length(folder: Path) -> int:
    """Truncation length: ``sentence_bert_config.json``'s ``max_seq_length``, else the tokenizer's own
    truncation, else 512."""
    configured = configured_max_seq_length(folder)
    if configured is not None:
        return configured
    truncation = _read_object(folder / "tokenizer.json").get("truncation")
    if isinstance(truncation, dict) and isinstance(truncation.get("max_length"), int):
        return int(truncation["max_length"])
    return DEFAULT_MAX_SEQ_LENGTH


def onnx_configured_dim(folder: Path) -> int | None:
    """The embedding length ``config.json`` declares (``hidden_size``), without loading the model."""
    value = _read_object(folder / "config.json").get("hidden_size")
    return value if isinstance(value, int) else None


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> FloatMatrix:
    """Masked mean of token embeddings ``hidden`` (b, s, d) over ``mask`` (b, s), then unit L2 rows."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden.astype(np.float32) * weights).sum(axis=1)
    pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
    return normalise_rows(pooled)


def normalise_rows(matrix: np.ndarray) -> FloatMatrix:
    """Rows divided by ``max(‖row‖, 1e-12)``, as float32."""
    matrix = matrix.astype(np.float32, copy=False)
    norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


def length_batches(
    lengths: Sequence[int], batch_size: int, tokens_per_batch: int = TOKENS_PER_BATCH
) -> list[list[int]]:
    """Indices grouped by exact length (shortest first, callers' order within a length), each group
    cut into batches of at most ``batch_size`` texts and ``tokens_per_batch`` tokens (at least one
    text): every batch holds texts of one length only, so it needs no padding."""
    groups: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        groups.setdefault(length, []).append(index)
    batches: list[list[int]] = []
    for length in sorted(groups):
        size = max(1, min(batch_size, tokens_per_batch // max(length, 1)))
        members = groups[length]
        batches += [members[start : start + size] for start in range(0, len(members), size)]
    return batches


class OnnxModel:
    """One ONNX encoder and its tokenizer, loaded once per process per (folder, threads)."""

    def __init__(
        self, folder: Path, *, expected_sha256: str | None = None, threads: int | None = None
    ) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise MissingDependencyError("onnxruntime", "dense") from None
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise MissingDependencyError("tokenizers", "dense") from None
        self.folder = folder
        model_file = folder / "model.onnx"
        if expected_sha256 is not None:
            verify_sha256(model_file, expected_sha256)
        self.threads = threads or available_cores()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for unreadable graphs
            raise InputError(
                str(model_file), None, f"ONNX Runtime cannot load the model: {exc}", "export it again"
            ) from None
        self.inputs = [i.name for i in self.session.get_inputs()]
        if not {"input_ids", "attention_mask"} <= set(self.inputs):
            raise InputError(
                str(model_file),
                None,
                f"the graph's inputs are {self.inputs}; an encoder needs input_ids and attention_mask",
                "export the transformer encoder with those input names",
            )
        outputs = self.session.get_outputs()
        names = [o.name for o in outputs]
        self.output = next((n for n in _TOKEN_OUTPUTS if n in names), names[0])
        self.pooled = len(next(o.shape for o in outputs if o.name == self.output)) == 2
        self.max_seq_length = onnx_max_seq_length(folder)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)

    def _run(self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> FloatMatrix:
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = types
        (out,) = self.session.run([self.output], feed)
        return normalise_rows(out) if self.pooled else mean_pool_normalise(out, mask)

    def encode(self, texts: Sequence[str], batch_size: int) -> FloatMatrix:
        """Unit-length embeddings of ``texts`` (row i for text i), in unpadded batches of one token
        length each (:func:`length_batches`)."""
        encodings = self.tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encodings]
        result: FloatMatrix | None = None
        for batch in length_batches(lengths, batch_size):
            ids = np.array([encodings[i].ids for i in batch], dtype=np.int64)
            mask = np.array([encodings[i].attention_mask for i in batch], dtype=np.int64)
            types = np.array([encodings[i].type_ids for i in batch], dtype=np.int64)
            vectors = self._run(ids, mask, types)
            if result is None:
                result = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            result[batch] = vectors
        assert result is not None  # texts is non-empty: the caller handles []
        return result

    @property
    def dim(self) -> int:
        shape = next(o.shape for o in self.session.get_outputs() if o.name == self.output)
        if isinstance(shape[-1], int):
            return int(shape[-1])
        return int(self.encode(["dimension probe"], 1).shape[1])


def load_onnx_model(
    folder: Path, expected_sha256: str | None = None, threads: int | None = None
) -> OnnxModel:
    """The :class:`OnnxModel` for ``folder`` on ``threads`` intra-op threads (default: the cores this
    process may use), created once per process (the sha256, if given, is checked when it is created).
    The thread count changes speed only, not the vectors."""
    key = (str(folder), threads or available_cores())
    with _LOCK:
        model = _SESSIONS.get(key)
        if model is None:
            model = OnnxModel(folder, expected_sha256=expected_sha256, threads=key[1])
            _SESSIONS[key] = model
        return model


def loaded(folder: Path, threads: int | None = None) -> bool:
    """Whether this process has loaded the model in ``folder`` (on ``threads`` threads)."""
    return (str(folder), threads or available_cores()) in _SESSIONS


def runtime_versions() -> dict[str, str]:
    """onnxruntime and tokenizers versions, for reports."""
    return package_versions("onnxruntime", "tokenizers")
