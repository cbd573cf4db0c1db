"""One replica's scheduler, as vLLM V1's (vllm-project/vllm, vllm/v1/core/sched/scheduler.py,
Scheduler.schedule), and its requests.

vLLM has no prefill or decode phase: each request has ``num_tokens`` (prompt + output so far)
and ``num_computed_tokens``, and a step schedules up to their difference within a token budget.
A decode is the difference 1; an unfinished prompt takes what the budget leaves (chunked
prefill). Each step:

1. running requests first, in order: min(num_tokens − num_computed, budget) each; when their
   blocks do not fit, the newest running request is preempted (``self.running.pop()``): its
   blocks are freed, its computed tokens set to 0 (recompute) and it goes back to the front of
   the waiting queue; if the one preempted is the one being scheduled, the running pass stops;
2. then, only if nothing was preempted this step, waiting requests first come first served,
   while budget remains, fewer than ``max_num_seqs`` run and the first one's blocks fit (it is
   not skipped: the queue waits). A new request reserves blocks for its whole prompt at once
   (vLLM 0.19's ``scheduler_reserve_full_isl``, true in the anchor runs' meta.json); a cached
   prefix counts as computed (whole blocks, leaving at least one prompt token to compute).

With ``prefill_first`` (SGLang's order, servers.py) a step is either prompts or decodes: an
unfinished prompt's next chunk and the waiting requests that fit, within the token budget (the
chunked-prefill size), while there are any; else one decode token of every running request.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .kv_pool import BlockHash, BlockPool


@dataclass
class Request:
    request_id: int
    arrival: float
    prompt_tokens: int
    output_tokens: int
    prefix_key: str | None = None  # requests with the same key share their first prefix_tokens
    prefix_tokens: int = 0
    sent: float | None = None  # when the client sent it, if before ``arrival`` (a server's front end)
    # Progress.
    generated: int = 0
    num_computed: int = 0
    private_bytes: float = 0.0
    shared: list[BlockHash] = field(default_factory=list)
    published: int = 0  # leading prefix blocks this request holds as shared blocks
    first_token: float | None = None
    last_token: float | None = None
    preemptions: int = 0
    cached_tokens: int = 0  # prompt tokens found in the prefix cache, summed over admissions

    @property
    def num_tokens(self) -> int:
        return self.prompt_tokens + self.generated

    @property
    def finished(self) -> bool:
        return self.generated >= self.output_tokens

    def block_hash(self, index: int, block_size: int) -> BlockHash:
        """The identity of this request's ``index``-th block, as vLLM's chained hash of its
        tokens: the same for every request inside a shared prefix, its own beyond it (so a
        preempted request can still find its blocks when it comes back)."""
        if self.prefix_key is not None and index < min(self.prefix_tokens, self.prompt_tokens) // block_size:
            return (self.prefix_key, index)
        return (f"#{self.request_id}", index)


@dataclass
class Scheduled:
    request: Request
    tokens: int
    context_before: int


class Replica:
    """The queues and the KV pool of one engine (one data-parallel rank)."""

    def __init__(
        self, pool: BlockPool, max_num_seqs: int, max_num_batched_tokens: int, prefill_first: bool = False
    ) -> None:
        if max_num_seqs < 1 or max_num_batched_tokens < 1:
            raise ValueError("max_num_seqs and max_num_batched_tokens must be at least 1")
        self.pool = pool
        self.prefill_first = prefill_first
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.running: list[Request] = []
        self.waiting: deque[Request] = deque()
        self.preemptions = 0
        # Why the last step admitted no more of the waiting queue: "blocks", "seqs" or "budget"
        # (None: nothing was left waiting). The page's binding-limit sentence counts these.
        self.stopped_by: str | None = None

    @property
    def block_size(self) -> int:
        return self.pool.cost.block_size

    def _held(self, request: Request) -> float:
        return request.private_bytes + len(request.shared) * self.pool.cost.block_bytes

    def _grow(self, request: Request, tokens: int) -> bool:
        """Give ``request`` the blocks to hold ``tokens`` tokens of context."""
        extra = self.pool.cost.bytes_for(tokens) - self._held(request)
        if not self.pool.reserve(extra):
            return False
        if extra > 0:
            request.private_bytes += extra
        return True

    def _free(self, request: Request) -> None:
        self.pool.release(request.private_bytes, request.shared)
        request.private_bytes = 0.0
        request.shared = []
        request.published = 0

    def _preempt(self, victim: Request) -> None:
        self._free(victim)
        victim.num_computed = 0
        victim.preemptions += 1
        self.preemptions += 1
        self.waiting.appendleft(victim)

    def schedule(self) -> list[Scheduled]:
        reason = None
        if self.prefill_first:
            prompts = self._prompts_only()
            if prompts:
                return prompts
            reason = self.stopped_by  # why nothing waiting could start: this step decodes
        budget = self.max_num_batched_tokens
        batch: list[Scheduled] = []
        preempted = False
        index = 0
        while index < len(self.running) and budget > 0:
            request = self.running[index]
            tokens = min(request.num_tokens - request.num_computed, budget)
            scheduled = True
            while not self._grow(request, request.num_computed + tokens):
                victim = self.running.pop()
                self._preempt(victim)
                preempted = True
                if victim is request:
                    scheduled = False
                    break
            if not scheduled:
                break
            batch.append(Scheduled(request, tokens, request.num_computed))
            budget -= tokens
            index += 1
        if preempted:
            self.stopped_by = "blocks"
            return batch
        self.stopped_by = None
        if self.prefill_first:
            self.stopped_by = reason if self.waiting else None
            return batch
        return batch + self._admit(budget)

    def _prompts_only(self) -> list[Scheduled]:
        """SGLang's prefill batch: the unfinished prompt's next chunk, then waiting requests that
        fit; empty when there is neither (the step decodes)."""
        budget = self.max_num_batched_tokens
        batch: list[Scheduled] = []
        for request in self.running:
            if budget <= 0:
                break
            left = request.num_tokens - request.num_computed
            if left <= 1:
                continue  # decoding: one token, in a decode step
            tokens = min(left, budget)
            if not self._grow(request, request.num_computed + tokens):
                return []  # no room for its next chunk: decode, and let finishing requests free blocks
            batch.append(Scheduled(request, tokens, request.num_computed))
            budget -= tokens
        self.stopped_by = None
        return batch + self._admit(budget)

    def _admit(self, budget: int) -> list[Scheduled]:
        """Waiting requests first come first served, while the budget, the sequences and the
        blocks allow (the first that does not fit stops the queue)."""
        batch: list[Scheduled] = []
        while self.waiting:
            if budget <= 0:
                self.stopped_by = "budget"
                break
            if len(self.running) >= self.max_num_seqs:
                self.stopped_by = "seqs"
                break
            request = self.waiting[0]
            # At least one token is computed, so the step samples the next output.
            hashes = self.pool.hits(request, self.block_size, (request.num_tokens - 1) // self.block_size)
            hits = len(hashes)
            hit_bytes = hits * self.pool.cost.block_bytes
            need = self.pool.cost.bytes_for(request.num_tokens) - hit_bytes
            revived = sum(1 for block in hashes if block in self.pool.cached_free)
            if need > self.pool.free_bytes - revived * self.pool.cost.block_bytes + 1e-6:
                self.stopped_by = "blocks"
                break
            self.waiting.popleft()
            self.pool.take_hits(hashes)
            request.shared = hashes
            request.published = hits
            request.num_computed = hits * self.block_size
            request.cached_tokens += request.num_computed
            self.pool.reserve(need)
            request.private_bytes = need
            tokens = min(request.num_tokens - request.num_computed, budget)
            batch.append(Scheduled(request, tokens, request.num_computed))
            self.running.append(request)
            budget -= tokens
        return batch

    def complete(self, batch: list[Scheduled], now: float) -> list[Request]:
        """The step ended at ``now``: advance each scheduled request; return those finished."""
        done = []
        for item in batch:
            request = item.request
            request.num_computed += item.tokens
            self._publish_prefix(request)
            if request.num_computed < request.num_tokens:
                continue  # a prompt chunk short of the end samples nothing
            request.generated += 1
            if request.first_token is None:
                request.first_token = now
            request.last_token = now
            if request.finished:
                done.append(request)
        if done:
            finished = {id(r) for r in done}
            self.running = [r for r in self.running if id(r) not in finished]
            for request in done:
                self._free(request)
        return done

    def _publish_prefix(self, request: Request) -> None:
        """Whole blocks now computed become cached blocks (vLLM caches full blocks only)."""
        if not self.pool.prefix_caching:
            return
        computed = request.num_computed // self.block_size
        block_bytes = self.pool.cost.block_bytes
        while request.published < computed:
            block = request.block_hash(request.published, self.block_size)
            self.pool.publish(block)
            # Its private copy now lives on as the cached block (or is dropped for another's).
            request.private_bytes -= block_bytes
            self.pool.private_bytes -= block_bytes
            request.shared.append(block)
            request.published += 1
