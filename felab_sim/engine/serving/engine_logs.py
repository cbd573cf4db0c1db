"""What an engine's start-up log says about its KV cache: vLLM's, SGLang's and llama.cpp's lines.

Each engine prints its pool once at start-up, in its own words and units; the kv-cache
calculator sets felab's figure for the same memory or the same tokens beside it. The formats,
as each engine's source writes them:

- vLLM: "GPU KV cache size: 216,496 tokens" and "Maximum concurrency for 8,192 tokens per
  request: 26.43x" (vllm/v1/core/kv_cache_utils.py; older versions print no commas), and from
  its workers "Available KV cache memory: 26.43 GiB" (vllm/v1/worker/gpu_worker.py).
- SGLang: "KV Cache is allocated. #tokens: 350257, K size: 0.21 GB, V size: 0.21 GB", or for a
  latent-attention (MLA) model "... #tokens: N, KV size: X GB" (sgl-project/sglang,
  python/sglang/srt/mem_cache/memory_pool.py, MHATokenToKVPool and MLATokenToKVPool). Its "GB"
  is 2³⁰ bytes: the file sets GB = 1024 * 1024 * 1024. The scheduler repeats the pool as
  "max_total_num_tokens=N" (python/sglang/srt/managers/scheduler.py).
- llama.cpp: "llama_kv_cache: size = 4096.00 MiB ( 32768 cells,  32 layers,  1/1 seqs), K (f16):
  2048.00 MiB, V (f16): 2048.00 MiB" (ggml-org/llama.cpp, src/llama-kv-cache.cpp; the prefix
  was llama_kv_cache_unified before), one line per cache: a model with sliding-window layers
  gets two, the full-attention layers' first and the window's second
  (src/llama-kv-cache-iswa.cpp). Builds before May 2025 printed "KV self size  = 512.00 MiB,
  K (f16): ..." with the context in an earlier "n_ctx = 4096" line.

Pure Python: no Django.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..core.params import ParamError

GIB = 1024**3
MIB = 1024**2
LOG_CHARS = 20_000  # a start-up log's KV lines come early; longer pastes are refused by the param

VLLM = "vLLM"
SGLANG = "SGLang"
LLAMA_CPP = "llama.cpp"

VLLM_TOKENS = re.compile(r"KV cache size:\s*([\d,]+)\s*tokens")
VLLM_CONCURRENCY = re.compile(r"Maximum concurrency for\s*([\d,]+)\s*tokens per request:\s*([\d.]+)x")
VLLM_MEMORY = re.compile(r"Available KV cache memory:\s*([\d.]+)\s*GiB")
SGLANG_POOL = re.compile(
    r"KV Cache is allocated\.\s*#tokens:\s*(\d+),\s*"
    r"(?:K size:\s*([\d.]+)\s*GB,\s*V size:\s*([\d.]+)\s*GB|KV size:\s*([\d.]+)\s*GB)"
)
SGLANG_TOKENS = re.compile(r"max_total_num_tokens=(\d+)")
LLAMA_CPP_CACHE = re.compile(
    r"llama_kv_cache\w*:\s*size\s*=\s*([\d.]+)\s*MiB\s*\(\s*(\d+)\s*cells,\s*(\d+)\s*layers"
)
LLAMA_CPP_OLD_CACHE = re.compile(r"KV self size\s*=\s*([\d.]+)\s*MiB")
LLAMA_CPP_CONTEXT = re.compile(r"\bn_ctx\s*=\s*(\d+)")


@dataclass(frozen=True)
class EngineCache:
    """One cache a llama.cpp log lists: its cells (tokens it holds), layers and bytes."""

    cells: int | None
    layers: int | None
    bytes: float


@dataclass(frozen=True)
class EngineLog:
    """The KV pool an engine reported; each part None when the log has no such line."""

    engine: str
    tokens: int | None  # tokens the pool holds (llama.cpp: the first cache's cells)
    concurrency: float | None  # vLLM only
    tokens_per_request: int | None  # vLLM only
    memory_bytes: float | None  # the pool's bytes as the log states them
    caches: tuple[EngineCache, ...] = ()  # llama.cpp only, in the log's order


def _whole(found: str) -> int:
    return int(found.replace(",", ""))


def _vllm(text: str) -> EngineLog | None:
    tokens = VLLM_TOKENS.search(text)
    concurrency = VLLM_CONCURRENCY.search(text)
    if tokens is None and concurrency is None:
        return None
    memory = VLLM_MEMORY.search(text)
    return EngineLog(
        engine=VLLM,
        tokens=_whole(tokens.group(1)) if tokens else None,
        concurrency=float(concurrency.group(2)) if concurrency else None,
        tokens_per_request=_whole(concurrency.group(1)) if concurrency else None,
        memory_bytes=float(memory.group(1)) * GIB if memory else None,
    )


def _sglang(text: str) -> EngineLog | None:
    pool = SGLANG_POOL.search(text)
    total = SGLANG_TOKENS.search(text)
    if pool is None and total is None:
        return None
    memory = None
    if pool is not None:
        k, v, latent = pool.group(2), pool.group(3), pool.group(4)
        memory = (float(latent) if latent is not None else float(k) + float(v)) * GIB
    tokens = int(pool.group(1)) if pool is not None else int(total.group(1))  # type: ignore[union-attr]
    return EngineLog(SGLANG, tokens, None, None, memory)


def _llama_cpp(text: str) -> EngineLog | None:
    caches = tuple(
        EngineCache(cells=int(cells), layers=int(layers), bytes=float(mib) * MIB)
        for mib, cells, layers in LLAMA_CPP_CACHE.findall(text)
    )
    if not caches:
        old = LLAMA_CPP_OLD_CACHE.search(text)
        if old is None:
            return None
        context = LLAMA_CPP_CONTEXT.search(text)
        caches = (EngineCache(int(context.group(1)) if context else None, None, float(old.group(1)) * MIB),)
    return EngineLog(
        engine=LLAMA_CPP,
        tokens=caches[0].cells,
        concurrency=None,
        tokens_per_request=None,
        memory_bytes=sum(cache.bytes for cache in caches),
        caches=caches,
    )


# What a log's numbers are held to, by what they count: "tokens" (a pool's tokens, a cache's
# cells, a request's length), "memory_gb" (the pool's bytes ÷ 10⁹), "concurrency" and "layers".
# The caller passes each as (most, what that bound is), from the typed fields' declarations.
LogBounds = Mapping[str, tuple[float, str]]


_COUNTED = {
    "tokens": "token count",
    "memory_gb": "KV memory (GB)",
    "concurrency": "concurrency",
    "layers": "layer count",
}


def _shown(value: float) -> str:
    if isinstance(value, int) and value >= 10**40:
        return f"{len(str(value)):,} digits long"  # the reader refuses more than 4,300
    return f"of {value:,.0f}" if math.isfinite(value) else "too large to read"


def _check_bounds(log: EngineLog, bounds: LogBounds) -> None:
    counts = {
        "tokens": [log.tokens, log.tokens_per_request, *(cache.cells for cache in log.caches)],
        "memory_gb": [None if log.memory_bytes is None else log.memory_bytes / 1e9],
        "concurrency": [log.concurrency],
        "layers": [cache.layers for cache in log.caches],
    }
    for kind, (most, what) in bounds.items():
        for value in counts[kind]:
            if value is not None and not value <= most:
                raise ParamError(
                    "engine_log",
                    f"engine_log: a {_COUNTED[kind]} {_shown(value)} is more than felab reads (at most "
                    f"{most:,.0f}, {what})",
                )


def read_engine_log(text: str, bounds: LogBounds | None = None) -> EngineLog:
    """The KV lines of a vLLM, SGLang or llama.cpp start-up log (the first engine whose lines it
    has), each number within ``bounds``; ``ParamError`` naming ``engine_log`` if it has none, or a
    number it cannot read or that is out of bounds."""
    for engine, reader in ((VLLM, _vllm), (SGLANG, _sglang), (LLAMA_CPP, _llama_cpp)):
        try:
            found = reader(text)
        except ValueError:  # "1.2.3 GiB", or a number past Python's 4,300 digits
            raise ParamError(
                "engine_log", f"engine_log has a {engine} KV line whose number cannot be read"
            ) from None
        if found is not None:
            _check_bounds(found, bounds or {})
            return found
    raise ParamError(
        "engine_log",
        "engine_log has no KV cache line felab reads: paste the start-up lines with vLLM's 'GPU KV "
        "cache size: N tokens' or 'Maximum concurrency for N tokens per request: Xx', SGLang's 'KV "
        "Cache is allocated. #tokens: N, ...' or 'max_total_num_tokens=N', or llama.cpp's "
        "'llama_kv_cache: size = X MiB (N cells, L layers, ...)'",
    )
