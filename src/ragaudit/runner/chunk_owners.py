"""Who owns a chunk a built-in pipeline returned, from the corpus, by id **and** content.

A built-in pipeline (``--pipeline bm25``, a pipeline TOML) returns the chunks it made from the corpus,
under their own ids and with their own text. So the corpus decides each returned chunk's owner
without an index of every document's shingles (which costs about 1 s per 1,000 documents):

- **by id**: the chunk id names a chunk the pipeline made (or a document); its tenant is the document's;
- **by content**: the returned text must be that chunk's text (whitespace aside). Text that differs is
  *unfound* (nothing vouches for it, whatever the id says), so the chunk is not verified.

The label the pipeline attaches (``tenant_id``) is never read. An id the corpus does not know is not
attributed either. This is :class:`ragaudit.runner.tenancy.ChunkOwnership` for the runner, so the
evaluation and the benchmarks (which cannot import the tenant audit's full index) use it directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragaudit.corpus.model import Chunk
from ragaudit.data.run import RankedItem


def _flat(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class KnownChunkOwner:
    """What the corpus says of one returned chunk: the owner its id names, and whether its text is
    that chunk's text."""

    owner: str | None
    """The tenant whose chunk the id names; ``None`` for an id the corpus does not know."""
    text_matches: bool
    """The returned text is the named chunk's text (or no text was returned)."""

    @property
    def attributed(self) -> bool:
        return self.owner is not None and self.text_matches

    @property
    def text_unfound(self) -> bool:
        return self.owner is not None and not self.text_matches

    def foreign_owners(self, caller: str) -> frozenset[str]:
        """The id's owner when it is not ``caller`` (another tenant's id is a leak whatever the text)."""
        return frozenset({self.owner}) if self.owner is not None and self.owner != caller else frozenset()


class PipelineChunkOwnership:
    """Ownership of the chunks a built-in pipeline made (see the module docstring)."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks = {c.chunk_id: c for c in chunks}  # references: no copy of the corpus's text

    def attribute_item(self, item: RankedItem) -> KnownChunkOwner:
        chunk = self._chunks.get(item.chunk_id)
        if chunk is None:
            return KnownChunkOwner(None, False)
        content = item.content
        matches = content is None or content == chunk.text or _flat(content) == _flat(chunk.text)
        return KnownChunkOwner(chunk.tenant_id, matches)
