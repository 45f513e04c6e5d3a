"""A hint when retrieved ids miss judged ids only by their form: Unicode normalisation, case, spaces.

Scoring matches ids exactly, as trec_eval does: ``d\\u0301oc-1`` (NFD: ``d`` + combining acute) is not
``dóc-1`` (NFC), so a run whose ids are NFD while the qrels are NFC scores 0 on those cases, and the
only other sign is a low Judged@k. :class:`IdFormCheck` looks, per case, at the retrieved ids that are
**not judged** and asks whether one equals a judged id once both are put in one form (NFKC, which
covers NFC and width forms, then case-folded, then stripped of surrounding whitespace); the report then
carries a note (:meth:`IdFormCheck.note`) naming how many cases and one example. Scores are not changed.

Cost: when every retrieved and judged id is plain (ASCII, no capital, no whitespace: :func:`all_plain`,
a few scans in C over the joined ids) nothing more is done; else, case by case, the same test first,
then only the unjudged retrieved ids are looked up in a map of the judged ids' forms (an ASCII id takes
``lower().strip()``, not NFKC).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NOTE_PREFIX = "ids that differ from judged ids only in form"
"""How the note starts (the pytest plugin finds it among a result's notes by this)."""


def id_key(doc_id: str) -> str:
    """``doc_id`` in one form: NFKC (NFC and width forms), case-folded, surrounding whitespace stripped."""
    if doc_id.isascii():
        return doc_id.lower().strip()
    return unicodedata.normalize("NFKC", doc_id).casefold().strip()


_ASCII_SPACES = (" ", "\t", "\n", "\r", "\x0b", "\x0c")


def all_plain(groups: Iterable[Iterable[str]]) -> bool:
    """Whether every id of ``groups`` (rankings, judgments) is its own :func:`id_key` for sure (ASCII, no
    capital, no whitespace): then no two different ids share a key and there is nothing to check. A few
    scans in C over the joined text (about 7 ms for 500,000 ids), so a run and its judgments are tested
    whole before any case is."""
    text = "".join(map("".join, groups))
    return text.isascii() and text == text.lower() and not any(space in text for space in _ASCII_SPACES)


def how_they_differ(retrieved: str, judged: str) -> str:
    """The smallest rule under which the two ids are equal: ``NFC``, ``NFKC``, ``case`` or ``whitespace``."""
    if unicodedata.normalize("NFC", retrieved) == unicodedata.normalize("NFC", judged):
        return "NFC"
    nfkc = unicodedata.normalize("NFKC", retrieved), unicodedata.normalize("NFKC", judged)
    if nfkc[0] == nfkc[1]:
        return "NFKC"
    if nfkc[0].casefold() == nfkc[1].casefold():
        return "case"
    return "whitespace" if nfkc[0].strip() == nfkc[1].strip() else "case and whitespace"


def visible(doc_id: str) -> str:
    """``doc_id`` with the characters a reader cannot tell apart escaped (combining marks, compatibility
    forms, whitespace, non-printing): ``d\\u0301oc-1``."""
    out = []
    for ch in doc_id:
        hidden = unicodedata.combining(ch) or unicodedata.normalize("NFKC", ch) != ch
        out.append(f"\\u{ord(ch):04x}" if hidden or ch.isspace() or not ch.isprintable() else ch)
    return "".join(out)


@dataclass
class IdFormCheck:
    """Collects, case by case, retrieved ids that are unjudged but match a judged id in form."""

    capped: bool = False
    """Whether the candidates were cut to a bound (the fast TREC path): the count is then a floor."""
    cases: int = 0
    example: tuple[str, str, str] | None = None
    """``(case id, retrieved id, judged id)`` of the first match."""

    def add(self, case_id: str, retrieved: Iterable[str], judged: Mapping[str, object]) -> None:
        """Check one case: ``retrieved`` ids in rank order, ``judged`` its judgments (``{id: grade}``)."""
        ranked = retrieved if isinstance(retrieved, list) else list(retrieved)
        if not judged or all_plain((ranked, judged)):
            return
        unjudged = set(ranked).difference(judged)
        keys = {id_key(j): j for j in judged}
        for doc_id in ranked:
            match = keys.get(id_key(doc_id)) if doc_id in unjudged else None
            if match is not None and match != doc_id:
                self.cases += 1
                if self.example is None:
                    self.example = (case_id, doc_id, match)
                return

    def note(self) -> str | None:
        """The report's note, or ``None`` when no case had such an id."""
        if self.example is None:
            return None
        case_id, retrieved, judged = self.example
        return (
            f"{NOTE_PREFIX}: in {'at least ' if self.capped else ''}{self.cases} case(s) a retrieved id is not judged but equals a "
            f"judged id after Unicode normalisation, case folding or whitespace stripping, e.g. case {case_id}: "
            f"retrieved '{visible(retrieved)}' vs judged '{visible(judged)}' "
            f"({how_they_differ(retrieved, judged)}). Ids are matched exactly, as trec_eval does, so these "
            "score as non-relevant: write the run's and the judgments' ids in one form (e.g. NFC)"
        )


def id_form_note(notes: Iterable[str]) -> str | None:
    """The id-form note among a result's ``notes``, if any."""
    return next((n for n in notes if n.startswith(NOTE_PREFIX)), None)


class IdFormWarning(UserWarning):
    """Retrieved ids that miss judged ids only by their form (the Python API warns with the note)."""


def warn_id_forms(notes: Iterable[str]) -> None:
    """Warn (:class:`IdFormWarning`) with the id-form note among ``notes``, if there is one."""
    import warnings

    if note := id_form_note(notes):
        warnings.warn(note, IdFormWarning, stacklevel=3)
