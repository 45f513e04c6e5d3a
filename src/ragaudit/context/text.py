"""Small text helpers shared by the context checks: sentences, content words, word-level normalisation.

Sentences come from the chunkers' rule-based splitter (:func:`ragaudit.corpus.chunkers.split_sentences`),
so a sentence here is the same unit a ``sentence`` chunking would use. Content words are lower-cased
``\\w+`` runs that are not stop words, with a light plural strip (``calls`` -> ``call``); nothing more
(no stemmer dependency), which is enough to compare an answer with the chunk it paraphrases.
"""

from __future__ import annotations

import re

from ragaudit.corpus.chunkers import split_sentences

WORD = re.compile(r"\w+")

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each either else ever every few for from
    further had has have having he her here hers him his how i if in into is it its itself just may me might
    more most must my neither no nor not now of off on once only or other our ours out over own per same she
    should so some such than that the their theirs them then there these they this those through to too
    under until up upon us very via was we were what when where whether which while who whom why will with
    within would yes you your yours
    """
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""English function words ignored by lexical support and unit matching (negations are not content)."""


def singular(word: str) -> str:
    """A light plural strip: ``calls`` -> ``call``, ``days`` -> ``day``; ``access``/``status`` stay."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """Lower-cased, singularised words of ``text`` that are not stop words."""
    return {singular(w) for w in (m.group(0).lower() for m in WORD.finditer(text)) if w not in STOPWORDS}


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (blank lines also end a sentence)."""
    return split_sentences(text, 0, len(text))


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, trimmed."""
    return [text[a:b] for a, b in sentence_spans(text)]
