"""Child process of ``benchmarks/models.py``: build ONE small transformers model and measure it.

Run as ``python benchmarks/_model_child.py --spec NAME [--outputs FILE] [--calls N] [--no-explain]``.
It imports whatever ``transformers`` comes first on ``sys.path`` (the parent puts a mended copy first on
``PYTHONPATH`` for the mended side), builds the model from a small config with random weights
(``torch.manual_seed(0)``, no hub access), and then, under ``torch.no_grad()``:

1. ``eager``: calls the model ``--calls`` times, recording every message it emits.
2. ``compiled``: ``torch.compile(model, backend=<counting backend>)`` called ``--calls`` times. The backend
   records every FX ``GraphModule`` Dynamo hands it, with its ``compile_subgraph_reason`` (the break reason
   and user stack, the same objects ``torch._dynamo.explain`` reports). ``graphs`` is the number of graphs
   recorded during the FIRST call (the paper's metric, breaks = graphs - 1); graphs compiled on later calls
   are recompilations. Each graph also carries its Dynamo compile id (``frame_id/frame_compile_id``;
   ``graphs_from_recompiles`` counts first-call graphs whose frame_compile_id > 0, i.e. graphs that a
   recompilation inside the first call produced) and the frame it was traced from.
3. ``explain``: ``torch._dynamo.explain(model)(**inputs)`` after ``torch._dynamo.reset()``; its graph count,
   break count and break reasons (reason text, user frames file:line:function and source line).

Recompiles are counted from Dynamo's ``recompiles`` artifact log (logger
``torch._dynamo.guards.__recompiles``, enabled with ``torch._logging.set_logs(recompiles=True)``): one
record per "Recompiling function ..." event, i.e. one per guard failure that led to a new cache entry.
``torch._dynamo.utils.counters`` (``stats``, ``frames``, ``graph_break``) are reported as well.

Messages: ``logging`` records of the ``transformers`` logger hierarchy (level, logger name, getMessage()),
``warnings.warn`` calls (with ``simplefilter("always")``, so every emission is seen; category, message,
file:line) and ``print`` output (one event per line), interleaved in emission order, per phase and call.
``warning_once`` / ``info_once`` caches are cleared between phases so that each phase starts with the
once-only state of a fresh process.

Outputs: every tensor in the model output (``ModelOutput`` fields, caches flattened through
``to_legacy_cache()``) is saved with ``torch.save`` to ``--outputs`` as
``{"eager": {name: tensor}, "compiled": {name: tensor}}`` (first call of each phase) and summarised (shape,
dtype, sha256 of the raw bytes) in the JSON.

The child prints exactly one JSON object on stdout (its last line); model ``print`` output is captured.
This module must stay importable without torch: ``benchmarks/models.py`` imports the spec table from it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import linecache
import logging
import os
import re
import sys
import time
import traceback
import warnings
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# --------------------------------------------------------------------------------------------------
# Spec table (pure data; no torch import at module level)
# --------------------------------------------------------------------------------------------------

#: Small overrides tried for ANY family (the generic fallback). Only keys the family's default config
#: already has (attribute or attribute_map alias) are passed, so unknown names are never invented.
GENERIC_OVERRIDES: dict[str, Any] = {
    "hidden_size": 64,
    "d_model": 64,
    "n_embd": 64,
    "num_hidden_layers": 2,
    "num_layers": 2,
    "n_layer": 2,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "num_decoder_layers": 2,
    "num_attention_heads": 2,
    "num_heads": 2,
    "n_head": 2,
    "num_key_value_heads": 2,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "intermediate_size": 128,
    "d_ff": 128,
    "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128,
    "vocab_size": 128,
    "max_position_embeddings": 64,
    "n_positions": 64,
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "decoder_start_token_id": 0,
}

#: Per-family overrides. Keys:
#:   model_type  transformers model_type for AutoConfig.for_model (default: the family name)
#:   config      config overrides applied on top of the (filtered) generic ones; passed as given
#:   inputs      "auto" (input_ids [+ decoder_input_ids if encoder-decoder]), "whisper", "grounding_dino"
#:   seq_len     input length (default 16); batch (default 2); dec_len (default 8)
#:   auto_class  transformers Auto class name (default AutoModel, the generic fallback). The required
#:               families use the task head users call (ForConditionalGeneration, ForCausalLM, ...):
#:               the head's forward is the root frame, which changes the graph count (t5 and bart:
#:               4 graphs with the head, 3 with the bare AutoModel).
#:   extra_files other transformers files (relative to the package root) the family runs, to mend too
FAMILIES: dict[str, dict[str, Any]] = {
    "t5": {
        "config": {
            "d_model": 64, "d_kv": 32, "d_ff": 128, "num_layers": 2, "num_decoder_layers": 2,
            "num_heads": 2, "vocab_size": 128, "relative_attention_num_buckets": 8,
            "relative_attention_max_distance": 16, "decoder_start_token_id": 0, "pad_token_id": 0,
            "eos_token_id": 1,
        },
        "auto_class": "AutoModelForSeq2SeqLM",
    },
    "bart": {
        "config": {
            "d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2,
            "decoder_attention_heads": 2, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
            "vocab_size": 128, "max_position_embeddings": 64, "pad_token_id": 1, "bos_token_id": 0,
            "eos_token_id": 2, "decoder_start_token_id": 2, "forced_eos_token_id": 2,
        },
        "auto_class": "AutoModelForSeq2SeqLM",
    },
    "whisper": {
        "config": {
            "d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2,
            "decoder_attention_heads": 2, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
            "vocab_size": 128, "num_mel_bins": 16, "max_source_positions": 16,
            "max_target_positions": 32, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
            "decoder_start_token_id": 3, "suppress_tokens": None, "begin_suppress_tokens": None,
        },
        "inputs": "whisper",
        "auto_class": "AutoModelForSpeechSeq2Seq",
    },
    "phi3": {
        # LongRoPE: head_dim 32 -> 16 factors; original_max_position_embeddings (16) BELOW the input
        # length (24), so the dynamic `seq_len > original_max_position_embeddings` branch is live.
        "config": {
            "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 128,
            "max_position_embeddings": 64, "original_max_position_embeddings": 16,
            "rope_scaling": {
                "type": "longrope",
                "short_factor": [1.0 + 0.05 * i for i in range(16)],
                "long_factor": [1.0 + 0.25 * i for i in range(16)],
            },
            "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
        },
        "seq_len": 24,
        "auto_class": "AutoModelForCausalLM",
    },
    "longformer": {
        "config": {
            "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
            "intermediate_size": 128, "vocab_size": 128, "attention_window": 8,
            "max_position_embeddings": 64, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
        },
        "seq_len": 20,
        "auto_class": "AutoModelForMaskedLM",
    },
    "grounding-dino": {
        # Tiny Swin backbone (transformers' own, no timm, no weights) + tiny BERT text encoder.
        "config": {
            "use_timm_backbone": False,
            "use_pretrained_backbone": False,
            "backbone_config": {
                "model_type": "swin", "image_size": 64, "patch_size": 4, "embed_dim": 16,
                "depths": [1, 1, 1, 1], "num_heads": [1, 1, 2, 2], "window_size": 4,
                "out_indices": [2, 3, 4],
            },
            "text_config": {
                "model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
                "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 128,
                "max_position_embeddings": 64,
            },
            "d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2,
            "decoder_attention_heads": 2, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
            "num_queries": 16, "num_feature_levels": 4, "encoder_n_points": 2, "decoder_n_points": 2,
            "max_text_len": 32, "disable_custom_kernels": True,
        },
        "generic": False,
        "inputs": "grounding_dino",
        "auto_class": "AutoModelForZeroShotObjectDetection",
        "seq_len": 8,
        "batch": 1,
        "extra_files": ["models/swin/modeling_swin.py", "models/bert/modeling_bert.py"],
    },
}

# ---- more families with graph breaks on torch 2.13 (tiny configs on top of GENERIC_OVERRIDES) ----
_S2S = "AutoModelForSeq2SeqLM"
FAMILIES.update({
    # BART-style encoder layers: fp16 overflow clamp `if hidden_states.dtype == torch.float16 and
    # (torch.isinf(...).any() or torch.isnan(...).any())`, head_mask/warning paths in forward.
    "mbart": {"auto_class": _S2S},
    "pegasus": {"auto_class": _S2S},
    "marian": {"auto_class": _S2S, "config": {"decoder_vocab_size": 128}},
    "blenderbot": {"auto_class": _S2S},
    "blenderbot-small": {"auto_class": _S2S},
    "plbart": {"auto_class": _S2S},
    "m2m_100": {"auto_class": _S2S},
    "led": {"auto_class": _S2S, "config": {"attention_window": 8, "max_encoder_position_embeddings": 64,
                                           "max_decoder_position_embeddings": 64}},
    "bigbird_pegasus": {"auto_class": _S2S, "config": {"attention_type": "original_full"}},
    "prophetnet": {"auto_class": _S2S, "config": {"num_encoder_layers": 2, "num_decoder_layers": 2,
                                                  "num_encoder_attention_heads": 2,
                                                  "num_decoder_attention_heads": 2,
                                                  "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
                                                  "ngram": 2, "num_buckets": 8,
                                                  "relative_max_distance": 16}},
    # T5 descendants (fp16 clamp in the layer, warning_once on the cache path)
    "mt5": {"auto_class": _S2S, "config": {"d_kv": 32, "relative_attention_num_buckets": 8,
                                           "relative_attention_max_distance": 16}},
    "umt5": {"auto_class": _S2S, "config": {"d_kv": 32, "relative_attention_num_buckets": 8,
                                            "relative_attention_max_distance": 16}},
    "longt5": {"auto_class": _S2S, "config": {"d_kv": 32, "relative_attention_num_buckets": 8,
                                              "relative_attention_max_distance": 16,
                                              "local_radius": 4}},
    "switch_transformers": {"auto_class": _S2S, "config": {"d_kv": 32, "num_experts": 2,
                                                           "relative_attention_num_buckets": 8,
                                                           "relative_attention_max_distance": 16,
                                                           "num_sparse_encoder_layers": 1,
                                                           "num_sparse_decoder_layers": 1}},
    # ---- popular models expected to compile without breaks (must stay unchanged) ----
    "bert": {"auto_class": "AutoModelForMaskedLM"},
    "roberta": {"auto_class": "AutoModelForMaskedLM", "config": {"pad_token_id": 1}},
    "distilbert": {"auto_class": "AutoModelForMaskedLM",
                   "config": {"dim": 64, "hidden_dim": 128, "n_layers": 2, "n_heads": 2}},
    "gpt2": {"auto_class": "AutoModelForCausalLM", "config": {"use_cache": False}},
    "llama": {"auto_class": "AutoModelForCausalLM", "config": {"use_cache": False}},
    "mistral": {"auto_class": "AutoModelForCausalLM", "config": {"use_cache": False}},
    "qwen2": {"auto_class": "AutoModelForCausalLM", "config": {"use_cache": False}},
    "vit": {"inputs": "vision", "config": {"image_size": 32, "patch_size": 8}},
})

# ---- mixture-of-experts families: 4 experts, top-2 (top-1 for switch), tiny configs ----
_CLM_MOE = {"auto_class": "AutoModelForCausalLM"}
FAMILIES.update({
    "mixtral": {**_CLM_MOE, "config": {"num_local_experts": 4, "num_experts_per_tok": 2, "use_cache": False}},
    "olmoe": {**_CLM_MOE, "config": {"num_experts": 4, "num_experts_per_tok": 2, "use_cache": False}},
    "qwen2_moe": {**_CLM_MOE, "config": {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                                          "shared_expert_intermediate_size": 32, "use_cache": False}},
    "qwen3_moe": {**_CLM_MOE, "config": {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                                          "head_dim": 32, "use_cache": False}},
    "phimoe": {**_CLM_MOE, "config": {"num_local_experts": 4, "num_experts_per_tok": 2, "use_cache": False}},
    "jamba": {**_CLM_MOE, "config": {"num_experts": 4, "num_experts_per_tok": 2, "expert_layer_period": 1,
                                      "expert_layer_offset": 0, "attn_layer_period": 2, "attn_layer_offset": 1,
                                      "use_mamba_kernels": False, "mamba_d_state": 8, "mamba_d_conv": 4,
                                      "mamba_expand": 2, "mamba_dt_rank": 8, "use_cache": False}},
    "deepseek_v3": {**_CLM_MOE, "config": {"n_routed_experts": 4, "num_experts_per_tok": 2, "n_group": 1,
                                            "topk_group": 1, "n_shared_experts": 1, "moe_intermediate_size": 32,
                                            "first_k_dense_replace": 0, "kv_lora_rank": 16, "q_lora_rank": 32,
                                            "qk_rope_head_dim": 16, "qk_nope_head_dim": 16, "v_head_dim": 16,
                                            "use_cache": False}},
    # sorted, grouped dispatch (`inputs.split(expert_size)`): [Route] GM605
    "granitemoe": {**_CLM_MOE, "config": {"num_local_experts": 4, "num_experts_per_tok": 2, "use_cache": False}},
    "jetmoe": {**_CLM_MOE, "config": {"num_local_experts": 4, "num_experts_per_tok": 2, "kv_channels": 16,
                                       "num_attention_heads": 4,  # = num_key_value_heads x top_k (its own rule)
                                       "use_cache": False}},
    "dbrx": {**_CLM_MOE, "generic": False,
             "config": {"d_model": 64, "n_heads": 2, "n_layers": 2, "max_seq_len": 64, "vocab_size": 128,
                        "attn_config": {"kv_n_heads": 2},
                        "ffn_config": {"ffn_hidden_size": 64, "moe_num_experts": 4, "moe_top_k": 2},
                        "use_cache": False}},
})

#: Required benchmark specs, in table order.
DEFAULT_SPECS = [
    "t5", "t5-fp16", "whisper", "whisper-fp16", "bart", "bart-fp16", "phi3", "longformer",
    "grounding-dino",
]

#: More families with graph breaks (fp16 rows where the family has an fp16-only path).
BREAK_SPECS = [
    "mbart", "mbart-fp16", "pegasus", "pegasus-fp16", "marian", "marian-fp16", "blenderbot",
    "blenderbot-fp16", "plbart", "m2m_100", "m2m_100-fp16", "led", "bigbird_pegasus",
    "mt5", "mt5-fp16", "umt5", "longt5", "switch_transformers",
]

#: Mixture-of-experts families (expert routing: [Route], GM601), with switch_transformers above.
MOE_SPECS = ["mixtral", "mixtral-fp16", "olmoe", "olmoe-fp16", "qwen2_moe", "qwen3_moe", "phimoe", "jamba",
             "deepseek_v3", "dbrx", "granitemoe", "jetmoe"]

#: Popular models without graph breaks: a mend must leave them unchanged (no fix, or equal outputs).
CLEAN_SPECS = ["bert", "roberta", "distilbert", "gpt2", "llama", "mistral", "qwen2", "vit"]

#: Named spec sets accepted by ``--models`` (alone or mixed with names).
SPEC_SETS = {
    "default": DEFAULT_SPECS,
    "breaks": DEFAULT_SPECS + BREAK_SPECS,
    "clean": CLEAN_SPECS,
    "all": DEFAULT_SPECS + BREAK_SPECS + CLEAN_SPECS,
    "moe": MOE_SPECS + ["switch_transformers"],
}


def expand_specs(text: str) -> list[str]:
    """``"all"`` / ``"breaks,bert"`` / ``"t5,opt-fp16"`` -> list of specs (sets expanded, order kept,
    duplicates dropped). Any other name is a transformers model_type (generic builder)."""
    out: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        for spec in SPEC_SETS.get(part, [part]):
            if spec not in out:
                out.append(spec)
    return out

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def parse_spec(spec: str) -> tuple[str, str]:
    """``"bart-fp16"`` -> ``("bart", "fp16")``; ``"t5"`` -> ``("t5", "fp32")``."""
    for suffix in DTYPES:
        if spec.endswith("-" + suffix):
            return spec[: -len(suffix) - 1], suffix
    return spec, "fp32"


def family_entry(family: str) -> dict[str, Any]:
    return FAMILIES.get(family, {})


def family_module_dir(family: str) -> str:
    """Directory name under ``transformers/models`` for a family (model_type)."""
    model_type = family_entry(family).get("model_type", family)
    try:  # exact mapping when transformers is importable cheaply enough
        from transformers.models.auto.configuration_auto import model_type_to_module_name

        return model_type_to_module_name(model_type)
    except Exception:  # pragma: no cover - fallback without transformers
        return model_type.replace("-", "_")


# --------------------------------------------------------------------------------------------------
# Message capture
# --------------------------------------------------------------------------------------------------


def _short_path(path: str) -> str:
    """Path relative to the transformers / torch package root when inside one (mended copies live
    in a temp dir, so absolute paths differ between sides); an installed package's relative to
    site-packages, so that a package with a `torch/` folder of its own keeps its name
    (`torchstain/torch/normalizers/macenko.py`, realcode round 32)."""
    norm = path.replace(os.sep, "/")
    idx = norm.rfind("/site-packages/")
    if idx >= 0:
        return norm[idx + len("/site-packages/"):]
    for marker in ("/transformers/", "/torch/"):
        idx = norm.rfind(marker)
        if idx >= 0:
            return norm[idx + 1:]
    return norm


class _Capture(logging.Handler):
    """Collects transformers log records, warnings and print lines into ``self.events``."""

    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.events: list[dict[str, Any]] | None = None
        self._line = ""

    # logging.Handler
    def emit(self, record: logging.LogRecord) -> None:  # noqa: D401
        if self.events is None:
            return
        try:
            msg = record.getMessage()
        except Exception as exc:  # pragma: no cover
            msg = f"<getMessage failed: {exc!r}>"
        self.events.append(
            {"kind": "log", "level": record.levelname, "name": record.name, "message": msg,
             "where": f"{_short_path(record.pathname)}:{record.lineno}"}
        )

    # warnings.showwarning replacement
    def showwarning(self, message, category, filename, lineno, file=None, line=None) -> None:
        if self.events is None:
            return
        self.events.append(
            {"kind": "warning", "level": "WARNING", "name": category.__name__, "message": str(message),
             "where": f"{_short_path(filename)}:{lineno}"}
        )

    # sys.stdout replacement
    def write(self, text: str) -> int:
        self._line += text
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            if self.events is not None:
                self.events.append({"kind": "print", "level": "", "name": "stdout", "message": line,
                                    "where": ""})
        return len(text)

    def flush(self) -> None:
        pass

    @contextlib.contextmanager
    def phase(self, events: list[dict[str, Any]]):
        self.events = events
        old_stdout = sys.stdout
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = self.showwarning  # type: ignore[assignment]
            sys.stdout = self  # type: ignore[assignment]
            try:
                yield
            finally:
                if self._line:
                    self.write("\n")
                sys.stdout = old_stdout
                self.events = None


def _clear_once_caches() -> None:
    """Reset transformers' ``warning_once``/``info_once`` (lru_cache on logging.Logger methods)."""
    for attr in ("warning_once", "info_once"):
        fn = getattr(logging.Logger, attr, None)
        clear = getattr(fn, "cache_clear", None)
        if callable(clear):
            clear()


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.records.append(record.getMessage())
        except Exception as exc:  # pragma: no cover
            self.records.append(f"<getMessage failed: {exc!r}>")


_LOG_AT = re.compile(r"in user code at (?P<file>.+?):(?P<line>\d+)")
_LOG_SKIPPED = re.compile(r"frame skipped: (?P<fn>\S+) \((?P<file>.+?) line (?P<line>\d+)\)")
_LOG_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\s*$')


def log_every_break_stack() -> None:
    """Have Dynamo's graph_breaks log give every break its user stack. It gives it once per kind
    and innermost frame, and a second break at the same line of Dynamo's own code came as "user
    stack suppressed due to duplicate graph break": deepctr-torch's `DataLoader(...)` after its
    `TensorDataset(...)`, both breaking in Dynamo's constructor polyfill (realcode round 33), could
    not be placed in the package, and its GM403 was scored a false alarm. Only the log changes."""
    from torch._dynamo.utils import graph_break_dup_warning_checker

    graph_break_dup_warning_checker.add = lambda key: True  # type: ignore[method-assign]


def _add_compiled_frame(stack: list[dict[str, Any]]) -> None:
    """Put the frame Dynamo was compiling into a break's user stack where the log left it out.
    A subclass `__init__` Dynamo compiles on its own after its caller broke in it is missing from
    the stack of its own break in the base class's `__init__` (the stack goes caller -> base
    `__init__`), so a `warnings.warn` after its `super().__init__()`, which then ran eagerly, was
    scored a false alarm (higher's DifferentiableRprop, realcode round 30). The compiled frame is
    the root of the translator chain; it goes below the frames that are running (its eager
    callers, live Python frames now) and above those Dynamo inlined into it (not live: traced)."""
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslator

        tx = InstructionTranslator.current_tx()
    except Exception:  # pragma: no cover - another Dynamo, or no frame being compiled
        return
    while getattr(tx, "parent", None) is not None:
        tx = tx.parent
    code, line = getattr(tx, "f_code", None), getattr(tx, "lineno", None)
    if code is None or not line or not stack:
        return
    file = code.co_filename
    if any(fr["file"] == file and code.co_firstlineno <= fr["line"] and fr["function"] == code.co_name
           for fr in stack):
        return
    live, frame = set(), sys._getframe()
    while frame is not None:
        live.add((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    at = max((i + 1 for i, fr in enumerate(stack) if (fr["file"], fr["line"]) in live), default=0)
    stack.insert(at, {"file": file, "short": _short_path(file), "line": int(line), "function": code.co_name,
                      "source": linecache.getline(file, int(line)).strip()})


class _BreakLog(logging.Handler):
    """Dynamo's `graph_breaks` log records (TORCH_LOGS=graph_breaks), parsed: they also name the
    functions Dynamo SKIPPED whole ("Failed to handle graph break gracefully. Skipping the function
    and falling back to eager", GB0088), which leave no break reason with the counting backend."""

    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.breaks: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.endswith("__graph_breaks"):
            return
        try:
            text = record.getMessage()
        except Exception:  # pragma: no cover
            return
        m = _LOG_AT.search(text)
        if m is None:
            return
        stack = []
        for ln in text.splitlines():
            fm = _LOG_FRAME.match(ln)
            if fm:
                stack.append({"file": fm["file"], "short": _short_path(fm["file"]), "line": int(fm["line"]),
                              "function": fm["fn"], "source": linecache.getline(fm["file"], int(fm["line"])).strip()})
        _add_compiled_frame(stack)
        idx = text.find("/gb/gb")
        reason = text.split("Graph Break Reason:", 1)[-1].strip().splitlines()
        self.breaks.append({"site": {"file": m["file"], "short": _short_path(m["file"]), "line": int(m["line"])},
                            "gb": text[idx + 4: idx + 10].upper() if idx >= 0 else None,
                            "summary": reason[0] if reason else "", "detail": break_detail(text),
                            "skipped": "Skipping the function" in text, "user_stack": stack})
        sk = _LOG_SKIPPED.search(text)
        if sk is not None:  # the frame Dynamo gave up on (a graph break in a loop names it)
            self.breaks[-1]["skipped_frame"] = {"file": sk["file"], "short": _short_path(sk["file"]),
                                                "line": int(sk["line"]), "function": sk["fn"]}


# --------------------------------------------------------------------------------------------------
# Model building
# --------------------------------------------------------------------------------------------------


def build_config(family: str):
    from transformers import AutoConfig

    entry = family_entry(family)
    model_type = entry.get("model_type", family)
    overrides: dict[str, Any] = {}
    if entry.get("generic", True):
        default = AutoConfig.for_model(model_type)
        aliases = set(getattr(default, "attribute_map", {}) or {})
        overrides = {}
        for k, v in GENERIC_OVERRIDES.items():
            if not (k in aliases or hasattr(default, k)):
                continue
            try:  # some configs refuse a generic name (prophetnet: num_hidden_layers is read-only)
                setattr(default, k, v)
            except Exception:
                continue
            overrides[k] = v
    overrides.update(entry.get("config", {}))
    return AutoConfig.for_model(model_type, **overrides)


def build_model(family: str, dtype_name: str, auto_class: str | None = None):
    import torch
    import transformers

    torch.manual_seed(0)
    config = build_config(family)
    auto_name = auto_class or family_entry(family).get("auto_class", "AutoModel")
    model = getattr(transformers, auto_name).from_config(config)
    model.eval()
    dtype = getattr(torch, DTYPES[dtype_name])
    if dtype != torch.float32:
        model = model.to(dtype)
    return config, model


def build_inputs(family: str, config, dtype_name: str) -> dict[str, Any]:
    import torch

    entry = family_entry(family)
    kind = entry.get("inputs", "auto")
    batch = entry.get("batch", 2)
    seq_len = entry.get("seq_len", 16)
    dec_len = entry.get("dec_len", 8)
    dtype = getattr(torch, DTYPES[dtype_name])
    gen = torch.Generator().manual_seed(1)
    vocab = getattr(config, "vocab_size", 128) or 128
    low = 3 if vocab > 8 else 0  # keep clear of pad/bos/eos ids

    def ids(n: int, vocab_size: int = vocab) -> "torch.Tensor":
        return torch.randint(low, vocab_size, (batch, n), generator=gen)

    if kind == "whisper":
        frames = 2 * config.max_source_positions
        feats = torch.randn(batch, config.num_mel_bins, frames, generator=gen).to(dtype)
        return {"input_features": feats, "decoder_input_ids": ids(dec_len)}
    if kind == "vision" or (kind == "auto" and not getattr(config, "vocab_size", None)
                            and getattr(config, "image_size", None)):
        size = config.image_size if isinstance(config.image_size, int) else config.image_size[0]
        chans = getattr(config, "num_channels", 3)
        return {"pixel_values": torch.randn(batch, chans, size, size, generator=gen).to(dtype)}
    if kind == "grounding_dino":
        size = config.backbone_config.image_size
        pixels = torch.randn(batch, 3, size, size, generator=gen).to(dtype)
        return {"pixel_values": pixels, "input_ids": ids(seq_len, config.text_config.vocab_size)}
    inputs = {"input_ids": ids(seq_len)}
    if getattr(config, "is_encoder_decoder", False):
        inputs["decoder_input_ids"] = ids(dec_len)
    return inputs


# --------------------------------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------------------------------


def flatten_outputs(obj: Any, prefix: str = "out") -> dict[str, Any]:
    import torch

    flat: dict[str, Any] = {}

    def walk(value: Any, name: str) -> None:
        if isinstance(value, torch.Tensor):
            flat[name] = value.detach().cpu().clone()
        elif hasattr(value, "to_legacy_cache"):
            walk(value.to_legacy_cache(), name)
        elif hasattr(value, "items") and callable(value.items):
            for key, sub in value.items():
                walk(sub, f"{name}.{key}")
        elif isinstance(value, (list, tuple)):
            for idx, sub in enumerate(value):
                walk(sub, f"{name}[{idx}]")

    walk(obj, prefix)
    return flat


def tensor_digest(t) -> dict[str, Any]:
    import torch

    raw = t.detach().cpu().contiguous().reshape(-1)
    if raw.dtype == torch.bool:
        raw = raw.to(torch.uint8)
    data = raw.view(torch.uint8).numpy().tobytes() if raw.numel() else b""
    info: dict[str, Any] = {
        "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if t.is_floating_point() and t.numel():
        f = t.detach().float()
        info["sum"] = float(f.sum())
        info["absmax"] = float(f.abs().max())
        info["nonfinite"] = int((~torch.isfinite(f)).sum())
    return info


# --------------------------------------------------------------------------------------------------
# Break reasons
# --------------------------------------------------------------------------------------------------


def _frame_dict(fs) -> dict[str, Any]:
    filename = getattr(fs, "filename", "?")
    lineno = getattr(fs, "lineno", None)
    line = getattr(fs, "line", None)
    if not line and lineno:
        line = linecache.getline(filename, lineno).strip()
    return {"file": filename, "short": _short_path(filename), "line": lineno,
            "function": getattr(fs, "name", "?"), "source": (line or "").strip()}


def reason_dict(reason) -> dict[str, Any]:
    text = str(getattr(reason, "reason", reason))
    stack = [_frame_dict(fs) for fs in (getattr(reason, "user_stack", None) or [])]
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    gb = None
    idx = text.find("/gb/gb")
    if idx >= 0:
        gb = text[idx + 4: idx + 10].upper()
    site = stack[-1] if stack else None
    return {"reason": text, "summary": first_line, "gb": gb, "site": site, "user_stack": stack}


# --------------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------------


def break_detail(text: str, limit: int = 2000) -> str:
    """The break's own text in a graph_breaks log record: what follows the `Graph Break Reason:`
    header line (the break type, its explanation, hints and developer debug context: `builtin
    operator `print``, `module: _warnings, qualname: warn`), up to the user code traceback."""
    body = text.split("Graph Break Reason:", 1)[-1].partition("\n")[2]
    return body.split("User code traceback:", 1)[0].strip()[:limit]


class _TracedLines(logging.Handler):
    """Every source line Dynamo's symbolic interpreter started (its `trace_source` artifact log,
    one record per new line of a traced or inlined frame, resume functions included), by file:
    the evidence that Dynamo traced a frame at all, and how far. The record's argument is a
    LazyString bound to the instruction translator; it is read directly (no message formatting),
    with the message parsed as a fallback."""

    NAME = "torch._dynamo.symbolic_convert.__trace_source"
    _MSG = re.compile(r"TRACE starts_line (?P<file>.+?):(?P<line>\d+) in ")

    def __init__(self, markers: list[str]) -> None:
        super().__init__(level=logging.NOTSET)
        self.markers = markers
        self.lines: dict[str, set[int]] = {}
        self._keep: dict[str, bool] = {}
        self.seen = 0  # records of any file: none at all means the log did not work, not "nothing traced"

    def emit(self, record: logging.LogRecord) -> None:
        try:
            lazy = record.args[0] if record.args else None
            tx = getattr(getattr(lazy, "func", None), "__self__", None)
            if tx is not None and hasattr(tx, "f_code") and isinstance(getattr(tx, "lineno", None), int):
                fname, line = tx.f_code.co_filename, tx.lineno
            else:
                m = self._MSG.search(record.getMessage())
                if m is None:
                    return
                fname, line = m["file"], int(m["line"])
        except Exception:  # pragma: no cover
            return
        self.seen += 1
        ok = self._keep.get(fname)
        if ok is None:
            norm = fname.replace(os.sep, "/")
            ok = self._keep[fname] = any(mk in norm for mk in self.markers)
        if ok:
            self.lines.setdefault(fname, set()).add(line)

    @contextlib.contextmanager
    def capture(self):
        """Enable the artifact logger for this block only, into this handler alone (not torch's
        stderr handler: one record per traced line)."""
        lg = logging.getLogger(self.NAME)
        level, propagate = lg.level, lg.propagate
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
        lg.addHandler(self)
        try:
            yield self
        finally:
            lg.removeHandler(self)
            lg.setLevel(level)
            lg.propagate = propagate

    def result(self) -> dict[str, list[int]]:
        return {_short_path(f): sorted(v) for f, v in self.lines.items()}


def graph_break_log(records: list[str]) -> list[dict[str, Any]]:
    """`Graph break in user code at FILE:LINE` records of Dynamo's graph_breaks log: file, line,
    the first line of the reason, and the break's own text (`detail`, see `break_detail`)."""
    out = []
    for rec in records:
        head, _, rest = rec.partition("\n")
        at = head.rsplit(" at ", 1)[-1]
        file, _, line = at.rpartition(":")
        if not file or not line.isdigit():
            continue
        reason = next((ln.split(":", 1)[1].strip() for ln in rest.splitlines()
                       if ln.startswith("Graph Break Reason:")), "")
        idx = rest.find("/gb/gb")
        gb = rest[idx + 4: idx + 10].upper() if idx >= 0 else None
        out.append({"file": file, "line": int(line), "reason": reason, "gb": gb,
                    "duplicate": "suppressed" in head, "detail": break_detail(rec)})
    return out


def line_coverage(fn, marker: str = "/transformers/") -> dict[str, list[int]]:
    """Lines executed by ``fn()`` in files whose path contains ``marker`` (a comma list: any of
    them; ``sys.settrace``; only frames of those files get a local tracer, so the rest of the call
    runs at near full speed). Keys are package-relative short paths
    (``transformers/models/t5/modeling_t5.py``)."""
    markers = marker.split(",")
    lines: dict[str, set[int]] = {}
    keep: dict[str, bool] = {}

    def local(frame, event, arg):
        if event == "line":
            lines.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return local

    def glob_(frame, event, arg):
        fname = frame.f_code.co_filename
        ok = keep.get(fname)
        if ok is None:
            norm = fname.replace(os.sep, "/")
            ok = keep[fname] = any(m in norm for m in markers)
        if not ok:
            return None
        lines.setdefault(fname, set()).add(frame.f_lineno)
        return local

    old = sys.gettrace()
    sys.settrace(glob_)
    try:
        fn()
    finally:
        sys.settrace(old)
    return {_short_path(f): sorted(v) for f, v in lines.items()}


def measure(spec: str, outputs_path: str | None, calls: int, explain: bool,
            auto_class: str | None = None, build_only: bool = False,
            coverage: bool = False, build=None, marker: str = "/transformers/",
            loggers: tuple[str, ...] = ("transformers",), grad: bool = False) -> dict[str, Any]:
    """``build``: instead of a transformers model, a function returning ``(config, model, inputs)``
    (``benchmarks/realcode.py``'s corpus); ``marker``: the path part of the files line coverage
    records; ``loggers``: the logger hierarchies whose records are messages; ``grad``: run with
    autograd on (a training step) instead of under ``torch.no_grad()``."""
    t0 = time.perf_counter()
    family, dtype_name = parse_spec(spec)
    capture = _Capture()
    tf_loggers = [logging.getLogger(name) for name in loggers]
    for lg in tf_loggers:
        lg.addHandler(capture)

    result: dict[str, Any] = {"spec": spec, "family": family, "dtype": dtype_name, "ok": False}
    build_events: list[dict[str, Any]] = []
    with capture.phase(build_events):
        import torch

        result["torch_version"] = torch.__version__
        if build is None:
            import transformers

            result["transformers_file"] = transformers.__file__
            result["transformers_version"] = transformers.__version__
            config, model = build_model(family, dtype_name, auto_class)
            inputs = build_inputs(family, config, dtype_name)
        else:
            config, model, inputs = build()
    result["model_class"] = type(model).__name__
    result["attn_implementation"] = getattr(config, "_attn_implementation", None)
    result["inputs"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
                        for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    result["messages"] = {"build": build_events}
    result["timings"] = {"build_s": round(time.perf_counter() - t0, 2)}
    if build_only:
        for lg in tf_loggers:
            lg.removeHandler(capture)
        result["ok"] = True
        return result

    import torch._dynamo
    from torch._dynamo.utils import counters

    # Dynamo's own artifact logs: recompiles (one record per recompilation) and graph breaks.
    torch._logging.set_logs(recompiles=True, graph_breaks=True)
    log_every_break_stack()
    recompile_handler = _ListHandler()
    logging.getLogger("torch._dynamo.guards.__recompiles").addHandler(recompile_handler)
    # every graph break with its user file:line, also those whose graph before it is empty (which
    # the counting backend never sees: a logger call before any tensor op of its frame)
    break_records = _ListHandler()
    logging.getLogger("torch._dynamo.symbolic_convert.__graph_breaks").addHandler(break_records)

    saved: dict[str, dict[str, Any]] = {}
    with (contextlib.nullcontext() if grad else torch.no_grad()):
        # ---- eager ----
        t = time.perf_counter()
        eager_events: list[list[dict[str, Any]]] = []
        for i in range(calls):
            events: list[dict[str, Any]] = []
            with capture.phase(events):
                out = model(**inputs)
            eager_events.append(events)
            if i == 0:
                saved["eager"] = flatten_outputs(out)
        result["messages"]["eager"] = eager_events
        result["timings"]["eager_s"] = round(time.perf_counter() - t, 2)
        if coverage:  # one more eager call under sys.settrace (messages of it are dropped)
            t = time.perf_counter()
            _clear_once_caches()
            with capture.phase([]):
                result["coverage"] = line_coverage(lambda: model(**inputs), marker)
            result["timings"]["coverage_s"] = round(time.perf_counter() - t, 2)

        # ---- compiled with the counting backend ----
        _clear_once_caches()
        torch._dynamo.reset()
        counters.clear()
        graphs: list[dict[str, Any]] = []
        call_index = [0]

        def counting_backend(gm, example_inputs):
            reason = getattr(gm, "compile_subgraph_reason", None)
            cid = torch._guards.CompileContext.current_compile_id()
            rd = reason_dict(reason) if reason is not None else None
            graphs.append({
                "call": call_index[0],
                # frame_compile_id > 0: this graph comes from a RE-compilation of its frame
                "compile_id": str(cid) if cid is not None else None,
                "frame_id": getattr(cid, "frame_id", None),
                "frame_compile_id": getattr(cid, "frame_compile_id", None),
                "frame": rd["user_stack"][0] if rd and rd["user_stack"] else None,
                "nodes": len(gm.graph.nodes),
                "ops": sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method",
                                                                  "call_module")),
                "graph_break": bool(getattr(reason, "graph_break", False)) if reason else False,
                "reason": rd,
            })
            return gm.forward

        torch._logging.set_logs(recompiles=True, graph_breaks=True)
        log_every_break_stack()
        break_log = _BreakLog()
        logging.getLogger("torch._dynamo").addHandler(break_log)
        # the lines Dynamo traced (compiled call and explain), in the files coverage records
        traced = _TracedLines(marker.split(",")) if coverage else None
        compiled = torch.compile(model, backend=counting_backend)
        compiled_events: list[list[dict[str, Any]]] = []
        graphs_per_call: list[int] = []
        recompiles_per_call: list[int] = []
        compile_error = None
        t = time.perf_counter()
        for i in range(calls):
            call_index[0] = i
            before_g, before_r = len(graphs), len(recompile_handler.records)
            events = []
            try:
                with capture.phase(events), (traced.capture() if traced is not None else contextlib.nullcontext()):
                    out_c = compiled(**inputs)
            except Exception:
                compile_error = traceback.format_exc()
                compiled_events.append(events)
                break
            compiled_events.append(events)
            graphs_per_call.append(len(graphs) - before_g)
            recompiles_per_call.append(len(recompile_handler.records) - before_r)
            if i == 0:
                saved["compiled"] = flatten_outputs(out_c)
            if i == 0:
                result["timings"]["compile_first_call_s"] = round(time.perf_counter() - t, 2)
        logging.getLogger("torch._dynamo").removeHandler(break_log)
        torch._logging.set_logs(recompiles=True)
        # first-call breaks as Dynamo logs them, functions it skipped whole included
        result["log_breaks"] = break_log.breaks
        result["skipped_functions"] = [b for b in break_log.breaks if b["skipped"]]
        result["messages"]["compiled"] = compiled_events
        first = [g for g in graphs if g["call"] == 0]
        result["graphs"] = len(first)
        result["breaks"] = max(len(first) - 1, 0)
        result["graphs_per_call"] = graphs_per_call
        result["graph_details"] = graphs
        result["break_reasons"] = [g["reason"] for g in first if g["reason"] and g["graph_break"]]
        result["graphs_from_recompiles"] = sum(1 for g in first if (g["frame_compile_id"] or 0) > 0)
        result["recompiles"] = len(recompile_handler.records)
        result["recompiles_per_call"] = recompiles_per_call
        result["recompile_reasons"] = list(recompile_handler.records)
        result["graph_break_log"] = graph_break_log(break_records.records)
        break_records.records.clear()
        result["counters"] = {k: dict(v) for k, v in counters.items()
                              if k in ("stats", "frames", "graph_break", "resumes")}
        result["compile_error"] = compile_error

        # ---- explain ----
        if explain:
            _clear_once_caches()
            torch._dynamo.reset()
            t = time.perf_counter()
            explain_events: list[dict[str, Any]] = []
            before_r = len(recompile_handler.records)
            try:
                with capture.phase(explain_events), (traced.capture() if traced is not None else contextlib.nullcontext()):
                    ex = torch._dynamo.explain(model)(**inputs)
                result["explain"] = {
                    "graph_count": ex.graph_count,
                    "graph_break_count": ex.graph_break_count,
                    "op_count": ex.op_count,
                    "break_reasons": [reason_dict(r) for r in ex.break_reasons],
                    "recompiles": len(recompile_handler.records) - before_r,
                }
            except Exception:
                result["explain"] = {"error": traceback.format_exc()}
            result["messages"]["explain"] = explain_events
            result["timings"]["explain_s"] = round(time.perf_counter() - t, 2)

    if coverage and traced is not None and traced.seen:  # no record at all: no evidence (a renamed log)
        result["traced_lines"] = traced.result()
    for lg in tf_loggers:
        lg.removeHandler(capture)
    result["outputs"] = {phase: {name: tensor_digest(v) for name, v in tensors.items()}
                         for phase, tensors in saved.items()}
    if outputs_path:
        torch.save(saved, outputs_path)
        result["outputs_file"] = outputs_path
    result["timings"]["total_s"] = round(time.perf_counter() - t0, 2)
    result["ok"] = compile_error is None
    return result


def hook_summary(finder) -> dict[str, Any]:
    """What the import hook did in this process: its records and totals."""
    recs = [r.to_dict() for r in finder.records]
    mended = [r for r in recs if r["applied"]]
    return {
        "modules": len(recs),
        "mended_modules": len(mended),
        "fixes": sum(r["applied"] for r in mended),
        "from_cache": sum(1 for r in recs if r["cached"]),
        "failed": [f"{r['module']}: {r['error']}" for r in recs if r["error"]],
        "late": {r["module"]: r["late"] for r in recs if r["late"]},
        "late_missed": {r["module"]: r["late_missed"] for r in recs if r["late_missed"]},
        "seconds": round(sum(r["seconds"] for r in recs), 3),
        "already_imported": finder.already_imported,
        "mended": {r["module"]: r["codes"] for r in mended},
        "records": recs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", required=True, help="e.g. t5, bart-fp16, phi3, any model_type[-fp16]")
    ap.add_argument("--outputs", help="torch.save the output tensors here")
    ap.add_argument("--calls", type=int, default=2, help="calls per phase (default 2)")
    ap.add_argument("--no-explain", action="store_true", help="skip torch._dynamo.explain")
    ap.add_argument("--auto-class", help="transformers Auto class (default: the family table's)")
    ap.add_argument("--hook", metavar="SCOPE",
                    help="install GraphMend's import hook (graphmend.probe.importhook.install) for these "
                         "packages (comma list, e.g. transformers) before anything is imported")
    ap.add_argument("--hook-unsafe", action="store_true", help="with --hook: apply unsafe fixes too")
    ap.add_argument("--hook-cache-dir", help="with --hook: its cache directory ('none': no cache)")
    ap.add_argument("--coverage", action="store_true",
                    help="record the transformers lines one eager call executes (result['coverage'])")
    ap.add_argument("--build-only", action="store_true",
                    help="only import transformers and build the model (import-time measurements)")
    ap.add_argument("--without-graphmend", action="store_true",
                    help="make `import graphmend` fail (sys.modules entry None) before anything runs: "
                         "mended code must need only its vendored runtime copy")
    ap.add_argument("--realcode", action="store_true",
                    help="--spec names an entry of benchmarks/realcode_corpus.py (not transformers)")
    args = ap.parse_args(argv)
    if args.without_graphmend:
        if args.hook:
            ap.error("--without-graphmend and --hook exclude each other (the hook is graphmend)")
        sys.modules["graphmend"] = None  # type: ignore[assignment]  # ImportError on import
    real_stdout = sys.stdout
    finder = None
    extra: dict[str, Any] = {}
    settings = None
    if args.realcode:
        import realcode_corpus

        entry = realcode_corpus.ENTRIES[args.spec]
        extra = {"build": entry.build, "marker": entry.marker, "loggers": entry.loggers, "grad": entry.grad}
        if args.hook:
            from graphmend.config import Settings

            settings = Settings(scope=entry.scope)
    if args.hook:
        from graphmend.probe import importhook

        no_cache = args.hook_cache_dir == "none"
        finder = importhook.install(args.hook.split(","), unsafe=args.hook_unsafe,
                                    cache_dir=None if no_cache else args.hook_cache_dir,
                                    use_cache=not no_cache, settings=settings)
    try:
        result = measure(args.spec, args.outputs, max(args.calls, 1), not args.no_explain,
                         args.auto_class, build_only=args.build_only, coverage=args.coverage, **extra)
    except BaseException as exc:  # report, never crash silently
        result = {"spec": args.spec, "ok": False, "error": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc()}
    if finder is not None:
        result["hook"] = hook_summary(finder)
    if args.without_graphmend:
        result["graphmend_importable"] = "graphmend" in sys.modules and sys.modules["graphmend"] is not None
    sys.stdout = real_stdout
    real_stdout.write("\n" + json.dumps(result, default=str) + "\n")
    real_stdout.flush()
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    raise SystemExit(main())
