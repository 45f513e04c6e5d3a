"""A hint when retrieved ids miss judged ids only by their form: Unicode normalisation, case, spaces.

Scoring matches ids exactly, as trec_eval does: ``d\\u0301oc-1`` (NFD: ``d`` + combining acute) is not
``dóc-1`` (NFC), so a run whose ids are NFD while the qrels are NFC scores 0 on those cases, and the
only other sign is a low Judged@k. :class:`IdFormCheck` looks, per case, at the retrieved ids that are
**not judged** and asks whether one equals a judged id once both are put in one form (NFKC, which
covers NFC and width forms, then case-folded, then stripped of surrounding whitespace); the report then
carries a note (:meth:`IdFormCheck.note`) naming how many cases and one example. Scores are not changed.

Cost: only unjudged retrieved ids are looked at, and only through a per-case map of the judged ids
that is built when a case has some; an ASCII id takes ``lower().strip()`` instead of NFKC.
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
        if not judged:
            return
        keys: dict[str, str] | None = None
        for doc_id in retrieved:
            if doc_id in judged:
                continue
            if keys is None:
                keys = {id_key(j): j for j in judged}
            match = keys.get(id_key(doc_id))
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
