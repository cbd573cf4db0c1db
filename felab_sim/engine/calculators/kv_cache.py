"""KV cache: memory per token, per conversation and for many users (lessons 05, 14).

Lesson 05's formulas. Every token of context keeps a key and a value vector per layer and KV
head. GB are 10⁹ bytes; the course also quotes KiB and MiB (2¹⁰, 2²⁰), given as extra outputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, typed
from ..core.chart import (
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
from ..core.params import Param
from ..models.model_kv_cache import kv_bytes_for_sequence, kv_bytes_per_token
from ..models.model_params import (
    KV_DTYPE_BYTES,
    KV_DTYPE_LABELS,
    MODEL,
    MODEL_CONFIG,
    MOST_CONTEXT_TOKENS,
    MOST_HEAD_DIM,
    MOST_KV_HEADS,
    MOST_LAYERS,
    TENSOR_PARALLEL,
    check_tensor_parallel,
    kv_terms,
    shape_of,
    typed_shape,
)
from ..models.model_shapes import AttentionKind
from ..serving.engine_logs import GIB, LLAMA_CPP, LOG_CHARS, MIB, SGLANG, VLLM, EngineLog, read_engine_log

GB = 1e9
KIB = 1024


def _read_log(text: str) -> EngineLog:
    """The pasted log's KV lines, each number held to the range of the typed field it stands for."""
    bounds = {
        kind: (CALCULATOR.param(name).high, f"as the {name} field")
        for kind, name in (
            ("tokens", "context_tokens"),
            ("memory_gb", "free_gb"),
            ("concurrency", "users"),
            ("layers", "layers"),
        )
    }
    return read_engine_log(text, bounds)  # type: ignore[arg-type]


def _check(p: Params) -> None:
    check_tensor_parallel(shape_of(p), p["tensor_parallel"])
    if p["engine_log"]:
        _read_log(p["engine_log"])


def _difference_pct(felab: float | None, engine: float | None) -> float | None:
    return None if felab is None or not engine else 100.0 * (felab - engine) / engine


def _felab_bytes_for_the_log(p: Params, log: EngineLog, per_token: float) -> float | None:
    """felab's KV bytes for the tokens the engine's pool holds. llama.cpp lists each cache's cells:
    with two (a sliding-window model) the first is the full-attention layers', the second the
    window's; otherwise every layer holds every cell."""
    shape, per_value, tp = shape_of(p), KV_DTYPE_BYTES[p["kv_dtype"]], p["tensor_parallel"]
    if log.engine == LLAMA_CPP and len(log.caches) == 2 and shape.sliding_window is not None:
        by_kind = kv_bytes_per_token(shape, per_value, tp)
        full, window = log.caches
        if full.cells is None or window.cells is None:
            return None
        sliding = by_kind.get(AttentionKind.SLIDING, 0.0)
        return (per_token - sliding) * full.cells + sliding * window.cells
    return None if log.tokens is None else per_token * log.tokens


def _beside_the_engine(p: Params, per_token: float) -> dict[str, float | str | None]:
    """felab's pool beside the engine's, from the same memory: the log's stated KV memory when it
    has one, else the free memory entered; and felab's bytes for the engine's tokens."""
    nothing: dict[str, float | str | None] = dict.fromkeys(ENGINE_KEYS)
    if not p["engine_log"]:
        return nothing
    log = _read_log(p["engine_log"])
    pool = log.memory_bytes if log.memory_bytes is not None else p["free_gb"] * GB
    # Tokens in the pool only where every cache holds the same tokens (not llama.cpp's two caches).
    felab_tokens = None if len(log.caches) > 1 else pool / per_token
    felab_concurrency = None
    if log.tokens_per_request:
        shape, per_value = shape_of(p), KV_DTYPE_BYTES[p["kv_dtype"]]
        sequence = kv_bytes_for_sequence(
            shape, log.tokens_per_request, per_value, p["tensor_parallel"]
        ).per_gpu
        felab_concurrency = pool / sequence
    felab_bytes = _felab_bytes_for_the_log(p, log, per_token)
    engine_gb = None if log.memory_bytes is None else log.memory_bytes / GB
    felab_gb = None if felab_bytes is None or engine_gb is None else felab_bytes / GB
    return {
        "engine": log.engine,
        "pool_gb": pool / GB,
        "engine_kv_tokens": log.tokens,
        "felab_kv_tokens": felab_tokens,
        "kv_tokens_difference_pct": _difference_pct(felab_tokens, log.tokens),
        "engine_max_concurrency": log.concurrency,
        "felab_max_concurrency": felab_concurrency,
        "concurrency_difference_pct": _difference_pct(felab_concurrency, log.concurrency),
        "engine_kv_gb": engine_gb,
        "felab_kv_gb": felab_gb,
        "kv_size_difference_pct": _difference_pct(felab_gb, engine_gb),
    }


ENGINE_KEYS = (
    "engine",
    "pool_gb",
    "engine_kv_tokens",
    "felab_kv_tokens",
    "kv_tokens_difference_pct",
    "engine_max_concurrency",
    "felab_max_concurrency",
    "concurrency_difference_pct",
    "engine_kv_gb",
    "felab_kv_gb",
    "kv_size_difference_pct",
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
        "kv_bytes_per_value": per_value,
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
        # Not rounded down: vLLM's "Maximum concurrency for N tokens per request: 9.31x".
        "max_concurrency": p["free_gb"] * GB / conversation,
        **_beside_the_engine(p, per_token),
    }


def _kind_terms(p: Params) -> dict[AttentionKind, str]:
    return kv_terms(shape_of(p), KV_DTYPE_BYTES[p["kv_dtype"]], p["tensor_parallel"])


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
        "kv_bytes_per_value": f"{out('kv_bytes_per_value')}: each cached number in {p['kv_dtype']}",
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
        "max_concurrency": (
            f"{out('max_concurrency')} = {typed(p['free_gb'], 'GB')} ÷ {out('kv_gb_per_conversation')},"
            " not rounded down, as vLLM's log prints its maximum concurrency"
        ),
        **_engine_formulas(p, out),
    }


# How each engine states its pool's memory, and what felab's "tokens" are compared with.
STATED_MEMORY = {
    VLLM: ("GiB", GIB, "Available KV cache memory"),
    SGLANG: ("GiB", GIB, "K + V size (SGLang's GB are 2³⁰ bytes)"),
    LLAMA_CPP: ("MiB", MIB, "KV size, every cache"),
}
STATED_TOKENS = {VLLM: "GPU KV cache size", SGLANG: "#tokens", LLAMA_CPP: "cells"}


def _engine_formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    if not p["engine_log"]:
        return dict.fromkeys(ENGINE_KEYS, "— : no engine log pasted")
    log = _read_log(p["engine_log"])
    unit, size, named = STATED_MEMORY[log.engine]
    stated = None if log.memory_bytes is None else typed(round(log.memory_bytes / size, 2), unit)
    pool = (
        f"{out('pool_gb')} = the log's {stated} ({named}) × {'2³⁰' if unit == 'GiB' else '2²⁰'} ÷ 10⁹"
        if stated is not None
        else f"{out('pool_gb')}: the free memory entered (the log states none)"
    )
    requested = f"{typed(log.tokens_per_request)}-token" if log.tokens_per_request else "—"
    no_memory = "— : the log states no KV memory"
    if len(log.caches) == 2 and out("felab_kv_gb") != "—":
        full, window = log.caches
        felab_size = (
            f"{out('felab_kv_gb')} = the full-attention layers' bytes per token × {counted(full.cells or 0, 'cell')} "
            f"+ the sliding layers' × {counted(window.cells or 0, 'cell')}, ÷ 10⁹"
        )
    else:
        felab_size = f"{out('felab_kv_gb')} = {out('kv_bytes_per_token')} × {out('engine_kv_tokens')} ÷ 10⁹"
    return {
        "engine": f"{out('engine')}: the engine whose KV lines the log has",
        "pool_gb": pool,
        "engine_kv_tokens": f"{out('engine_kv_tokens')}: the log's {STATED_TOKENS[log.engine]}",
        "felab_kv_tokens": (
            f"{out('felab_kv_tokens')} = {out('pool_gb')} ÷ {out('kv_bytes_per_token')}"
            if len(log.caches) <= 1
            else "— : the log's two caches hold different tokens (full layers and the window)"
        ),
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
        "engine_kv_gb": (
            f"{out('engine_kv_gb')} = the log's {stated} × {'2³⁰' if unit == 'GiB' else '2²⁰'} ÷ 10⁹"
            if stated is not None
            else no_memory
        ),
        "felab_kv_gb": felab_size if stated is not None else no_memory,
        "kv_size_difference_pct": (
            f"{out('kv_size_difference_pct')} = ({out('felab_kv_gb')} − {out('engine_kv_gb')}) ÷ {out('engine_kv_gb')}"
            if stated is not None
            else no_memory
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
            high=MOST_LAYERS,
        ),
        Param(
            "kv_heads",
            "int",
            8,
            "Key/value heads per layer (grouped-query attention shares them; Llama-3.1-8B: 8).",
            label="KV heads",
            low=1,
            high=MOST_KV_HEADS,
        ),
        Param(
            "head_dim",
            "int",
            128,
            "Values per head (Llama-3.1-8B: 128).",
            label="head size",
            low=1,
            high=MOST_HEAD_DIM,
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
            high=MOST_CONTEXT_TOKENS,
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
            "A vLLM, SGLang or llama.cpp start-up log pasted whole; felab reads its KV cache lines and sets its own figures beside them.",
            label="engine log",
            optional=True,
            max_chars=LOG_CHARS,
        ),
    ),
    outputs=(
        OutputSpec("kv_bytes_per_value", "B", "per cached number (a key's or a value's)"),
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
        OutputSpec("max_concurrency", "×", "maximum concurrency as vLLM prints it (not rounded down)"),
        OutputSpec("engine", "", "the engine the log is from"),
        OutputSpec("pool_gb", "GB", "KV pool compared with the engine's"),
        OutputSpec("engine_kv_tokens", "tokens", "the engine's KV pool (from its log)"),
        OutputSpec("felab_kv_tokens", "tokens", "felab's KV pool in the same memory"),
        OutputSpec("kv_tokens_difference_pct", "%", "felab against the engine, KV pool"),
        OutputSpec("engine_max_concurrency", "×", "the engine's maximum concurrency (from its log)"),
        OutputSpec("felab_max_concurrency", "×", "felab's maximum concurrency at the log's length"),
        OutputSpec("concurrency_difference_pct", "%", "felab against the engine, concurrency"),
        OutputSpec("engine_kv_gb", "GB", "the engine's KV memory (from its log)"),
        OutputSpec("felab_kv_gb", "GB", "felab's KV for the engine's tokens"),
        OutputSpec("kv_size_difference_pct", "%", "felab against the engine, KV memory"),
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
