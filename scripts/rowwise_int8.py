"""Rewrite an fp32 BERT ONNX graph to int8 with one activation scale per token row (batch-invariant).

Used by ``scripts/export_onnx.py``. ONNX Runtime's ``quantize_dynamic`` computes one activation
scale per *tensor*, i.e. per batch: a text's vector then depends on the texts it is batched with.
Here every activation that enters a weight MatMul is quantised with its own row's scale:

- ``s = max(|x_row|, 1e-30) / 127`` (``Abs`` + ``ReduceMax`` over the last axis), then
  ``QuantizeLinear(x, s, 128)`` with ``block_size`` = the row length (uint8, zero point 128, i.e.
  symmetric int8 shifted into uint8 for the VNNI u8*s8 kernels);
- ``MatMulIntegerToFloat(x_q, W_q, 1, w_scale, 128)`` (int32 accumulation, exact, so GEMM blocking
  and threading cannot change it), times ``s``: the row's scale;
- weights: int8, one scale per output column (``max|w_col| / 127``), symmetric;
- the word-embedding table: int8, one scale per token row, gathered with the ids and multiplied back.

Everything else (attention, softmax, GELU, layer norm) stays fp32 and works row by row. The graph is
saved at opset 21 (blocked ``QuantizeLinear``) plus ``com.microsoft`` (``MatMulIntegerToFloat``).
The rewrite is deterministic: the same fp32 graph gives the same bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MS_DOMAIN = "com.microsoft"
WORD_EMBEDDINGS = "bert.embeddings.word_embeddings.weight"


def _column_int8(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 weights with one scale per output column (axis 1)."""
    scale = (np.maximum(np.abs(weight).max(axis=0), 1e-30) / 127.0).astype(np.float32)
    return np.clip(np.round(weight / scale), -127, 127).astype(np.int8), scale


def _row_int8(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 table with one scale per row (kept as a column, shape (rows, 1))."""
    scale = (np.maximum(np.abs(table).max(axis=1, keepdims=True), 1e-30) / 127.0).astype(np.float32)
    return np.clip(np.round(table / scale), -127, 127).astype(np.int8), scale


def quantise_rowwise(model: Any) -> Any:
    """``model`` (an fp32 ``onnx.ModelProto``) with its weight MatMuls and word embeddings in int8,
    activations quantised per row. Returns a new ``ModelProto``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    added = [
        numpy_helper.from_array(np.array(128, dtype=np.uint8), "rowq_zero_point"),
        numpy_helper.from_array(np.array(1.0 / 127.0, dtype=np.float32), "rowq_inv127"),
        numpy_helper.from_array(np.array(1e-30, dtype=np.float32), "rowq_tiny"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "rowq_one"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "rowq_last_axis"),
    ]
    dropped: set[str] = set()
    quantised: dict[str, tuple[str, str]] = {}  # activation -> (uint8 tensor, row scales)
    nodes: list[Any] = []

    def quantise_activation(x: str, prefix: str, width: int) -> tuple[str, str]:
        if x not in quantised:
            nodes.extend(
                [
                    helper.make_node("Abs", [x], [prefix + "_abs"]),
                    helper.make_node(
                        "ReduceMax", [prefix + "_abs", "rowq_last_axis"], [prefix + "_max"], keepdims=1
                    ),
                    helper.make_node("Max", [prefix + "_max", "rowq_tiny"], [prefix + "_max_pos"]),
                    helper.make_node("Mul", [prefix + "_max_pos", "rowq_inv127"], [prefix + "_scale"]),
                    helper.make_node("Shape", [prefix + "_scale"], [prefix + "_scale_shape"]),
                    helper.make_node(
                        "ConstantOfShape",
                        [prefix + "_scale_shape"],
                        [prefix + "_zero_point"],
                        value=helper.make_tensor("zp", TensorProto.UINT8, [1], [128]),
                    ),
                    helper.make_node(
                        "QuantizeLinear",
                        [x, prefix + "_scale", prefix + "_zero_point"],
                        [prefix + "_q"],
                        axis=-1,
                        block_size=width,
                    ),
                ]
            )
            quantised[x] = (prefix + "_q", prefix + "_scale")
        return quantised[x]

    for node in graph.node:
        weight = inits.get(node.input[1]) if len(node.input) > 1 else None
        if node.op_type == "MatMul" and weight is not None and len(weight.dims) == 2:
            prefix = node.name.strip("/").replace("/", "_")
            w = numpy_helper.to_array(weight).astype(np.float32)
            x_q, x_scale = quantise_activation(node.input[0], prefix + "_in", int(w.shape[0]))
            w_q, w_scale = _column_int8(w)
            added += [
                numpy_helper.from_array(w_q, prefix + "_wq"),
                numpy_helper.from_array(w_scale, prefix + "_ws"),
            ]
            dropped.add(node.input[1])
            nodes += [
                helper.make_node(
                    "MatMulIntegerToFloat",
                    [x_q, prefix + "_wq", "rowq_one", prefix + "_ws", "rowq_zero_point"],
                    [prefix + "_y"],
                    domain=MS_DOMAIN,
                ),
                helper.make_node("Mul", [prefix + "_y", x_scale], [node.output[0]]),
            ]
        elif node.op_type == "Gather" and node.input[0] == WORD_EMBEDDINGS:
            table_q, table_scale = _row_int8(numpy_helper.to_array(inits[WORD_EMBEDDINGS]).astype(np.float32))
            added += [
                numpy_helper.from_array(table_q, "word_embeddings_q"),
                numpy_helper.from_array(table_scale, "word_embeddings_scale"),
            ]
            dropped.add(WORD_EMBEDDINGS)
            ids = node.input[1]
            nodes += [
                helper.make_node("Gather", ["word_embeddings_q", ids], ["word_embeddings_rows_q"]),
                helper.make_node(
                    "Cast", ["word_embeddings_rows_q"], ["word_embeddings_rows"], to=TensorProto.FLOAT
                ),
                helper.make_node("Gather", ["word_embeddings_scale", ids], ["word_embeddings_row_scale"]),
                helper.make_node(
                    "Mul", ["word_embeddings_rows", "word_embeddings_row_scale"], [node.output[0]]
                ),
            ]
        else:
            nodes.append(node)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    kept = [i for i in graph.initializer if i.name not in dropped]
    del out.graph.initializer[:]
    out.graph.initializer.extend(kept + added)
    del out.opset_import[:]
    out.opset_import.extend([helper.make_opsetid("", 21), helper.make_opsetid(MS_DOMAIN, 1)])
    onnx.checker.check_model(out)
    return out
