"""Lesson 06's prefix-cache run over HTTP against any OpenAI-compatible server: what it sends
(:class:`PrefixCacheSetup`: a shared part and a varying part, in either order), its requests one
after another through the sweep's client (felab_sim/engine/sweep/loadgen.py), each asking for
usage, and what it measured (:class:`PrefixCacheRun`: the cold request against the warm ones).
Pure asyncio and httpx, no Django.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median
from typing import Any, Literal

from ..core.params import ParamError
from .loadgen import DEFAULT_TIMEOUT_S, LoadgenError, SweepClient
from .prefix_cache import repeat_cached_tokens
from .prompts import OUTPUT_MAX, OUTPUT_MIN
from .sweep_params import ServerParams

__all__ = [
    "PREFIX_ORDERS",
    "PrefixCacheRequest",
    "PrefixCacheRun",
    "PrefixCacheSetup",
    "measure_prefix_cache",
    "run_prefix_cache",
]

Order = Literal["shared-first", "variable-first"]
PREFIX_ORDERS: tuple[Order, ...] = ("shared-first", "variable-first")
MAX_PROMPT_CHARS = 400_000  # well under the practice server's 1 MiB body limit
MAX_PREFIX_REQUESTS = 100
MAX_PREFIX_MAX_TOKENS = 256

# The shared part reads like an agent's preamble (the course's example: instructions, tool
# definitions, a repeated policy); only its length matters to the cache.
_PREAMBLE = (
    "You are a support agent. Tools: search_docs(query) finds documentation; get_ticket(id) "
    "reads a ticket; refund(order_id, amount) issues a refund; escalate(team) hands over. "
    "Policy: answer briefly, cite the docs, never promise dates, keep personal data private. "
)
_QUESTION = "Why does the first token take longer than the rest, and what would make it faster? "
# Little-endian digits, so request indexes differ from their first character on.
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _differs_early(i: int) -> str:
    digits = _DIGITS[i % len(_DIGITS)]
    i //= len(_DIGITS)
    while i:
        digits += _DIGITS[i % len(_DIGITS)]
        i //= len(_DIGITS)
    return digits


def _text_of(chars: int, opening: str, filler: str) -> str:
    if chars <= 0:
        return ""
    text = opening + filler * (max(0, chars - len(opening)) // len(filler) + 1)
    return text[:chars]


@dataclass(frozen=True)
class PrefixCacheSetup:
    """What lesson 06 sends: a shared part repeated by every request and a part that varies.

    ``order`` puts the shared part first (``[shared][variable]``, the cache-friendly layout) or
    the variable part first (``[variable][shared]``, one early change: nothing is reused).
    The names match the ``prefix-cache`` calculator's parameters.
    """

    prefix_chars: int = 12_120
    suffix_chars: int = 80
    order: Order = "shared-first"
    requests: int = 12
    max_tokens: int = 48

    def __post_init__(self) -> None:
        for name, low, high in (
            ("prefix_chars", 0, MAX_PROMPT_CHARS),
            ("suffix_chars", 0, MAX_PROMPT_CHARS),
            ("requests", 2, MAX_PREFIX_REQUESTS),
            ("max_tokens", 1, MAX_PREFIX_MAX_TOKENS),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ParamError(name, f"{name} must be an integer from {low} to {high} (got {value!r})")
        if self.prefix_chars + self.suffix_chars < 1:
            raise ParamError("prefix_chars", "prefix_chars and suffix_chars add up to no prompt at all")
        if self.prefix_chars + self.suffix_chars > MAX_PROMPT_CHARS:
            raise ParamError(
                "prefix_chars", f"prefix_chars + suffix_chars must be at most {MAX_PROMPT_CHARS}"
            )
        if self.order not in PREFIX_ORDERS:
            raise ParamError("order", f"order must be one of {', '.join(PREFIX_ORDERS)} (got {self.order!r})")

    def expected_seconds(self, server: ServerParams | None = None) -> float:
        """How long the run should take against a practice server with ``server``'s rules: the
        first request's whole prefill, each repeat's uncached part (whole blocks of the unchanged
        start are reused), and each reply's decode steps (one request at a time, so no step is
        slowed by another). For queue estimates and limits."""
        server = server if server is not None else ServerParams()
        prompt, cached = repeat_cached_tokens(
            self.prefix_chars, self.suffix_chars, self.order == "shared-first"
        )
        prefill_ms = server.prefill_ms(prompt) + (self.requests - 1) * server.prefill_ms(prompt - cached)
        # A reply is min(max_tokens, 60 to 200 tokens drawn per prompt): the middle of that range.
        reply_tokens = min(self.max_tokens, (OUTPUT_MIN + OUTPUT_MAX) / 2)
        decode_ms = self.requests * reply_tokens * server.step_ms
        return (prefill_ms + decode_ms) / 1000.0

    def prompts(self, run_id: str) -> list[str]:
        """The run's prompts. ``run_id`` opens the shared part, so a run never finds the blocks
        of an earlier one and its first request is really cold."""
        shared = _text_of(self.prefix_chars, f"[run {run_id}] ", _PREAMBLE)
        prompts = []
        for i in range(self.requests):
            variable = _text_of(self.suffix_chars, f"{_differs_early(i)} Q{i}: ", _QUESTION)
            prompts.append(shared + variable if self.order == "shared-first" else variable + shared)
        return prompts


@dataclass(frozen=True)
class PrefixCacheRequest:
    """One request of a run: its time to first token, and the usage the server reported."""

    ttft_ms: float
    prompt_tokens: int | None
    cached_tokens: int | None


@dataclass(frozen=True)
class PrefixCacheRun:
    """A measured run: the first request (cold) against the median of the others (warm)."""

    setup: PrefixCacheSetup
    requests: tuple[PrefixCacheRequest, ...]

    @property
    def ttft_cold_ms(self) -> float:
        return self.requests[0].ttft_ms

    @property
    def ttft_warm_ms(self) -> float:
        return float(median(r.ttft_ms for r in self.requests[1:]))

    @property
    def speedup(self) -> float | None:
        return self.ttft_cold_ms / self.ttft_warm_ms if self.ttft_warm_ms > 0 else None

    @property
    def prompt_tokens(self) -> int | None:
        return self.requests[0].prompt_tokens

    @property
    def cached_tokens(self) -> int | None:
        """Cached tokens of the warm requests (their median), None if the server reports none."""
        reported = [r.cached_tokens for r in self.requests[1:] if r.cached_tokens is not None]
        return int(median(reported)) if reported else None

    def as_dict(self) -> dict[str, object]:
        """The calculator's output keys, measured, then every request."""

        def rounded(x: float | None) -> float | None:
            return None if x is None else round(x, 1)

        prompt, cached = self.prompt_tokens, self.cached_tokens
        return {
            "params": {
                "prefix_chars": self.setup.prefix_chars,
                "suffix_chars": self.setup.suffix_chars,
                "order": self.setup.order,
                "requests": self.setup.requests,
                "max_tokens": self.setup.max_tokens,
            },
            "prompt_tokens": prompt,
            "cached_tokens": cached,
            "uncached_tokens": None if prompt is None or cached is None else prompt - cached,
            "ttft_cold_ms": rounded(self.ttft_cold_ms),
            "ttft_warm_ms": rounded(self.ttft_warm_ms),
            "speedup": None if self.speedup is None else round(self.speedup, 2),
            "requests": [
                {
                    "ttft_ms": rounded(r.ttft_ms),
                    "prompt_tokens": r.prompt_tokens,
                    "cached_tokens": r.cached_tokens,
                }
                for r in self.requests
            ],
        }


def _usage_counts(usage: dict[str, Any] | None) -> tuple[int | None, int | None]:
    """prompt_tokens and prompt_tokens_details.cached_tokens, each None where not reported."""
    if not usage:
        return None, None
    prompt = usage.get("prompt_tokens")
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return (
        prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None,
        cached if isinstance(cached, int) and not isinstance(cached, bool) else None,
    )


async def measure_prefix_cache(
    base_url: str,
    setup: PrefixCacheSetup | None = None,
    *,
    model: str | None = None,
    api_key: str | None = None,
    on_request: Callable[[int, int], None] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> PrefixCacheRun:
    """Lesson 06's run: ``setup.requests`` streamed requests one after another, as an agent sends
    them, each asking for usage so the server can say how much of the prompt it found cached.

    ``on_request(k, n)`` is called as the k-th of the n requests (k from 1) finishes.
    A request without a first token is an error: TTFT is what the run measures.
    """
    setup = setup if setup is not None else PrefixCacheSetup()
    run_id = uuid.uuid4().hex[:12]
    measured: list[PrefixCacheRequest] = []
    async with SweepClient(base_url, model=model, api_key=api_key, timeout_s=timeout_s) as client:
        prompts = setup.prompts(run_id)
        for k, prompt in enumerate(prompts, start=1):
            timing, usage = await client.stream_chat_usage(prompt, setup.max_tokens)
            if not timing.chunk_times:
                raise LoadgenError(
                    f"{client.base_url}: a reply streamed no content, so it has no first token"
                )
            prompt_tokens, cached_tokens = _usage_counts(usage)
            measured.append(
                PrefixCacheRequest(
                    (timing.chunk_times[0] - timing.sent) * 1000.0, prompt_tokens, cached_tokens
                )
            )
            if on_request is not None:
                on_request(k, len(prompts))
    return PrefixCacheRun(setup=setup, requests=tuple(measured))


def run_prefix_cache(
    base_url: str,
    setup: PrefixCacheSetup | None = None,
    *,
    model: str | None = None,
    api_key: str | None = None,
    on_request: Callable[[int, int], None] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> PrefixCacheRun:
    """:func:`measure_prefix_cache` for synchronous callers."""
    return asyncio.run(
        measure_prefix_cache(
            base_url, setup, model=model, api_key=api_key, on_request=on_request, timeout_s=timeout_s
        )
    )
