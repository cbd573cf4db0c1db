"""The practice server's prefix cache (lesson 06): which prompt blocks it has already read.

Pure Python; the simulator and the practice server share it, so both skip the same prefill.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from .prompts import BLOCK_CHARS, BLOCK_TOKENS, CHARS_PER_TOKEN, prompt_tokens, tokens_in


class PrefixCache:
    """Which 64-token (256-character) prompt blocks the server has seen.

    A block is free when the whole prompt up to the block's end was seen before, so a block is
    keyed by a digest of everything up to its end (chained block by block). Only whole blocks
    count; a prompt's partial tail is always computed. ``max_blocks`` bounds memory for the
    long-running practice server (least recently used blocks go first).
    """

    def __init__(self, max_blocks: int = 65_536) -> None:
        self.max_blocks = max_blocks
        self._blocks: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks)

    def uncached_tokens(self, prompt_text: str) -> int:
        """Tokens that need prefill; records the prompt's whole blocks as seen."""
        tokens = prompt_tokens(prompt_text)
        full = len(prompt_text) // BLOCK_CHARS
        if not full:
            return tokens
        free = 0
        counting = True
        key = b""
        blocks = self._blocks
        for b in range(full):
            start = b * BLOCK_CHARS
            chunk = prompt_text[start : start + BLOCK_CHARS].encode("utf-8", "surrogatepass")
            key = hashlib.blake2b(key + chunk, digest_size=16).digest()
            if key in blocks:
                blocks.move_to_end(key)
                if counting:
                    free += 1
            else:
                counting = False
                blocks[key] = None
        while len(blocks) > self.max_blocks:
            blocks.popitem(last=False)
        return tokens - free * BLOCK_TOKENS


def repeat_cached_tokens(
    prefix_chars: int, suffix_chars: int, shared_first: bool, block_tokens: int = BLOCK_TOKENS
) -> tuple[int, int]:
    """(prompt tokens, tokens a repeat finds cached) for a prompt of a shared part and a changing
    part: only whole blocks of the unchanged start are reused. With the changing part first, a
    repeat differs from its first character on (it repeats whole only when nothing changes)."""
    prompt = tokens_in(prefix_chars + suffix_chars)
    unchanged_chars = prefix_chars if shared_first or suffix_chars == 0 else 0
    block_chars = block_tokens * CHARS_PER_TOKEN
    return prompt, min(prompt, unchanged_chars // block_chars * block_tokens)
