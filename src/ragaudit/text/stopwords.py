"""The one English stopword list (function words) used by context checks, query rewrites and RM3."""

from __future__ import annotations

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each either else ever every few for from
    further get got had has have having he her here hers herself him himself his how i if in into is it its
    itself just may me might more most must my myself neither no nor not now of off on once only or other our
    ours ourselves out over own per same shall she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up upon us very via was we were
    what when where whether which while who whom why will with within would yes you your yours yourself
    yourselves
    """
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""English function words: ignored as content (lexical support, unit words, RM3 terms, negation scope).
Negations (``no``, ``not``) are function words here; the checks that care about them look for them
separately."""
