"""KV cache: memory per token, per conversation and for many users (lessons 05, 14).

Lesson 05's formulas. Every token of context keeps a key and a value vector per layer and KV
head. GB are 10⁹ bytes; the course also quotes KiB and MiB (2¹⁰, 2²⁰), given as extra outputs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..calculator import Calculator, OutputSpec, Params, WorkedExample, counted, typed
from ..chart import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    PURPLE,
    RED,
    Figure,
    Measured,
    Series,
    dashed,
    layout,
    line,
    points,
    these_settings,
)
from ..model_params import MODEL, MODEL_CONFIG, TENSOR_PARALLEL, check_tensor_parallel, shape_of, typed_shape
from ..model_shapes import AttentionKind, kv_bytes_for_sequence, kv_bytes_per_token, kv_heads_per_gpu
from ..params import Param, ParamError

# Bytes per stored value; llama.cpp's block formats carry a small scale overhead.
KV_DTYPE_BYTES = {"f16": 2.0, "q8_0": 1.0625, "q4_0": 0.5625, "fp8": 1.0}
KV_DTYPE_LABELS = {
    "f16": "f16 (2 bytes)",
    "q8_0": "q8_0 (1.0625 bytes)",
    "q4_0": "q4_0 (0.5625 bytes)",
    "fp8": "fp8 (1 byte)",
}
GB = 1e9
KIB = 1024
MIB = 1024**2


# What an engine's start-up log says about its KV pool. vLLM prints "GPU KV cache size: 216,496
# tokens" and "Maximum concurrency for 8,192 tokens per request: 26.43x" (vllm/v1/core/
# kv_cache_utils.py; older versions without the commas) and, from its workers, "Available KV
# cache memory: 26.43 GiB" (vllm/v1/worker/gpu_worker.py).
ENGINE_TOKENS = re.compile(r"KV cache size:\s*([\d,]+)\s*tokens")
ENGINE_CONCURRENCY = re.compile(r"Maximum concurrency for\s*([\d,]+)\s*tokens per request:\s*([\d.]+)x")
ENGINE_MEMORY = re.compile(r"Available KV cache memory:\s*([\d.]+)\s*GiB")
GIB = 1024**3
LOG_CHARS = 20_000


@dataclass(frozen=True)
class EngineLog:
    """The KV pool an engine reported; each part None when the log has no such line."""

    tokens: int | None
    concurrency: float | None
    tokens_per_request: int | None
    memory_bytes: float | None


def read_engine_log(text: str) -> EngineLog:
    """The KV lines of a vLLM start-up log; ``ParamError`` naming ``engine_log`` if it has none."""

    def whole(found: str) -> int:
        return int(found.replace(",", ""))

    tokens = ENGINE_TOKENS.search(text)
    concurrency = ENGINE_CONCURRENCY.search(text)
    memory = ENGINE_MEMORY.search(text)
    if tokens is None and concurrency is None:
        raise ParamError(
            "engine_log",
            "engine_log has no 'GPU KV cache size: N tokens' or 'Maximum concurrency for N tokens per "
            "request: Xx' line: paste the lines vLLM prints at start-up",
        )
    return EngineLog(
        tokens=whole(tokens.group(1)) if tokens else None,
        concurrency=float(concurrency.group(2)) if concurrency else None,
        tokens_per_request=whole(concurrency.group(1)) if concurrency else None,
        memory_bytes=float(memory.group(1)) * GIB if memory else None,
    )


def _check(p: Params) -> None:
    check_tensor_parallel(shape_of(p), p["tensor_parallel"])
    if p["engine_log"]:
        read_engine_log(p["engine_log"])


def _difference_pct(felab: float | None, engine: float | None) -> float | None:
    return None if felab is None or not engine else 100.0 * (felab - engine) / engine


def _beside_the_engine(p: Params, per_token: float) -> dict[str, float | None]:
    """felab's pool beside the engine's, from the same memory: the log's "Available KV cache
    memory" when it has one, else the free memory entered."""
    nothing = dict.fromkeys(ENGINE_KEYS)
    if not p["engine_log"]:
        return nothing
    log = read_engine_log(p["engine_log"])
    pool = log.memory_bytes if log.memory_bytes is not None else p["free_gb"] * GB
    felab_tokens = pool / per_token
    felab_concurrency = None
    if log.tokens_per_request:
        shape, per_value = shape_of(p), KV_DTYPE_BYTES[p["kv_dtype"]]
        sequence = kv_bytes_for_sequence(
            shape, log.tokens_per_request, per_value, p["tensor_parallel"]
        ).per_gpu
        felab_concurrency = pool / sequence
    return {
        "pool_gb": pool / GB,
        "engine_kv_tokens": log.tokens,
        "felab_kv_tokens": felab_tokens,
        "kv_tokens_difference_pct": _difference_pct(felab_tokens, log.tokens),
        "engine_max_concurrency": log.concurrency,
        "felab_max_concurrency": felab_concurrency,
        "concurrency_difference_pct": _difference_pct(felab_concurrency, log.concurrency),
    }


ENGINE_KEYS = (
    "pool_gb",
    "engine_kv_tokens",
    "felab_kv_tokens",
    "kv_tokens_difference_pct",
    "engine_max_concurrency",
    "felab_max_concurrency",
    "concurrency_difference_pct",
)


def _compute(p: Params) -> dict[str, float]:
    """Per GPU under tensor parallelism (each keeps max(1, KV heads ÷ TP) heads; an MLA latent
    whole), and over the TP group; a sliding layer keeps at most its window of tokens."""
    shape = shape_of(p)
    per_value = KV_DTYPE_BYTES[p["kv_dtype"]]
    tp = p["tensor_parallel"]
    by_kind = kv_bytes_per_token(shape, per_value, tp)
    per_token = sum(by_kind.values())
    conversation = kv_bytes_for_sequence(shape, p["context_tokens"], per_value, tp).per_gpu
    return {
        "kv_bytes_per_token": per_token,
        "kv_bytes_per_token_full": by_kind.get(AttentionKind.FULL, 0.0),
        "kv_bytes_per_token_sliding": by_kind.get(AttentionKind.SLIDING, 0.0),
        "kv_bytes_per_token_mla": by_kind.get(AttentionKind.MLA, 0.0),
        "kv_bytes_per_context_token": conversation / p["context_tokens"],
        "kv_bytes_per_token_all_gpus": per_token * tp,
        "kv_kib_per_token": per_token / KIB,
        "kv_gb_per_conversation": conversation / GB,
        "kv_mib_per_conversation": conversation / MIB,
        "kv_gb_per_conversation_all_gpus": conversation * tp / GB,
        "kv_gb_total": conversation * p["users"] / GB,
        # A small tolerance so 18 GiB ÷ 1 GiB is 18, not 17 after rounding error.
        "max_conversations": math.floor(p["free_gb"] * GB / conversation + 1e-9),
        **_beside_the_engine(p, per_token),
    }


def _kind_terms(p: Params) -> dict[AttentionKind, str]:
    """Each layer kind's bytes per token, written out with the shape's numbers."""
    shape = shape_of(p)
    per_value = typed(KV_DTYPE_BYTES[p["kv_dtype"]], "B")
    tp = p["tensor_parallel"]
    terms = {}
    for kind in AttentionKind:
        layers = shape.layers_of_kind(kind)
        if not layers:
            continue
        if kind is AttentionKind.MLA:
            assert shape.mla is not None
            latent = f"({shape.mla.kv_lora_rank} + {shape.mla.qk_rope_head_dim})"
            terms[kind] = f"{layers} MLA layers × {latent} × {per_value}"
            continue
        heads = f"{kv_heads_per_gpu(shape, tp)} KV heads"
        if tp > 1:
            heads += f" ({shape.kv_heads} ÷ {tp} GPUs, at least 1)"
        named = "layers" if kind is AttentionKind.FULL else "sliding layers"
        terms[kind] = f"2 × {layers} {named} × {heads} × {shape.head_dim} × {per_value}"
    return terms


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    terms = _kind_terms(p)
    shape = shape_of(p)
    tp, tokens = p["tensor_parallel"], p["context_tokens"]
    none = {
        AttentionKind.FULL: "no full-attention layers",
        AttentionKind.SLIDING: "no sliding-window layers",
        AttentionKind.MLA: "no latent-attention layers",
    }
    keys = {
        AttentionKind.FULL: "kv_bytes_per_token_full",
        AttentionKind.SLIDING: "kv_bytes_per_token_sliding",
        AttentionKind.MLA: "kv_bytes_per_token_mla",
    }
    if shape.sliding_window is None:
        per_context = f"{out('kv_bytes_per_context_token')} = every layer keeps every token"
    else:
        kept = min(tokens, shape.sliding_window)
        others = " + ".join(out(keys[k]) for k in terms if k is not AttentionKind.SLIDING) or "0 B"
        per_context = (
            f"{out('kv_bytes_per_context_token')} = {others} + {out('kv_bytes_per_token_sliding')}"
            f" × {typed(kept)} ÷ {typed(tokens)} tokens (a sliding layer keeps its {typed(shape.sliding_window)}-token window)"
        )
    per_conversation = f"{out('kv_bytes_per_context_token')} × {typed(tokens)} tokens"
    return {
        "kv_bytes_per_token": f"{out('kv_bytes_per_token')} = {' + '.join(terms.values())}",
        **{keys[k]: f"{out(keys[k])} = {terms[k]}" if k in terms else f"0 B: {none[k]}" for k in keys},
        "kv_bytes_per_context_token": per_context,
        "kv_bytes_per_token_all_gpus": f"{out('kv_bytes_per_token_all_gpus')} = {out('kv_bytes_per_token')} × {counted(tp, 'GPU')}",
        "kv_kib_per_token": f"{out('kv_kib_per_token')} = {out('kv_bytes_per_token')} ÷ 1,024",
        "kv_gb_per_conversation": f"{out('kv_gb_per_conversation')} = {per_conversation} ÷ 10⁹",
        "kv_mib_per_conversation": f"{out('kv_mib_per_conversation')} = {per_conversation} ÷ 2²⁰",
        "kv_gb_per_conversation_all_gpus": (
            f"{out('kv_gb_per_conversation_all_gpus')} = {out('kv_gb_per_conversation')} × {counted(tp, 'GPU')}"
        ),
        "kv_gb_total": f"{out('kv_gb_total')} = {out('kv_gb_per_conversation')} × {counted(p['users'], 'user')}",
        "max_conversations": (
            f"{out('max_conversations')} = ⌊{typed(p['free_gb'], 'GB')} ÷ {out('kv_gb_per_conversation')}⌋"
        ),
        **_engine_formulas(p, out),
    }


def _engine_formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    if not p["engine_log"]:
        return dict.fromkeys(ENGINE_KEYS, "— : no engine log pasted")
    log = read_engine_log(p["engine_log"])
    pool = (
        f"{out('pool_gb')} = the log's {typed(log.memory_bytes / GIB, 'GiB')} × 2³⁰ ÷ 10⁹"
        if log.memory_bytes is not None
        else f"{out('pool_gb')}: the free memory entered (the log states none)"
    )
    requested = f"{typed(log.tokens_per_request)}-token" if log.tokens_per_request else "—"
    return {
        "pool_gb": pool,
        "engine_kv_tokens": f"{out('engine_kv_tokens')}: the log's GPU KV cache size",
        "felab_kv_tokens": f"{out('felab_kv_tokens')} = {out('pool_gb')} ÷ {out('kv_bytes_per_token')}",
        "kv_tokens_difference_pct": (
            f"{out('kv_tokens_difference_pct')} = ({out('felab_kv_tokens')} − {out('engine_kv_tokens')}) ÷ "
            f"{out('engine_kv_tokens')}"
        ),
        "engine_max_concurrency": f"{out('engine_max_concurrency')}: the log's maximum concurrency",
        "felab_max_concurrency": (
            f"{out('felab_max_concurrency')} = {out('pool_gb')} ÷ the KV of one {requested} conversation"
        ),
        "concurrency_difference_pct": (
            f"{out('concurrency_difference_pct')} = ({out('felab_max_concurrency')} − "
            f"{out('engine_max_concurrency')}) ÷ {out('engine_max_concurrency')}"
        ),
    }


# Lesson 05: llama.cpp's reported KV allocation for Llama-3.1-8B, MiB by context (f16, q8_0).
LESSON_05 = "llama.cpp's KV allocation log, Llama-3.1-8B (lesson 05)"
LESSON_05_RUNS = ((4096, 512, 272), (32768, 4096, 2176), (131072, 16384, 8704))
LLAMA_8B_KV = {"layers": 32, "kv_heads": 8, "head_dim": 128}


def _is_llama_8b_on_one_gpu(p: Params) -> bool:
    shape = shape_of(p)
    return (
        p["tensor_parallel"] == 1
        and shape.layer_attention == typed_shape(**LLAMA_8B_KV).layer_attention
        and (
            shape.kv_heads,
            shape.head_dim,
            shape.mla,
        )
        == (LLAMA_8B_KV["kv_heads"], LLAMA_8B_KV["head_dim"], None)
    )


def _measured(p: Params) -> list[Measured]:
    if not _is_llama_8b_on_one_gpu(p):
        return []
    rows = []
    for tokens, f16, q8 in LESSON_05_RUNS:
        for dtype, mib in (("f16", f16), ("q8_0", q8)):
            model = CALCULATOR.run_with(p, context_tokens=tokens, kv_dtype=dtype).value(
                "kv_mib_per_conversation"
            )
            rows.append(Measured(f"{tokens:,} tokens, {dtype}", mib, "MiB", LESSON_05, model, x=tokens))
    return rows


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    contexts = [2**n for n in range(10, 18)]
    colours = {"f16": BLUE, "q8_0": GREEN, "fp8": ORANGE, "q4_0": PURPLE}
    users = f"{p['users']} user{'s' if p['users'] > 1 else ''}"
    data = [
        line(
            f"{dtype}, {users}",
            contexts,
            [CALCULATOR.run_with(p, context_tokens=c, kv_dtype=dtype).value("kv_gb_total") for c in contexts],
            colours[dtype],
        )
        for dtype in KV_DTYPE_BYTES
    ]
    data.append(dashed("free memory", [contexts[0], contexts[-1]], [p["free_gb"]] * 2, RED, 1.5, "dash"))
    data.append(these_settings(p["context_tokens"], CALCULATOR.run(p).value("kv_gb_total")))
    if p["users"] == 1 and (rows := _measured(p)):
        gb = [r.measured * 2**20 / 1e9 for r in rows]
        data.append(points("measured (lesson 05)", [r.x for r in rows], gb, GREY, "x-thin-open"))
    described = layout("context tokens per conversation (log)", "KV cache (GB)")
    described["xaxis"].update(
        {"type": "log", "tickvals": contexts, "ticktext": [f"{c // 1024}k" for c in contexts]}
    )
    return {"data": data, "layout": described}


CALCULATOR = Calculator(
    name="kv-cache",
    order=40,
    title="KV cache: memory per token, conversation and user",
    lessons=("05", "14"),
    meaning=(
        "Every token a conversation keeps costs memory in every layer, so the cache grows in a "
        "straight line with context and users, and it, not the weights, usually runs out first."
    ),
    params=(
        MODEL,
        MODEL_CONFIG,
        Param(
            "layers",
            "int",
            32,
            "Transformer layers (Llama-3.1-8B: 32); with a model chosen or pasted, its own.",
            low=1,
            high=1000,
        ),
        Param(
            "kv_heads",
            "int",
            8,
            "Key/value heads per layer (grouped-query attention shares them; Llama-3.1-8B: 8).",
            label="KV heads",
            low=1,
            high=1000,
        ),
        Param(
            "head_dim",
            "int",
            128,
            "Values per head (Llama-3.1-8B: 128).",
            label="head size",
            low=1,
            high=100_000,
        ),
        Param(
            "kv_dtype",
            "choice",
            "f16",
            "How each cached value is stored.",
            label="cache type",
            choices=KV_DTYPE_LABELS,
        ),
        Param(
            "context_tokens",
            "int",
            8192,
            "Tokens of context each conversation may hold.",
            "tokens",
            label="context",
            low=1,
            high=100_000_000,
        ),
        Param("users", "int", 1, "Conversations held at once.", low=1, high=10_000_000),
        Param(
            "free_gb",
            "float",
            20.0,
            "Memory left for the cache after the weights, on each GPU.",
            "GB",
            label="free memory",
            low=0,
            high=10_000_000,
        ),
        TENSOR_PARALLEL,
        Param(
            "engine_log",
            "text",
            None,
            "A vLLM start-up log pasted whole; felab reads its KV cache lines and sets its own figures beside them.",
            label="engine log",
            optional=True,
            max_chars=LOG_CHARS,
        ),
    ),
    outputs=(
        OutputSpec("kv_bytes_per_token", "B", "per token, every layer (one GPU's share)"),
        OutputSpec("kv_bytes_per_token_full", "B", "per token in full-attention layers"),
        OutputSpec(
            "kv_bytes_per_token_sliding", "B", "per token in sliding-window layers, until the window fills"
        ),
        OutputSpec("kv_bytes_per_token_mla", "B", "per token in latent-attention (MLA) layers"),
        OutputSpec("kv_bytes_per_context_token", "B", "per token of this context, windows capped"),
        OutputSpec("kv_bytes_per_token_all_gpus", "B", "per token, all tensor-parallel GPUs together"),
        OutputSpec("kv_kib_per_token", "KiB", "per token"),
        OutputSpec("kv_gb_per_conversation", "GB", "per conversation (one GPU's share)"),
        OutputSpec("kv_mib_per_conversation", "MiB", "per conversation"),
        OutputSpec("kv_gb_per_conversation_all_gpus", "GB", "per conversation, all GPUs together"),
        OutputSpec("kv_gb_total", "GB", "for all users (one GPU's share)"),
        OutputSpec("max_conversations", "conversations", "full-length conversations that fit"),
        OutputSpec("pool_gb", "GB", "KV pool compared with the engine's"),
        OutputSpec("engine_kv_tokens", "tokens", "the engine's KV pool (from its log)"),
        OutputSpec("felab_kv_tokens", "tokens", "felab's KV pool in the same memory"),
        OutputSpec("kv_tokens_difference_pct", "%", "felab against the engine, KV pool"),
        OutputSpec("engine_max_concurrency", "×", "the engine's maximum concurrency (from its log)"),
        OutputSpec("felab_max_concurrency", "×", "felab's maximum concurrency at the log's length"),
        OutputSpec("concurrency_difference_pct", "%", "felab against the engine, concurrency"),
    ),
    compute=_compute,
    check=_check,
    formulas=_formulas,
    chart=_chart,
    chart_description="KV cache gigabytes against context length for each cache type, beside the free memory.",
    measured=_measured,
    examples=(
        WorkedExample(
            "lesson 05: 8B f16 × 131,072 tokens = 17.18 GB",
            {"context_tokens": "131072"},
            "kv_gb_per_conversation",
            "17.2 GB",
        ),
        WorkedExample(
            "lesson 05: 8B f16 × 131,072 tokens = 16,384 MiB",
            {"context_tokens": "131072"},
            "kv_mib_per_conversation",
            "16,384 MiB",
        ),
    ),
)
