"""The KV pool an engine carves out at start-up, and the block accounting of its requests.

vLLM sizes the pool from the memory left once the weights and a profiled reserve are placed:
available = total × gpu_memory_utilization − weights − the non-KV reserve, and
num_blocks = available // page_size // num_layers (vllm-project/vllm,
vllm/v1/core/kv_cache_utils.py, get_num_blocks; the page of one layer and one block is
2 × block_size × KV heads × head size × bytes, vllm/v1/kv_cache_interface.py). felab cannot
profile, so the reserve is a stated number (``DEFAULT_OVERHEAD_BYTES``).

Blocks are counted across all layers, one block holding ``block_size`` tokens on every layer.
Full and MLA layers keep every token; a sliding layer keeps its window (plus the block that
straddles it), so a request's bytes are full-layer bytes × its blocks + sliding-layer bytes ×
min(its blocks, the window's blocks).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..models.model_kv_cache import kv_bytes_per_token_per_layer
from ..models.model_shapes import AttentionKind, ModelShape

GIB = 2**30
# The memory vLLM keeps besides weights and KV: the CUDA context and other non-torch memory,
# the CUDA graphs it captures, and the activation peak of its profiling run at
# max_num_batched_tokens. One number for every GPU, stated, not profiled: 1.2 GiB. Only one
# anchor run records its pool (LLMServingSim's RTX 4090 run, Llama-3.1-8B, 2,048 tokens a step:
# 2,588 blocks), where the reserve the engine kept works out at 1.15 GiB; 1.2 GiB is that number
# rounded up to one decimal, so that check is not independent of this number.
DEFAULT_OVERHEAD_BYTES = int(1.2 * GIB)


@dataclass(frozen=True)
class PoolSize:
    """How the pool was sized on one GPU, every term in bytes."""

    device_bytes: int
    gpu_memory_utilization: float
    weight_bytes: float  # this GPU's share of the weights
    overhead_bytes: int
    block_size: int
    block_bytes: float  # one block on every layer of this GPU
    num_blocks: int

    @property
    def requested_bytes(self) -> float:
        return self.device_bytes * self.gpu_memory_utilization

    @property
    def available_bytes(self) -> float:
        return self.requested_bytes - self.weight_bytes - self.overhead_bytes

    @property
    def kv_tokens(self) -> int:
        """What vLLM logs as 'GPU KV cache size: N tokens' (num_gpu_blocks × block_size)."""
        return self.num_blocks * self.block_size


@dataclass(frozen=True)
class BlockCost:
    """Bytes of one block, split by what the layers keep, on one GPU."""

    block_size: int
    full_bytes: float  # full and MLA layers: one block per block_size tokens of context
    sliding_bytes: float  # sliding layers: at most window_blocks blocks
    window_blocks: int

    @property
    def block_bytes(self) -> float:
        return self.full_bytes + self.sliding_bytes

    def blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def bytes_for(self, tokens: int) -> float:
        """The bytes a sequence of ``tokens`` holds: every layer's blocks for its context."""
        blocks = -(-tokens // self.block_size)
        return self.full_bytes * blocks + self.sliding_bytes * min(blocks, self.window_blocks)


def block_cost(
    shape: ModelShape, block_size: int, kv_bytes_per_value: float, tensor_parallel: int = 1
) -> BlockCost:
    full = sliding = 0.0
    window_blocks = 0
    for layer in shape.layer_attention:
        per_token = kv_bytes_per_token_per_layer(shape, layer, kv_bytes_per_value, tensor_parallel)
        if layer.kind is AttentionKind.SLIDING:
            sliding += per_token * block_size
            assert layer.window is not None
            window_blocks = max(window_blocks, math.ceil(layer.window / block_size) + 1)
        else:
            full += per_token * block_size
    return BlockCost(block_size, full, sliding, window_blocks)


def size_pool(
    device_bytes: int,
    gpu_memory_utilization: float,
    weight_bytes_per_gpu: float,
    cost: BlockCost,
    overhead_bytes: int = DEFAULT_OVERHEAD_BYTES,
) -> PoolSize:
    """num_blocks = (device × utilization − weights − overhead) // bytes of one block on every
    layer: vLLM's two floor divisions (by the page, then by the layers) in one."""
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError("gpu_memory_utilization must be in (0, 1]")
    available = device_bytes * gpu_memory_utilization - weight_bytes_per_gpu - overhead_bytes
    num_blocks = max(0, int(available // cost.block_bytes))
    return PoolSize(
        device_bytes=device_bytes,
        gpu_memory_utilization=gpu_memory_utilization,
        weight_bytes=weight_bytes_per_gpu,
        overhead_bytes=overhead_bytes,
        block_size=cost.block_size,
        block_bytes=cost.block_bytes,
        num_blocks=num_blocks,
    )


BlockHash = tuple[str, int]


class BlockPool:
    """The blocks of one replica, in bytes, with prefix caching by block.

    A request holds private bytes (its blocks no other request can share) and a list of hashed
    blocks: whole blocks of a prefix it shares with other requests (``prefix_key``), which stay
    cached when the last holder lets go and are evicted least recently used first when the pool
    needs room, as vLLM's free queue does (vllm/v1/core/block_pool.py). A hashed block is
    counted at a full block's bytes on every layer.
    """

    def __init__(self, capacity_blocks: int, cost: BlockCost, prefix_caching: bool = True) -> None:
        self.cost = cost
        self.capacity = capacity_blocks * cost.block_bytes
        self.capacity_blocks = capacity_blocks
        self.prefix_caching = prefix_caching
        self.private_bytes = 0.0
        self.in_use: dict[BlockHash, int] = {}  # hashed block → holders
        self.cached_free: OrderedDict[BlockHash, None] = OrderedDict()  # evictable, oldest first
        # Cached blocks found by lookups, counted against the run's work budget (simulate.py): a
        # waiting request looks its cached prefix up again every step it waits.
        self.found = 0

    @property
    def used_bytes(self) -> float:
        return self.private_bytes + len(self.in_use) * self.cost.block_bytes

    @property
    def free_bytes(self) -> float:
        """Free, counting evictable cached blocks as free (as vLLM's usage number does)."""
        return self.capacity - self.used_bytes

    @property
    def usage(self) -> float:
        return self.used_bytes / self.capacity if self.capacity else 1.0

    def _room(self) -> float:
        return self.capacity - self.used_bytes - len(self.cached_free) * self.cost.block_bytes

    def reserve(self, extra_bytes: float) -> bool:
        """Take ``extra_bytes`` of private blocks, evicting cached blocks if need be."""
        if extra_bytes <= 0:
            return True
        if extra_bytes > self.free_bytes + 1e-6:
            return False
        while self._room() + 1e-6 < extra_bytes:
            self.cached_free.popitem(last=False)
        self.private_bytes += extra_bytes
        return True

    def hits(self, request: Any, block_size: int, max_blocks: int) -> list[BlockHash]:
        """The leading blocks of ``request`` that are cached (at most ``max_blocks``)."""
        if not self.prefix_caching:
            return []
        found = []
        for index in range(max_blocks):
            block = request.block_hash(index, block_size)
            if block not in self.in_use and block not in self.cached_free:
                break
            found.append(block)
        self.found += len(found)
        return found

    def take_hits(self, hashes: list[BlockHash]) -> None:
        for block in hashes:
            if block in self.cached_free:
                del self.cached_free[block]
                self.in_use[block] = 1
            else:
                self.in_use[block] += 1

    def publish(self, block: BlockHash) -> bool:
        """A request computed a whole prefix block: it becomes shareable. True when the request's
        private copy was turned into the shared one, False when another's copy was shared."""
        if block in self.in_use:
            self.in_use[block] += 1
            return False
        if block in self.cached_free:
            del self.cached_free[block]
            self.in_use[block] = 1
            return False
        self.in_use[block] = 1
        return True

    def release(self, private_bytes: float, hashes: list[BlockHash]) -> None:
        self.private_bytes -= private_bytes
        if self.private_bytes < 1e-6:
            self.private_bytes = 0.0
        # Last block first, so the tail is evicted before the head and a prefix stays findable
        # longest (vLLM frees a request's blocks in reverse order for this reason:
        # vllm/v1/core/single_type_kv_cache_manager.py, free).
        for block in reversed(hashes):
            holders = self.in_use[block] - 1
            if holders:
                self.in_use[block] = holders
            else:
                del self.in_use[block]
                if self.prefix_caching:
                    self.cached_free[block] = None
