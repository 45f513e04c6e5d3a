"""Pipeline configuration: a small TOML file, or one of the presets.

::

    name = "hybrid-learned"

    [chunking]              # whole | fixed | sentence | recursive
    strategy = "whole"

    [retriever]             # bm25 | dense | hybrid | langchain | llamaindex | haystack | module:factory
    type = "hybrid"         # a dense stage takes backend = "onnx-int8" (default) | "onnx" | "torch"
    method = "rrf"          # rrf | weighted
    components = [{ type = "bm25" }, { type = "dense", store = "exact" }]

    [rerank]                # learned | bi-encoder | cross-encoder | llm
    type = "learned"        # the model ragaudit fit-fusion wrote, over a bm25 + dense hybrid
    model = "fusion.json"
    top_n = 100

    [rewrite]               # synonyms | rm3 | llm
    type = "rm3"

Every key is checked; an unknown one is an error naming the table, the key and the valid keys.
A retriever of your own (a framework's, ``target = "my_app.rag:retriever"``, or ``type = "module:factory"``)
is :mod:`ragaudit.pipelines.external`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragaudit.data.toml_files import read_toml
from ragaudit.errors import InputError, Problem, ValidationError
from ragaudit.pipelines.external import FRAMEWORK_KEYS, is_external, is_framework
from ragaudit.retrieval.adapters import DEFAULT_TENANT_KEY
from ragaudit.retrieval.embedding_backends import BACKENDS

CHUNKING_STRATEGIES = ("whole", "fixed", "sentence", "recursive")
RETRIEVER_KEYS: dict[str, set[str]] = {
    "bm25": {"k1", "b", "delta", "method", "stemmer", "stopwords"},
    "dense": {
        "model",
        "backend",
        "store",
        "qdrant_url",
        "qdrant_api_key_env",
        "qdrant_path",
        "collection",
        "cache_dir",
        "hybrid_sparse",
        "shards",
        "replication_factor",
        "write_consistency_factor",
        "on_disk",
    },
    "hybrid": {"method", "weights", "rrf_k", "normalize", "depth", "components"},
}
RERANK_KEYS: dict[str, set[str]] = {
    "learned": {"top_n", "model"},
    "bi-encoder": {"top_n", "model", "backend"},
    "cross-encoder": {"top_n", "model"},
    "llm": {"top_n", "model", "base_url", "api_key_env", "prompt"},
}
REWRITE_KEYS: dict[str, set[str]] = {
    "synonyms": {"mapping", "mapping_file"},
    "rm3": {"fb_docs", "fb_terms", "original_weight"},
    "llm": {"model", "base_url", "api_key_env", "prompt"},
}


_Check = tuple[str, Callable[[Any], bool], str]
"""What a parameter must be (in words), the test, and an example value in TOML."""


def _number(
    low: float = -math.inf, high: float = math.inf, *, open_low: bool = False
) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return False
        return (low < v if open_low else low <= v) and v <= high

    return check


def _positive_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _string(v: Any) -> bool:
    return isinstance(v, str)


def _one_of(*choices: str) -> _Check:
    return (f"one of {', '.join(repr(c) for c in choices)}", lambda v: v in choices, json.dumps(choices[0]))


PARAM_CHECKS: dict[str, _Check] = {
    "k1": ("a number >= 0", _number(0.0), "1.2"),
    "b": ("a number in [0, 1]", _number(0.0, 1.0), "0.75"),
    "delta": ("a number", _number(), "0.5"),
    "stemmer": ("a language name string", _string, '"english"'),
    "stopwords": ("a stopword list name string", _string, '"en"'),
    "model": ("a string", _string, '"/path/to/model"'),
    "backend": _one_of(*BACKENDS),
    "store": _one_of("exact", "qdrant"),
    "qdrant_url": ("a string", _string, '"http://localhost:6333"'),
    "qdrant_api_key_env": ("an environment variable name", _string, '"QDRANT_API_KEY"'),
    "qdrant_path": ("a string", _string, '"qdrant-data"'),
    "collection": ("a string", _string, '"docs"'),
    "cache_dir": ("a path string or a boolean", lambda v: isinstance(v, (str, bool)), '".ragaudit/cache"'),
    "hybrid_sparse": ("a boolean", lambda v: isinstance(v, bool), "true"),
    "shards": ("a positive integer", _positive_int, "6"),
    "replication_factor": ("a positive integer", _positive_int, "2"),
    "write_consistency_factor": ("a positive integer", _positive_int, "1"),
    "on_disk": ("a boolean", lambda v: isinstance(v, bool), "true"),
    "weights": (
        "a list of numbers",
        lambda v: isinstance(v, list) and all(_number()(w) for w in v),
        "[0.5, 0.5]",
    ),
    "rrf_k": ("a number > 0", _number(0.0, open_low=True), "60"),
    "normalize": _one_of("minmax", "zscore"),
    "depth": ("a positive integer", _positive_int, "100"),
    "top_n": ("a positive integer", _positive_int, "30"),
    "base_url": ("a URL string", _string, '"http://localhost:8000/v1"'),
    "api_key_env": ("an environment variable name", _string, '"OPENAI_API_KEY"'),
    "prompt": ("a string", _string, '"..."'),
    "mapping": ("a table of term = expansion(s)", lambda v: isinstance(v, dict), '{ pro = "professional" }'),
    "mapping_file": ("a path string", _string, '"synonyms.toml"'),
    "fb_docs": ("a positive integer", _positive_int, "10"),
    "fb_terms": ("a positive integer", _positive_int, "10"),
    "original_weight": ("a number in [0, 1]", _number(0.0, 1.0), "0.5"),
    "target": (
        "a module:attribute string",
        lambda v: isinstance(v, str) and ":" in v.strip(),
        '"my_app.rag:retriever"',
    ),
    "tenant_key": ("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip()), '"tenant_id"'),
}
"""What each stage parameter must be; checked when the file is read, so a bad value never reaches a build."""
METHOD_CHECKS: dict[str, _Check] = {
    "bm25": _one_of("robertson", "lucene", "atire", "bm25l", "bm25+"),
    "hybrid": _one_of("rrf", "weighted"),
}


def key_line(text: str, table: str, key: str) -> int | None:
    """The 1-based line of ``key = ...`` inside ``[table]`` of TOML ``text``; else the line of the
    ``[table]`` header; ``None`` when neither is written that way (an inline or dotted table). The
    table ``""`` is the top level, before the first header."""
    header = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
    assignment = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    current: str | None = ""
    table_line = None
    for number, line in enumerate(text.splitlines(), 1):
        found = header.match(line)
        if found:
            current = found.group(1)
            if current == table:
                table_line = number
        elif current == table and assignment.match(line):
            return number
    return table_line


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def thawed(value: Any) -> Any:
    """A frozen parameter value as plain dicts and lists again."""
    if isinstance(value, Mapping):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return value


@dataclass(frozen=True)
class ChunkingConfig:
    strategy: str = "whole"
    size: int = 256
    overlap: int = 0


@dataclass(frozen=True)
class StageConfig:
    """A retriever, rerank or rewrite stage: its type and its parameters."""

    type: str
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    components: tuple[StageConfig, ...] = ()
    origin: tuple[str, int | None] = field(default=("<config>", None), compare=False, repr=False)
    """The file and line the stage was written at (its ``target`` or ``type`` key), for errors raised
    when it is built; not part of the configuration (nor of its hash)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, **thawed(self.params)}
        if self.components:
            out["components"] = [c.to_dict() for c in self.components]
        return out


@dataclass(frozen=True)
class PipelineConfig:
    name: str
    retriever: StageConfig
    chunking: ChunkingConfig = ChunkingConfig()
    rerank: StageConfig | None = None
    rewrite: StageConfig | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if not is_external(self.retriever.type):  # a retriever of your own chunks its documents itself
            c = self.chunking
            out["chunking"] = {"strategy": c.strategy, "size": c.size, "overlap": c.overlap}
        out["retriever"] = self.retriever.to_dict()
        if self.rerank is not None:
            out["rerank"] = self.rerank.to_dict()
        if self.rewrite is not None:
            out["rewrite"] = self.rewrite.to_dict()
        return out

    def sha256(self) -> str:
        """Hash of the configuration (name excluded), for provenance and comparisons."""
        body = {k: v for k, v in self.to_dict().items() if k != "name"}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


class _Parser:
    def __init__(self, path: str, text: str | None = None) -> None:
        self.path = path
        self.text = text
        self.problems: list[Problem] = []

    def fail(self, where: str, message: str, fix: str, line: int | None = None) -> None:
        self.problems.append(Problem(self.path, line, f"[{where}] {message}", fix))

    def line_of(self, table: str, key: str) -> int | None:
        """The line of ``key`` in ``[table]`` of the file (else of the table's header), when known."""
        return key_line(self.text, table, key) if self.text is not None else None

    def stage_line(self, where: str, key: str) -> int | None:
        """The line of ``key`` in the stage written at ``where`` (``rerank``, ``retriever``, or a hybrid's
        ``retriever.components[i]``, an inline table: the line of its ``components`` key)."""
        table, _, component = where.partition(".components")
        return self.line_of(table, "components" if component else key)

    def external(self, raw: dict[str, Any]) -> StageConfig:
        """A first stage of your own: a framework's retriever (``target``, ``tenant_key``) or a
        ``module:factory`` whose other keys are its keyword arguments."""
        kind = str(raw["type"])
        params = {k: v for k, v in raw.items() if k != "type"}
        key = "target" if is_framework(kind) else "type"
        origin = (self.path, self.line_of("retriever", key))
        if is_framework(kind):
            unknown = sorted(set(params) - FRAMEWORK_KEYS)
            if unknown:
                self.fail(
                    "retriever",
                    f"unknown key(s) {', '.join(unknown)} for type {kind!r}",
                    f"valid keys: {', '.join(sorted(FRAMEWORK_KEYS))}",
                    self.line_of("retriever", unknown[0]),
                )
            if "target" not in params:
                self.fail(
                    "retriever",
                    f"type {kind!r} needs target, the object to evaluate",
                    'e.g. target = "my_app.rag:retriever" (module:attribute or ./file.py:attribute)',
                    origin[1],
                )
            for name in sorted(FRAMEWORK_KEYS & set(params)):
                what, ok, example = PARAM_CHECKS[name]
                if not ok(params[name]):
                    self.fail(
                        "retriever",
                        f"{name} must be {what} (got {params[name]!r:.60})",
                        f"e.g. {name} = {example}",
                        self.line_of("retriever", name),
                    )
            params.setdefault("tenant_key", DEFAULT_TENANT_KEY)  # recorded: the hash says which key
        return StageConfig(kind, _frozen(params), (), origin)

    def stage(self, where: str, raw: Any, kinds: dict[str, set[str]]) -> StageConfig | None:
        if not isinstance(raw, dict):
            self.fail(
                where, "must be a table", f"write [{where}] with a 'type' key", self.stage_line(where, "type")
            )
            return None
        kind = raw.get("type")
        if where == "retriever" and isinstance(kind, str) and is_external(kind):
            return self.external(raw)
        if where in ("rerank", "rewrite") and isinstance(kind, str) and kind not in kinds:
            from ragaudit.pipelines.stages import is_stage

            if is_stage(
                "rerank" if where == "rerank" else "rewrite", kind
            ):  # a user's stage: its factory's signature checks the keys
                kinds = {**kinds, kind: set(raw) - {"type"}}
        if not isinstance(kind, str) or kind not in kinds:
            more = ", langchain, llamaindex, haystack, or module:factory" if where == "retriever" else ""
            if where.startswith("retriever.components") and isinstance(kind, str) and is_external(kind):
                more = " (a retriever of your own is a first stage, not a hybrid component)"
            self.fail(
                where,
                f"unknown or missing type {kind!r:.60}",
                f"use one of: {', '.join(kinds)}{more}",
                self.stage_line(where, "type"),
            )
            return None
        unknown = sorted(set(raw) - kinds[kind] - {"type"})
        if unknown:
            valid = ", ".join(sorted(kinds[kind])) or "none"
            self.fail(
                where,
                f"unknown key(s) {', '.join(unknown)} for type {kind!r}",
                f"valid keys: {valid}",
                self.stage_line(where, unknown[0]),
            )
        for key, value in raw.items():
            check = METHOD_CHECKS.get(kind) if key == "method" else PARAM_CHECKS.get(key)
            if check is not None and key in kinds[kind] and not check[1](value):
                self.fail(
                    where,
                    f"{key} must be {check[0]} (got {value!r:.60})",
                    f"e.g. {key} = {check[2]}",
                    self.stage_line(where, key),
                )
        components: list[StageConfig] = []
        if kind == "hybrid":
            raw_components = raw.get("components")
            items = raw_components if isinstance(raw_components, list) else []
            if len(items) < 2:
                self.fail(
                    where,
                    "a hybrid retriever needs at least two components",
                    'components = [{ type = "bm25" }, { type = "dense" }]',
                    self.stage_line(where, "components"),
                )
            leaf_kinds = {k: v for k, v in RETRIEVER_KEYS.items() if k != "hybrid"}
            for i, comp in enumerate(items):
                parsed = self.stage(f"{where}.components[{i}]", comp, leaf_kinds)
                if parsed is not None:
                    components.append(parsed)
        params = {k: v for k, v in raw.items() if k not in ("type", "components")}
        return StageConfig(kind, _frozen(params), tuple(components))

    def chunking(self, raw: Any) -> ChunkingConfig:
        if raw is None:
            return ChunkingConfig()
        if not isinstance(raw, dict):
            self.fail(
                "chunking",
                "must be a table",
                "write [chunking] with strategy, size, overlap",
                self.line_of("chunking", "strategy"),
            )
            return ChunkingConfig()
        unknown = sorted(set(raw) - {"strategy", "size", "overlap"})
        if unknown:
            self.fail(
                "chunking",
                f"unknown key(s) {', '.join(unknown)}",
                "valid keys: strategy, size, overlap",
                self.line_of("chunking", unknown[0]),
            )
        strategy = raw.get("strategy", "whole")
        size, overlap = raw.get("size", 256), raw.get("overlap", 0)
        if strategy not in CHUNKING_STRATEGIES:
            self.fail(
                "chunking",
                f"unknown strategy {strategy!r}",
                f"use one of: {', '.join(CHUNKING_STRATEGIES)}",
                self.line_of("chunking", "strategy"),
            )
            strategy = "whole"
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            self.fail(
                "chunking",
                f"size must be a positive integer (got {size!r})",
                "e.g. size = 256",
                self.line_of("chunking", "size"),
            )
            size = 256
        if not isinstance(overlap, int) or isinstance(overlap, bool) or not 0 <= overlap < size:
            self.fail(
                "chunking",
                f"overlap must be an integer in [0, size) (got {overlap!r})",
                "e.g. overlap = 32",
                self.line_of("chunking", "overlap"),
            )
            overlap = 0
        return ChunkingConfig(strategy, size, overlap)


def parse_pipeline(
    raw: Mapping[str, Any], path: str = "<config>", default_name: str = "pipeline", text: str | None = None
) -> PipelineConfig:
    """Build a :class:`PipelineConfig` from a parsed TOML mapping (``text``: the file's text, for line
    numbers); raise ValidationError listing every problem."""
    parser = _Parser(path, text)
    unknown = sorted(set(raw) - {"name", "chunking", "retriever", "rerank", "rewrite"})
    if unknown:
        parser.fail(
            "top level",
            f"unknown key(s) {', '.join(unknown)}",
            "valid: name, chunking, retriever, rerank, rewrite",
            parser.line_of("", unknown[0]),
        )
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not name:
        parser.fail(
            "top level", "name must be a non-empty string", 'name = "my-pipeline"', parser.line_of("", "name")
        )
        name = default_name
    retriever = parser.stage("retriever", raw.get("retriever"), RETRIEVER_KEYS)
    chunking = parser.chunking(raw.get("chunking"))
    if retriever is not None and is_external(retriever.type) and "chunking" in raw:
        parser.fail(
            "chunking",
            f"a {retriever.type!r} retriever keeps its own index: ragaudit chunks nothing for it",
            "remove [chunking] (your application chunks its documents itself)",
            parser.line_of("chunking", "strategy"),
        )
    rerank = parser.stage("rerank", raw["rerank"], RERANK_KEYS) if "rerank" in raw else None
    rewrite = parser.stage("rewrite", raw["rewrite"], REWRITE_KEYS) if "rewrite" in raw else None
    if parser.problems or retriever is None:
        raise ValidationError(
            parser.problems or [Problem(path, None, "[retriever] missing", "add a [retriever] table")]
        )
    return PipelineConfig(name, retriever, chunking, rerank, rewrite)


def load_pipeline_file(path: str | Path) -> PipelineConfig:
    p = Path(path)
    raw, text = read_toml(p, what="pipeline config", fix="fix the syntax (see docs/pipelines.md)")
    return parse_pipeline(raw, str(p), p.stem, text)


PRESETS: dict[str, dict[str, Any]] = {
    "bm25": {"retriever": {"type": "bm25"}},
    "dense": {"retriever": {"type": "dense"}},
    "hybrid": {
        "retriever": {"type": "hybrid", "method": "rrf", "components": [{"type": "bm25"}, {"type": "dense"}]}
    },
}
LEARNED_PRESET = "hybrid-rerank"
"""``hybrid-rerank:MODEL.json``: the ``hybrid`` preset reranked by the learned fusion model that
``ragaudit fit-fusion`` wrote. Without a model there is nothing trained to rerank with, so the bare
name is refused rather than run as a reranker that is not one."""
LEARNED_TOP_N = 100
FIT_FUSION_FIX = (
    "fit one on your golden set: ragaudit fit-fusion --dataset D --corpus C --out fusion.json, "
    f"then --pipeline {LEARNED_PRESET}:fusion.json"
)


def preset(name: str) -> PipelineConfig:
    """One of the named presets: ``bm25``, ``dense``, ``hybrid``, or ``hybrid-rerank:MODEL.json``."""
    base, colon, model = name.partition(":")
    if base == LEARNED_PRESET:
        if not colon or not model:
            raise InputError(
                "--pipeline",
                None,
                f"{LEARNED_PRESET} reranks with a fitted fusion model and none was given",
                FIT_FUSION_FIX,
            )
        learned = {"type": "learned", "model": model, "top_n": LEARNED_TOP_N}
        raw = {"name": LEARNED_PRESET, **PRESETS["hybrid"], "rerank": learned}
        return parse_pipeline(raw, f"preset:{LEARNED_PRESET}", LEARNED_PRESET)
    if name not in PRESETS:
        raise InputError(
            "--pipeline",
            None,
            f"unknown preset {name!r}",
            f"use one of: {', '.join(PRESETS)}, {LEARNED_PRESET}:MODEL.json, or --config FILE.toml",
        )
    return parse_pipeline({"name": name, **PRESETS[name]}, f"preset:{name}", name)


def resolve_pipeline(spec: str) -> PipelineConfig:
    """A preset name, or a path to a TOML file."""
    if spec.endswith(".json") and Path(spec).is_file():
        raise InputError(
            spec,
            None,
            "a pipeline is a preset or a TOML file, not JSON",
            f"for a fusion model from ragaudit fit-fusion use --pipeline {LEARNED_PRESET}:{spec}",
        )
    return load_pipeline_file(spec) if spec.endswith(".toml") or Path(spec).is_file() else preset(spec)
