"""Query rewriters for :class:`~ragaudit.retrieval.rewrite.RewriteRetriever`: synonyms, RM3, LLM.

- :class:`SynonymRewriter` appends expansions from a configurable abbreviation / synonym map;
- :class:`RM3Rewriter` adds terms from pseudo-relevant documents (RM3), read from the caller's
  tenant only;
- :class:`LLMRewriter` asks a chat model for a clearer query.

Terms (for RM3 and synonym matching) are lower-cased ``\\w\\w+`` tokens, the pattern bm25s and
scikit-learn use, so they line up with what the BM25 retriever indexes; RM3 drops the English
stopwords in :data:`ENGLISH_STOPWORDS`. Terms are not stemmed: the expansion is text that any
retriever (BM25, dense, a remote service) analyses its own way.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragaudit.data.toml_files import read_toml
from ragaudit.errors import InputError
from ragaudit.llm.chat import SupportsChat, fill_prompt, require_placeholders, strip_markup
from ragaudit.retrieval.llm_client import chat_stage
from ragaudit.retrieval.protocol import Retriever
from ragaudit.retrieval.tenancy import require_tenant, require_top_k
from ragaudit.text.stopwords import STOPWORDS

logger = logging.getLogger(__name__)

_TOKEN = re.compile(r"\b\w\w+\b")

ENGLISH_STOPWORDS = STOPWORDS
"""The one English stopword list (:data:`ragaudit.text.stopwords.STOPWORDS`), used by RM3 to pick content terms."""


def tokens(text: str) -> list[str]:
    """Lower-cased ``\\w\\w+`` tokens of ``text``, in order."""
    return _TOKEN.findall(text.lower())


# --------------------------------------------------------------------------------------------- synonyms


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive match of ``phrase``; any run of whitespace matches a space."""
    body = r"\s+".join(re.escape(word) for word in phrase.split())
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def parse_synonyms(raw: object, source: str = "synonyms") -> dict[str, tuple[str, ...]]:
    """Check a synonym map (``{"term": "expansion" | ["expansion", ...]}``) and normalise it.

    Keys are matched case-insensitively, so keys differing only in case are merged. Raises
    :class:`InputError` naming ``source`` and the offending key.
    """
    if isinstance(raw, Mapping) and set(raw) == {"synonyms"} and isinstance(raw["synonyms"], Mapping):
        raw = raw["synonyms"]
    if not isinstance(raw, Mapping):
        raise InputError(
            source, None, "a synonym map must be a table / object", 'write e.g. {"koto": ["how much"]}'
        )
    out: dict[str, list[str]] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key.split():
            raise InputError(source, None, f"synonym key {key!r} is empty", "use a word or phrase as the key")
        values = [value] if isinstance(value, str) else value
        if (
            not isinstance(values, (list, tuple))
            or not values
            or not all(isinstance(v, str) and v.strip() for v in values)
        ):
            raise InputError(
                source,
                None,
                f"synonym {key!r} must map to a non-empty string or a list of non-empty strings",
                f'e.g. "{key}" = ["expansion one", "expansion two"]',
            )
        merged = out.setdefault(" ".join(key.lower().split()), [])
        merged.extend(" ".join(v.split()) for v in values if " ".join(v.split()) not in merged)
    return {k: tuple(v) for k, v in out.items()}


def load_synonyms(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Read a synonym map from a ``.json`` or ``.toml`` file (top level, or under a ``synonyms`` table)."""
    p = Path(path)
    if p.suffix.lower() == ".json":
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(str(p), None, "synonym file not found", "check the mapping_file path") from None
        except UnicodeDecodeError:
            raise InputError(str(p), None, "not UTF-8 text", "re-save the file as UTF-8") from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                str(p), exc.lineno, f"invalid JSON: {exc.msg}", "write one JSON object"
            ) from None
    elif p.suffix.lower() == ".toml":
        raw, _ = read_toml(p, what="synonym file", fix='write lines like koto = ["how much"]')
    else:
        raise InputError(str(p), None, "unknown synonym file type", "use a .json or .toml file")
    return parse_synonyms(raw, str(p))


class SynonymRewriter:
    """Append the expansions of every map key found in the query (whole words, any case).

    The original words stay; expansions are appended once each, in the order their keys occur in
    the query, skipping any expansion the query already contains. Expansions are not expanded again.
    """

    def __init__(self, mapping: Mapping[str, str | Sequence[str]], *, source: str = "synonyms") -> None:
        self.mapping = parse_synonyms(mapping, source)
        self._patterns = [(_phrase_pattern(key), values) for key, values in self.mapping.items()]
        self.name = f"synonyms({len(self.mapping)} keys)"

    @classmethod
    def from_file(cls, path: str | Path) -> SynonymRewriter:
        return cls(load_synonyms(path), source=str(path))

    def expand(self, query: str) -> str:
        """``query`` followed by the expansions that apply to it."""
        found: list[tuple[int, int, tuple[str, ...]]] = []
        for order, (pattern, values) in enumerate(self._patterns):
            match = pattern.search(query)
            if match is not None:
                found.append((match.start(), order, values))
        added: list[str] = []
        for _, _, values in sorted(found):
            for value in values:
                present = _phrase_pattern(value).search(query) is not None
                if not present and value.lower() not in (a.lower() for a in added):
                    added.append(value)
        return " ".join([query, *added]) if added else query

    async def rewrite(self, query: str, *, tenant_id: str) -> str:
        require_tenant(tenant_id)
        return self.expand(query)


# --------------------------------------------------------------------------------------------- RM3


@dataclass(frozen=True)
class Expansion:
    """What :class:`RM3Rewriter` did for one query."""

    query: str
    text: str
    """The expanded query text sent to the retriever."""
    weights: dict[str, float]
    """The interpolated query model ``P'(t)`` over the kept terms, heaviest first (sums to 1)."""
    feedback_ids: tuple[str, ...]
    """The feedback chunks used, in the base's order."""
    foreign_dropped: int = 0
    """Feedback chunks ignored because they carried another tenant's ``tenant_id``."""


def _doc_weights(scores: Sequence[object]) -> list[float]:
    """Feedback document weights: the retrieval scores when all are finite and >= 0 (a document scored
    0 then adds nothing), otherwise 1 for every document (e.g. negative cosine scores, no scores)."""
    values = [
        float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else math.nan for s in scores
    ]
    if all(math.isfinite(v) and v >= 0 for v in values):
        return values
    return [1.0] * len(values)


def _normalised(weights: Mapping[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {t: w / total for t, w in weights.items()} if total > 0 else {}


class RM3Rewriter:
    """RM3 pseudo relevance feedback (Abdul-Jaleel et al., 2004), expressed as query text.

    For a query ``Q`` searched by tenant ``T``:

    1. retrieve ``fb_docs`` chunks for ``Q`` from ``base`` **with tenant ``T``** (a chunk whose
       ``tenant_id`` names another tenant is ignored and counted in ``foreign_dropped``);
    2. relevance model over their non-stopword terms, each document weighted by its retrieval score
       ``s_d`` (a score of 0 contributes nothing; uniform weights if any score is negative or
       missing)::

           P(t|R) ∝ Σ_d s_d · tf(t, d) / |d|

       keep the ``fb_terms`` heaviest terms (ties by term) and renormalise them to sum to 1;
    3. interpolate with the query's own model ``P(t|Q) = tf(t, Q) / |Q|`` (non-stopword terms)::

           P'(t) = original_weight · P(t|Q) + (1 - original_weight) · P(t|R)

    4. write ``P'`` as text for retrievers that take text: the heaviest term gets ``max_repeats``
       occurrences and every other kept term ``max(1, round(max_repeats · P'(t) / max P'))``
       occurrences; the original query is kept verbatim at the front and supplies its own
       occurrences, and the missing ones are appended (heaviest term first). A retriever that adds up
       repeated query terms (ragaudit's BM25 does) thus weighs term ``t`` by ``P'(t)`` quantised to
       ``max_repeats`` levels. A query with no non-stopword term, or feedback with no scored terms, is
       returned unchanged.
    """

    def __init__(
        self,
        base: Retriever,
        fb_docs: int = 10,
        fb_terms: int = 10,
        original_weight: float = 0.5,
        *,
        max_repeats: int = 5,
        stopwords: frozenset[str] = ENGLISH_STOPWORDS,
    ) -> None:
        require_top_k(fb_docs)
        if isinstance(fb_terms, bool) or not isinstance(fb_terms, int) or fb_terms < 1:
            raise ValueError(f"fb_terms must be a positive integer (got {fb_terms!r})")
        if not 0.0 <= original_weight <= 1.0:
            raise ValueError(f"original_weight must be within [0, 1] (got {original_weight})")
        if max_repeats < 1:
            raise ValueError(f"max_repeats must be a positive integer (got {max_repeats})")
        self.base = base
        self.fb_docs = fb_docs
        self.fb_terms = fb_terms
        self.original_weight = float(original_weight)
        self.max_repeats = max_repeats
        self.stopwords = stopwords
        self.name = f"rm3(fb_docs={fb_docs}, fb_terms={fb_terms}, original_weight={original_weight:g})"

    def _terms(self, text: str) -> list[str]:
        return [t for t in tokens(text) if t not in self.stopwords]

    async def expand(self, query: str, *, tenant_id: str) -> Expansion:
        """The expansion of ``query`` from feedback retrieved for ``tenant_id`` only."""
        tenant = require_tenant(tenant_id)
        query_terms = self._terms(query)
        if not query_terms:
            return Expansion(query, query, {}, ())
        feedback = list(await self.base.search(tenant_id=tenant, query=query, top_k=self.fb_docs))
        own = [c for c in feedback[: self.fb_docs] if c.get("tenant_id", tenant) == tenant]
        relevance: dict[str, float] = {}
        for chunk, weight in zip(own, _doc_weights([c.get("score") for c in own]), strict=True):
            content = chunk.get("content")
            terms = self._terms(content) if isinstance(content, str) else []
            for term, count in Counter(terms).items():
                relevance[term] = relevance.get(term, 0.0) + weight * count / len(terms)
        ids = tuple(str(c.get("chunk_id")) for c in own)
        dropped = len(feedback[: self.fb_docs]) - len(own)
        top = sorted(_normalised(relevance).items(), key=lambda tw: (-tw[1], tw[0]))[: self.fb_terms]
        feedback_model = _normalised(dict(top))
        if not feedback_model:
            return Expansion(query, query, {}, ids, dropped)
        alpha = self.original_weight
        query_model = {t: c / len(query_terms) for t, c in Counter(query_terms).items()}
        combined = {
            t: alpha * query_model.get(t, 0.0) + (1.0 - alpha) * feedback_model.get(t, 0.0)
            for t in {*query_model, *feedback_model}
        }
        weights = dict(sorted(_normalised(combined).items(), key=lambda tw: (-tw[1], tw[0])))
        weights = {t: w for t, w in weights.items() if w > 0}
        return Expansion(query, self._as_text(query, weights), weights, ids, dropped)

    def _as_text(self, query: str, weights: Mapping[str, float]) -> str:
        heaviest = max(weights.values())
        present = Counter(tokens(query))
        appended: list[str] = []
        for term, weight in weights.items():
            wanted = max(1, math.floor(self.max_repeats * weight / heaviest + 0.5))
            appended.extend([term] * max(0, wanted - present[term]))
        return " ".join([query, *appended]) if appended else query

    async def rewrite(self, query: str, *, tenant_id: str) -> str:
        return (await self.expand(query, tenant_id=tenant_id)).text


# --------------------------------------------------------------------------------------------- LLM

DEFAULT_REWRITE_PROMPT = """\
Rewrite the search query below as one clear, complete search query for a document search engine.
Expand abbreviations and shorthand and fix spelling, but keep every product name, plan or tier,
number, date and constraint exactly as written. Answer with the rewritten query only, on one line.

Query: {query}"""

_LABEL = re.compile(r"^(?:rewritten|improved|new|search)?\s*query\s*:\s*", re.IGNORECASE)


def clean_rewrite(answer: str) -> str:
    """The query in a chat answer: first non-empty line, without a ``Query:`` label, quotes or Markdown."""
    lines = [line.strip() for line in strip_markup(answer).splitlines() if line.strip()]
    if not lines:
        return ""
    text = _LABEL.sub("", lines[0]).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1].strip()
    return text.strip("“”").strip()


class LLMRewriter:
    """Ask a chat model for a better query; ``prompt`` must contain ``{query}``.

    An empty or unusable answer keeps the original query and adds a line to :attr:`warnings`. The
    tenant id is checked but never sent to the model.
    """

    def __init__(
        self,
        chat_client: SupportsChat,
        model: str | None = None,
        prompt: str = DEFAULT_REWRITE_PROMPT,
        *,
        max_tokens: int | None = 128,
    ) -> None:
        self.client = chat_client
        self.model = model
        self.prompt = require_placeholders(prompt, ("query",), "LLM rewriter prompt")
        self.max_tokens = max_tokens
        self.name = f"llm:{model or chat_client.model}"
        self.warnings: list[str] = []

    async def rewrite(self, query: str, *, tenant_id: str) -> str:
        require_tenant(tenant_id)
        answer = await self.client.complete(
            fill_prompt(self.prompt, {"query": query}), model=self.model, max_tokens=self.max_tokens
        )
        rewritten = clean_rewrite(answer)
        if not rewritten:
            message = (
                f"{self.name}: empty rewrite {answer[:80]!r} for query {query[:80]!r}; kept the original"
            )
            self.warnings.append(message)
            logger.warning(message)
            return query
        return rewritten


# Built-in rewrite stages, registered by name in ragaudit.pipelines.stages.BUILTIN_STAGES (loaded the way
# entry points of the ``ragaudit.stages`` group are); each is called with the stage's TOML keys.


def synonyms_stage(
    *, mapping: Mapping[str, str | Sequence[str]] | None = None, mapping_file: str | None = None
) -> SynonymRewriter:
    """``[rewrite] type = "synonyms"``: a mapping given inline or in a file."""
    return SynonymRewriter(load_synonyms(mapping_file) if mapping_file is not None else dict(mapping or {}))


def rm3_stage(
    *, retriever: Retriever, fb_docs: int = 10, fb_terms: int = 10, original_weight: float = 0.5
) -> RM3Rewriter:
    """``[rewrite] type = "rm3"``: pseudo-relevance feedback from the pipeline's own first results."""
    return RM3Rewriter(retriever, int(fb_docs), int(fb_terms), float(original_weight))


llm_stage = chat_stage(LLMRewriter)
"""``[rewrite] type = "llm"``: an OpenAI-compatible chat model rewrites the query."""
