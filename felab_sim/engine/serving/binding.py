"""Which limit binds a run, named from the run's own counters, in one sentence.

When requests waited in a good share of the steps, the limit is the reason the queue stopped most
often (the scheduler records it each step: the first waiting request's KV blocks did not fit, or
``max_num_seqs`` were running, or the step's token budget was spent). Otherwise the engine kept
up with its load and the steps' own time is the limit: bandwidth when reading weights and KV took
longer than the arithmetic, compute when not. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.numbers import format_number
from .run_results import Result
from .simulate import EngineSettings

# Requests waited in at least this share of the steps: the queue's reason binds, not the steps'.
QUEUED_SHARE = 0.2
LIMITS = ("blocks", "seqs", "budget", "bandwidth", "compute")


@dataclass(frozen=True)
class Binding:
    limit: str  # one of LIMITS
    sentence: str

    def as_json(self) -> dict[str, str]:
        return {"limit": self.limit, "sentence": self.sentence}


def _percent(part: int, whole: int) -> str:
    return format_number(100 * part / whole) + "%"


def binding_limit(result: Result, settings: EngineSettings) -> Binding:
    counters = result.counters
    steps = max(counters.steps, 1)
    queued = steps - counters.unqueued_steps
    if queued >= QUEUED_SHARE * steps and counters.waiting_by:
        reason = max(counters.waiting_by, key=lambda name: (counters.waiting_by[name], name))
        share = _percent(counters.waiting_by[reason], steps)
        if reason == "blocks":
            preempted = (
                f", and {result.preemptions} preemptions recomputed requests" if result.preemptions else ""
            )
            kv_tokens = format_number(result.summary.get("kv_tokens", 0))
            return Binding(
                "blocks",
                f"KV blocks bind: in {share} of the steps a request waited because its blocks did not "
                f"fit the {kv_tokens}-token KV pool (KV peaked at "
                f"{format_number(counters.peak_kv_pct)}%){preempted}.",
            )
        if reason == "seqs":
            return Binding(
                "seqs",
                f"Slots bind: in {share} of the steps requests waited while max_num_seqs = "
                f"{settings.max_num_seqs} were running"
                + (" on each replica." if settings.data_parallel > 1 else "."),
            )
        return Binding(
            "budget",
            f"The token budget binds: in {share} of the steps requests waited because the step's "
            f"max_num_batched_tokens = {format_number(settings.max_num_batched_tokens)} were spent.",
        )
    unqueued = max(counters.unqueued_steps, 1)
    compute = counters.compute_bound
    if compute * 2 > unqueued:
        limit, sentence = (
            "compute",
            f"Compute binds: no request waited in {_percent(counters.unqueued_steps, steps)} of the "
            f"steps, and {_percent(compute, unqueued)} of those spent longer on arithmetic than on "
            "reading weights and KV.",
        )
    else:
        limit, sentence = (
            "bandwidth",
            f"Bandwidth binds: no request waited in {_percent(counters.unqueued_steps, steps)} of the "
            f"steps, and {_percent(unqueued - compute, unqueued)} of those spent longer reading "
            "weights and KV than on arithmetic.",
        )
    if counters.waiting_by:
        # Queued now and then: say for what, as the anchor run that waits for slots briefly does.
        reason = max(counters.waiting_by, key=lambda name: (counters.waiting_by[name], name))
        sentence += f" Requests waited briefly ({_percent(queued, steps)} of the steps), {BRIEFLY[reason]}."
    return Binding(limit, sentence)


BRIEFLY = {
    "blocks": "for KV blocks",
    "seqs": "for slots (max_num_seqs)",
    "budget": "for the token budget (max_num_batched_tokens)",
}
