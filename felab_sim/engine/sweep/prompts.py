"""The sweep's requests as lesson 03 defines them: prompts, their token counts, reply lengths.

Pure Python. Shared by the simulator, the practice server (which counts and answers the same
way) and the load generator (which sends the same prompts).
"""

from __future__ import annotations

import random
from functools import lru_cache

TOPICS = (
    "caching",
    "batching",
    "quantization",
    "attention",
    "tokenizers",
    "GPUs",
    "speculation",
    "MoE",
)
# Shorter than one cache block, so it warms nothing a sweep prompt could reuse; the sweep
# sends it to each fresh server only to mirror the course's procedure.
WARMUP_PROMPT = "Warm-up: reply with one word."

# A prompt's tokens are its characters ÷ 4; the prefix cache works in blocks of 64 of them.
BLOCK_TOKENS = 64
CHARS_PER_TOKEN = 4
BLOCK_CHARS = BLOCK_TOKENS * CHARS_PER_TOKEN
OUTPUT_MIN = 60
OUTPUT_MAX = 200


def tokens_in(chars: int) -> int:
    """The practice server's token count of ``chars`` characters: 4 a token, at least one."""
    return max(1, chars // CHARS_PER_TOKEN)


def prompt_tokens(text: str) -> int:
    return tokens_in(len(text))


def output_tokens(prompt_text: str, max_tokens: int) -> int:
    return min(max_tokens, random.Random(prompt_text).randint(OUTPUT_MIN, OUTPUT_MAX))


def sweep_prompt(i: int) -> str:
    return f"#{i} Summarise the idea of {TOPICS[i % len(TOPICS)]} for a new engineer in 80 words."


def requests_at_level(conc: int) -> int:
    return max(12, 3 * conc)


@lru_cache(maxsize=4096)
def sweep_prompt_and_length(i: int) -> tuple[str, int]:
    # Seeding random.Random with a string hashes it (SHA-512), a few microseconds each;
    # every level and every sweep reuses prompts 0.., so remember the draws.
    text = sweep_prompt(i)
    return text, random.Random(text).randint(OUTPUT_MIN, OUTPUT_MAX)
