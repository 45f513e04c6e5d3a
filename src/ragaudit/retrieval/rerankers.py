"""Rerankers for :class:`~ragaudit.retrieval.rerank.RerankRetriever`: cross-encoder, bi-encoder, LLM.

- :class:`CrossEncoderReranker` scores each (query, text) pair jointly with a sentence-transformers
  ``CrossEncoder`` loaded from a **local folder** (ragaudit never downloads models, and no trained
  cross-encoder ships on PyPI: train or fetch one yourself and point at its folder). The score is the
  model's output after its activation (sigmoid for single-label models), so it lies in (0, 1).
- :class:`BiEncoderReranker` scores ``cos(embed(query), embed(text))`` with a sentence embedder (by
  default the packaged all-MiniLM-L6-v2), offline. Cheaper than a cross-encoder and weaker.
- :class:`LLMReranker` asks an OpenAI-compatible chat endpoint for a graded relevance score per
  candidate (pointwise, 0-3 by default) and parses the answer robustly (:func:`parse_relevance`);
  an answer it cannot read scores 0 and is recorded in :attr:`LLMReranker.warnings`.

Model inference runs in a worker thread (one inference at a time per reranker), so the event loop
keeps serving other queries.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.llm.chat import SupportsChat, fill_prompt, require_placeholders, strip_markup
from ragaudit.retrieval.embedder import Embedder, TextEncoder
from ragaudit.retrieval.llm_client import chat_stage

logger = logging.getLogger(__name__)

_CROSS_ENCODERS: dict[tuple[str, str, int | None], Any] = {}
_LOAD_LOCK = threading.Lock()


def _load_cross_encoder(path: Path, device: str, max_length: int | None) -> Any:
    """Load (once per process) the CrossEncoder stored at ``path``, offline."""
    key = (str(path), device, max_length)
    with _LOAD_LOCK:
        model = _CROSS_ENCODERS.get(key)
        if model is not None:
            return model
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise MissingDependencyError("sentence-transformers", "torch") from None
        model = CrossEncoder(str(path), device=device, local_files_only=True, max_length=max_length)
        if model.num_labels != 1:
            raise InputError(
                str(path),
                None,
                f"the cross-encoder has {model.num_labels} output labels; a reranker needs one score per pair",
                "use a cross-encoder trained for relevance with num_labels=1",
            )
        model.eval()
        _CROSS_ENCODERS[key] = model
        return model


def _cross_encoder_folder(model_path: str | Path) -> Path:
    path = Path(model_path).expanduser()
    if not path.is_dir():
        raise InputError(
            str(model_path),
            None,
            "no such local cross-encoder folder; ragaudit never downloads models",
            "pass the folder of a trained cross-encoder (one saved with CrossEncoder.save(folder))",
        )
    config = path / "config.json"
    try:
        architectures = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    except (OSError, ValueError, AttributeError):
        raise InputError(
            str(config), None, "missing or unreadable model config", "point at a saved cross-encoder folder"
        ) from None
    if not any("ForSequenceClassification" in str(a) for a in architectures):
        raise InputError(
            str(path),
            None,
            "this folder holds an embedding (bi-encoder) or base model, not a cross-encoder: it has no "
            "trained scoring head, so its scores would be random",
            "use BiEncoderReranker for an embedding model, or a cross-encoder folder for this reranker",
        )
    return path.resolve()


class CrossEncoderReranker:
    """Joint (query, text) scoring with a local sentence-transformers CrossEncoder (loaded on first use)."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        batch_size: int = 32,
        max_length: int | None = None,
        device: str = "cpu",
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer (got {batch_size})")
        self.path = _cross_encoder_folder(model_path)
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.name = f"cross-encoder:{self.path.name}"
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The loaded ``CrossEncoder`` (shared by every reranker over the same folder in the process)."""
        return _load_cross_encoder(self.path, self.device, self.max_length)

    def score_sync(self, query: str, texts: Sequence[str]) -> list[float]:
        """The scores of ``texts`` for ``query``, computed in batches of ``batch_size`` pairs."""
        if not texts:
            return []
        with self._lock:
            scores = self.model.predict(
                [(query, t) for t in texts],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [float(s) for s in np.asarray(scores, dtype=np.float64).reshape(-1)]

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return await asyncio.to_thread(self.score_sync, query, list(texts))


class BiEncoderReranker:
    """Cosine similarity of query and text embeddings; ``encoder`` defaults to the packaged MiniLM.

    Any :class:`~ragaudit.retrieval.embedder.TextEncoder` works, e.g. an
    :class:`~ragaudit.retrieval.embedding_cache.EmbeddingCache` so candidate texts embed once.
    """

    def __init__(self, encoder: TextEncoder | None = None, *, model: str | Path | None = None) -> None:
        if encoder is not None and model is not None:
            raise ValueError("pass either an encoder or a model, not both")
        self.encoder: TextEncoder = encoder if encoder is not None else Embedder(model)
        label = getattr(self.encoder, "name", None) or getattr(
            getattr(self.encoder, "encoder", None), "name", None
        )
        self.name = f"bi-encoder:{label or type(self.encoder).__name__}"
        self._lock = threading.Lock()

    def score_sync(self, query: str, texts: Sequence[str]) -> list[float]:
        """``cos(q, t)`` for each text ``t``."""
        if not texts:
            return []
        with self._lock:
            vectors = np.asarray(self.encoder.encode([query, *texts]), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        unit = vectors / norms[:, None]
        return [float(s) for s in unit[1:] @ unit[0]]

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return await asyncio.to_thread(self.score_sync, query, list(texts))


DEFAULT_RERANK_PROMPT = """\
You judge search results. Rate how well the passage answers the query, on a scale from 0 to {scale_max}.
3 = answers it completely and authoritatively, 2 = relevant and helpful, 1 = related but not \
sufficient, 0 = irrelevant.
Answer with the number only.

Query: {query}

Passage: {passage}"""

_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_KEYWORD = re.compile(rf"\b(?:score|relevance|rating|grade)\b\s*(?:is|=|:)?\s*({_NUMBER})", re.IGNORECASE)
_SCALE = re.compile(rf"\b0\s*(?:-|–|to)\s*{_NUMBER}|(?:/|\bout of\b)\s*{_NUMBER}", re.IGNORECASE)


def parse_relevance(answer: str, scale_max: float) -> float | None:
    """The relevance score in ``answer``, or ``None`` when it holds no single in-range score.

    Read in this order: a JSON number or object with ``score``/``relevance``/``rating``/``grade``;
    after dropping scale mentions (``0-3``, ``0 to 3``, ``/3``, ``out of 3``) and Markdown, a number
    right after one of those words (``Score: 2``); else the only number in the answer (``**2**``,
    ``I'd give it 2.``). Several different numbers, none, or one outside ``[0, scale_max]`` -> ``None``.
    """
    text = strip_markup(answer)
    value: float | None = None
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        parsed = next((parsed[k] for k in ("score", "relevance", "rating", "grade") if k in parsed), None)
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        value = float(parsed)
    else:
        cleaned = _SCALE.sub(" ", text)
        keyword = _KEYWORD.search(cleaned)
        if keyword is not None:
            value = float(keyword.group(1))
        else:
            numbers = {float(n) for n in re.findall(_NUMBER, cleaned)}
            value = numbers.pop() if len(numbers) == 1 else None
    if value is None or not math.isfinite(value) or not 0 <= value <= scale_max:
        return None
    return value


class LLMReranker:
    """Pointwise graded relevance from a chat model (see :func:`parse_relevance` for the answer format).

    ``prompt`` must contain ``{query}`` and ``{passage}`` (and may use ``{scale_max}``). Candidates are
    scored ``concurrency`` at a time; a passage longer than ``max_passage_chars`` is cut there;
    ``max_tokens`` caps the answer (``None`` sends no cap, for models that reject it). An
    answer that holds no usable score counts as 0 and adds a line to :attr:`warnings`.
    """

    def __init__(
        self,
        chat_client: SupportsChat,
        model: str | None = None,
        prompt: str = DEFAULT_RERANK_PROMPT,
        *,
        scale_max: int = 3,
        concurrency: int = 4,
        max_passage_chars: int = 4000,
        max_tokens: int | None = 16,
    ) -> None:
        if scale_max < 1:
            raise ValueError(f"scale_max must be at least 1 (got {scale_max})")
        if concurrency < 1:
            raise ValueError(f"concurrency must be a positive integer (got {concurrency})")
        self.client = chat_client
        self.model = model
        self.prompt = require_placeholders(prompt, ("query", "passage"), "LLM reranker prompt")
        self.scale_max = scale_max
        self.concurrency = concurrency
        self.max_passage_chars = max_passage_chars
        self.max_tokens = max_tokens
        self.name = f"llm:{model or chat_client.model}"
        self.warnings: list[str] = []
        """One line per unusable answer (query and answer abbreviated)."""

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        gate = asyncio.Semaphore(self.concurrency)

        async def one(text: str) -> float:
            prompt = fill_prompt(
                self.prompt,
                {"query": query, "passage": text[: self.max_passage_chars], "scale_max": str(self.scale_max)},
            )
            async with gate:
                answer = await self.client.complete(prompt, model=self.model, max_tokens=self.max_tokens)
            value = parse_relevance(answer, self.scale_max)
            if value is None:
                message = f"{self.name}: unusable relevance answer {answer[:80]!r} for query {query[:80]!r}; scored 0"
                self.warnings.append(message)
                logger.warning(message)
                return 0.0
            return value

        return list(await asyncio.gather(*(one(t) for t in texts)))


# Built-in rerank stages, registered by name in ragaudit.pipelines.stages.BUILTIN_STAGES (loaded the way
# entry points of the ``ragaudit.stages`` group are); each is called with the stage's TOML keys.


def bi_encoder_stage(*, model: str | None = None, backend: str | None = None) -> BiEncoderReranker:
    """``[rerank] type = "bi-encoder"``: cosine similarity of the packaged (or given) encoder, on the
    given embedding backend (default ``onnx-int8``)."""
    from ragaudit.retrieval.dense import make_encoder

    return BiEncoderReranker(make_encoder(model, backend=backend))


def cross_encoder_stage(*, model: str | None = None) -> CrossEncoderReranker:
    """``[rerank] type = "cross-encoder"``: a local cross-encoder folder."""
    if not model:
        raise InputError(
            "[rerank]", None, "a cross-encoder needs a local model folder", 'model = "/path/to/cross-encoder"'
        )
    return CrossEncoderReranker(str(model))


llm_stage = chat_stage(LLMReranker)
"""``[rerank] type = "llm"``: an OpenAI-compatible chat model grades each text."""
