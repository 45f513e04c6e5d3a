"""The names of the embedding backends (no imports, so reading a pipeline file loads no model code).

- ``onnx-int8``: ONNX Runtime, the packaged int8 all-MiniLM-L6-v2 (the default);
- ``onnx``: ONNX Runtime, the fp32 export (built by ``scripts/export_onnx.py``, not shipped);
- ``torch``: sentence-transformers on torch (the ``torch`` extra).
"""

BACKENDS = ("onnx-int8", "onnx", "torch")
DEFAULT_BACKEND = "onnx-int8"
ONNX_BACKENDS = frozenset({"onnx-int8", "onnx"})
