"""A step's load: one replica's batch in one step, reduced to what pricing it needs
(:class:`StepLoad`): a decode step's, a prompt's prefill, and several sequences' in one mixed step.
Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepLoad:
    """One replica's batch in one step, reduced to what the cost needs."""

    tokens: int  # tokens computed this step
    sampled: int  # sequences that produce a token (the output head runs for these only)
    kv_read_tokens: int  # Σ context each sequence attends to (full layers)
    kv_read_sliding_tokens: int  # the same, capped at the sliding window
    attention_pairs: float  # Σ query tokens × context they attend (full layers)
    attention_sliding_pairs: float
    # Of attention_pairs, those of sequences decoding one token (MLA prices them absorbed).
    decode_pairs: float = 0.0


def decode_load(batch: int, context: int, window: int | None = None) -> StepLoad:
    """One decode step of ``batch`` sequences, each attending to ``context`` tokens."""
    sliding = context if window is None else min(context, window)
    return StepLoad(
        batch, batch, batch * context, batch * sliding, batch * context, batch * sliding, batch * context
    )


def prefill_load(prompt: int, window: int | None = None) -> StepLoad:
    """The prefill of one ``prompt``-token prompt in one step: causal, P (P + 1) / 2 pairs."""
    pairs = prompt * (prompt + 1) / 2
    if window is None or prompt <= window:
        return StepLoad(prompt, 1, prompt, prompt, pairs, pairs)
    sliding = window * (window + 1) / 2 + (prompt - window) * window
    return StepLoad(prompt, 1, prompt, window, pairs, sliding)


def combined(*loads: StepLoad) -> StepLoad:
    """Several sequences' work in one step (a mixed step: decodes beside a prompt's prefill)."""
    return StepLoad(
        sum(load.tokens for load in loads),
        sum(load.sampled for load in loads),
        sum(load.kv_read_tokens for load in loads),
        sum(load.kv_read_sliding_tokens for load in loads),
        sum(load.attention_pairs for load in loads),
        sum(load.attention_sliding_pairs for load in loads),
        sum(load.decode_pairs for load in loads),
    )
