"""Sentences for the context checks (words, stopwords and content words live in :mod:`ragaudit.text`).

Sentences come from the chunkers' rule-based splitter (:func:`ragaudit.corpus.chunkers.split_sentences`),
so a sentence here is the same unit a ``sentence`` chunking would use. Content words are lower-cased
``\\w+`` runs that are not stop words, with a light plural strip (``calls`` -> ``call``); nothing more
(no stemmer dependency), which is enough to compare an answer with the chunk it paraphrases.
"""

from __future__ import annotations

from ragaudit.corpus.chunkers import split_sentences


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (blank lines also end a sentence)."""
    return split_sentences(text, 0, len(text))


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, trimmed."""
    return [text[a:b] for a, b in sentence_spans(text)]
