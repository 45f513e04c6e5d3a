"""Chunkers: split a :class:`Document` into :class:`Chunk` objects with exact character offsets.

Every chunker keeps ``doc.text[chunk.start:chunk.end] == chunk.text``, names chunks ``{doc_id}#{n}``
(``n`` counts from 0 in document order; the ``whole`` chunker uses the document id itself), and copies
tenant, title and metadata from the document. A document whose text holds no token still yields one
chunk (its whole text), so it stays indexable by its title and document-level labels never vanish.

Tokens are counted one way everywhere (:func:`count_tokens`): :data:`TOKEN_PATTERN` ``\\w+|[^\\w\\s]``,
i.e. a run of word characters, or a single punctuation mark / symbol. ``"API limit: 50,000."`` is
7 tokens (``API``, ``limit``, ``:``, ``50``, ``,``, ``000``, ``.``), close to what subword tokenizers
count for English prose.

Strategies (:func:`make_chunker`):

* ``whole``: one chunk per document.
* ``fixed``: windows of ``size`` tokens, each starting ``size - overlap`` tokens after the previous one.
* ``sentence``: whole sentences packed up to ``size`` tokens; a sentence longer than ``size`` is cut
  into tokens.
* ``recursive``: markdown headings, then blank-line paragraphs, then sentences, then tokens.

Every strategy but ``whole`` works the same way: split the text into units at the coarsest level; a
unit longer than ``size`` tokens is split again at the next level (the last level is single tokens);
then pack the units greedily, in order, while a chunk stays within ``size`` tokens. So a section,
paragraph or sentence that fits in ``size`` is never cut, and an oversized one is cut at the coarsest
boundary that works. With ``overlap`` > 0 the next chunk starts with the trailing whole units of the
previous one that fit in ``overlap`` tokens (for ``fixed``, whose units are tokens: exactly ``overlap``
tokens), leaving room for at least one new unit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragaudit.corpus.model import Chunk, Document, whole_document_chunk
from ragaudit.errors import ChunkerError

if TYPE_CHECKING:
    from ragaudit.corpus.loading import Corpus

TOKEN_PATTERN = re.compile(r"\w+|[^\w\s]")
"""The tokenizer used to count chunk sizes: word-character runs, or single punctuation marks."""

_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?=\s|$)", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r]*\n\s*")
_SENTENCE_END = re.compile(r"[.!?\u3002]+[\"'\u201d\u2019)\]]*(?=\s)|\n[ \t\r]*\n")

Span = tuple[int, int]
Splitter = Callable[[str, int, int], list[Span]]


def count_tokens(text: str) -> int:
    """Number of :data:`TOKEN_PATTERN` tokens in ``text``."""
    return sum(1 for _ in TOKEN_PATTERN.finditer(text))


def _trimmed(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _split_at(text: str, start: int, end: int, cuts: list[int]) -> list[Span]:
    """The non-blank pieces of ``text[start:end]`` between the cut positions, trimmed of whitespace."""
    bounds = [start, *(c for c in cuts if start < c < end), end]
    pieces = (_trimmed(text, a, b) for a, b in pairwise(bounds))
    return [p for p in pieces if p is not None]


def split_headings(text: str, start: int, end: int) -> list[Span]:
    """Sections beginning at markdown heading lines (``#`` to ``######``)."""
    return _split_at(text, start, end, [m.start() for m in _HEADING.finditer(text, start, end)])


def split_paragraphs(text: str, start: int, end: int) -> list[Span]:
    """Paragraphs separated by blank lines."""
    return _split_at(text, start, end, [m.start() for m in _PARAGRAPH_BREAK.finditer(text, start, end)])


def split_sentences(text: str, start: int, end: int) -> list[Span]:
    """Sentences: ``.``, ``!`` or ``?`` (plus closing quotes/brackets) before whitespace, or a blank line.

    Rule-based: an abbreviation such as ``e.g.`` before a space also ends a sentence.
    """
    return _split_at(text, start, end, [m.end() for m in _SENTENCE_END.finditer(text, start, end)])


def split_tokens(text: str, start: int, end: int) -> list[Span]:
    """Every token of :data:`TOKEN_PATTERN`."""
    return [m.span() for m in TOKEN_PATTERN.finditer(text, start, end)]


def _pack(units: Sequence[tuple[Span, int]], size: int, overlap: int) -> list[Span]:
    """Greedily pack consecutive units (each at most ``size`` tokens) into spans of at most ``size`` tokens."""
    out: list[Span] = []
    i, m = 0, len(units)
    while i < m:
        j, total = i, 0
        while j < m and total + units[j][1] <= size:
            total += units[j][1]
            j += 1
        out.append((units[i][0][0], units[j - 1][0][1]))
        if j == m:
            break
        # Carry trailing units within the overlap budget, leaving room for at least one new unit.
        k, carried = j, 0
        while (
            k - 1 > i
            and carried + units[k - 1][1] <= overlap
            and carried + units[k - 1][1] + units[j][1] <= size
        ):
            k -= 1
            carried += units[k][1]
        i = k
    return out


def _units(text: str, start: int, end: int, levels: Sequence[Splitter], size: int) -> list[tuple[Span, int]]:
    """Pieces of ``text[start:end]`` at the first level, each piece over ``size`` tokens split at the next."""
    out: list[tuple[Span, int]] = []
    for piece in levels[0](text, start, end):
        tokens = count_tokens(text[piece[0] : piece[1]])
        if tokens <= size or len(levels) == 1:
            out.append((piece, tokens))
        else:
            out += _units(text, piece[0], piece[1], levels[1:], size)
    return out


def _make_chunks(doc: Document, spans: Sequence[Span]) -> list[Chunk]:
    if not spans:
        spans = [(0, len(doc.text))]
    return [
        Chunk(f"{doc.doc_id}#{n}", doc.doc_id, doc.tenant_id, a, b, doc.text[a:b], doc.title, doc.metadata)
        for n, (a, b) in enumerate(spans)
    ]


@runtime_checkable
class Chunker(Protocol):
    """Anything that splits a document into chunks; ``name`` and ``config`` describe it in reports."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> Mapping[str, object]: ...

    def chunk(self, doc: Document) -> list[Chunk]: ...


@dataclass(frozen=True)
class WholeChunker:
    """One chunk per document, whose id is the document id."""

    @property
    def name(self) -> str:
        return "whole"

    @property
    def config(self) -> Mapping[str, object]:
        return {"strategy": "whole"}

    def chunk(self, doc: Document) -> list[Chunk]:
        return [whole_document_chunk(doc)]


@dataclass(frozen=True)
class LevelChunker:
    """Split by a list of levels (coarse to fine, the last one tokens) and pack up to ``size`` tokens."""

    strategy: str
    size: int
    overlap: int
    levels: tuple[Splitter, ...]

    @property
    def name(self) -> str:
        return f"{self.strategy}-{self.size}-{self.overlap}"

    @property
    def config(self) -> Mapping[str, object]:
        return {
            "strategy": self.strategy,
            "size": self.size,
            "overlap": self.overlap,
            "tokenizer": TOKEN_PATTERN.pattern,
        }

    def chunk(self, doc: Document) -> list[Chunk]:
        units = _units(doc.text, 0, len(doc.text), self.levels, self.size)
        return _make_chunks(doc, _pack(units, self.size, self.overlap))


LEVELS: dict[str, tuple[Splitter, ...]] = {
    "fixed": (split_tokens,),
    "sentence": (split_sentences, split_tokens),
    "recursive": (split_headings, split_paragraphs, split_sentences, split_tokens),
}
STRATEGIES = ("whole", *LEVELS)


def make_chunker(strategy: str, size: int = 256, overlap: int = 0) -> Chunker:
    """The chunker named ``strategy`` (one of :data:`STRATEGIES`); ``size`` and ``overlap`` are in tokens.

    ``whole`` ignores ``size`` and ``overlap``. Raises :class:`ChunkerError` (a ``ValueError``) on an
    unknown strategy, ``size <= 0``, a negative overlap or ``overlap >= size``.
    """
    if strategy == "whole":
        return WholeChunker()
    if strategy not in LEVELS:
        raise ChunkerError(
            f"unknown chunking strategy {strategy!r}; valid strategies: {', '.join(STRATEGIES)}"
        )
    for label, value in (("size", size), ("overlap", overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ChunkerError(f"chunk {label} must be an integer number of tokens (got {value!r})")
    if size <= 0:
        raise ChunkerError(f"chunk size must be a positive number of tokens (got {size})")
    if overlap < 0:
        raise ChunkerError(f"chunk overlap must be 0 or more tokens (got {overlap})")
    if overlap >= size:
        raise ChunkerError(f"chunk overlap ({overlap}) must be smaller than the chunk size ({size})")
    return LevelChunker(strategy, size, overlap, LEVELS[strategy])


def chunk_corpus(corpus: Corpus, chunker: Chunker) -> list[Chunk]:
    """Every chunk of every document, in corpus order."""
    return [chunk for doc in corpus.documents for chunk in chunker.chunk(doc)]
