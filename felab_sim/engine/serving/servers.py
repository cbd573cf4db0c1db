"""What a serving engine adds around its steps, per engine: how it mixes prompts with decodes,
which decode batch sizes it runs as CUDA graphs, and what each request costs outside the steps.

The engine (simulate.py) takes a :class:`Server` and runs its steps the engine's way:

- **Scheduling.** vLLM V1 mixes: a step takes the running decodes first and fills what is left
  of ``max_num_batched_tokens`` with prompt chunks (scheduler.py). SGLang runs prompts first and
  apart: while a new request can be admitted (or a chunked prompt is unfinished) its step is a
  prefill batch of up to the chunked-prefill size, and every running decode waits; otherwise a
  decode step of every running request (sgl-project/sglang, python/sglang/srt/managers/
  scheduler.py, ``get_next_batch_to_run``: ``get_new_batch_prefill`` first, the running batch's
  decode only when it returns none; ``--enable-mixed-chunk``, which mixes, is off by default).
- **CUDA graphs.** A step runs a graph captured for a fixed number of tokens: its tokens are
  padded to the next captured size, and the padding's rows go through every product (and the
  router of a mixture of experts). SGLang graphs decode-only steps; vLLM V1 graphs every step up
  to its largest size (a full graph for a decode-only step, piecewise graphs around attention for
  a step with a prompt: vllm-project/vllm, docs/design/cuda_graphs.md). Past the largest size a
  step runs unpadded.
- **Receiving requests.** SGLang's ``--scheduler-recv-interval N`` polls for new requests only
  once its counter reaches N: each decode step adds 1, any other step (a prefill) adds 1,000,
  and an idle loop polls at once (sgl-project/sglang, python/sglang/srt/managers/
  scheduler_recv_skipper.py). A request that reaches the scheduler during decodes waits for the
  next poll: up to N decode steps. vLLM receives before every step.
- **A request's fixed cost**: the API server's HTTP handling, tokenising the prompt, the hand-off
  to the scheduler and streaming the first token back: time a request's TTFT holds that no step
  does. Part of it the front end serves one request at a time (a burst of requests queues for
  it), the rest is a delay. Both are fitted per engine on the fitted group of the published
  serving runs (serving_split.csv), never on the predicted group: ``bench/bench_validation.py
  --fit-serving`` reruns the fit.

A step's own fixed cost (scheduling, sampling, Python) is 0 for both, as calibration.py's
``VLLM_STEP_OVERHEAD_S`` is for vLLM: both engines overlap the CPU's work for the next step with
the GPU's current one (vLLM's ``--async-scheduling``, set in every InferenceX vLLM script;
SGLang's overlap scheduler, on by default since v0.4: lmsys.org/blog/2024-12-04-sglang-v0-4,
"zero-overhead batch scheduler"). Pure Python, no Django.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

VLLM, SGLANG = "vllm", "sglang"

# A request's fixed cost outside the steps, seconds, per engine: the median over the engine's
# fitted runs of the measured median TTFT less felab's median TTFT without it (medians, so the
# few requests that wait far longer, the README's skewed means, do not move it).
# ``bench/bench_validation.py --fit-serving`` prints each run's figure and the median.
# Refit after any change to the step's cost: the figures are what the steps leave unexplained.
REQUEST_FIXED_S = {
    # 9 fitted runs: gpt-oss-120b, TP 4, vLLM 0.13 on H100, H200 and B200 at concurrency 16, each
    # length pair, fitted together with the rate of a grouped product of MXFP4 experts
    # (calibration.FOUR_BIT_GROUPED_SHARE); figures −0.4 to 14.1 ms beside 6 ms one at a time.
    VLLM: 0.0108,
    # 9 fitted runs: DeepSeek-R1, TP 8, SGLang 0.5.5-0.5.6 on H200, B200 and MI300X at concurrency
    # 16, each length pair; figures 73.3 to 462.2 ms (the 8k prompts' 143 to 462) beside 2 ms one
    # at a time.
    SGLANG: 0.1149,
}


# Of that cost, the part a server's front end serves one request at a time (one process
# tokenising and handing over each request in turn), so that a burst of requests queues for it:
# fitted with the delay above on the same runs, the grid of serving_validation.SERIAL_GRID_S
# scored by the squared log error of the runs' mean TTFT.
REQUEST_SERIAL_S = {
    # The same 9 runs: squared log error 0.0735 at 6 ms against 0.116 with none (11 points, 0 to
    # 30, each beside 8 rates of a grouped MXFP4 product: 1.79 at best with the BF16 rate). The
    # part is loosely fixed: 0.082 at 2 ms, 0.112 at 8 ms.
    VLLM: 0.006,
    # The same 9 runs: 5.19 at 2 ms against 5.33 with none (the grid's scores 5.2 to 6.0: SGLang's
    # long-tailed means leave the part poorly fixed).
    SGLANG: 0.002,
}


def vllm_graph_sizes(max_num_seqs: int, max_capture_size: int | None = None) -> tuple[int, ...]:
    """vLLM's CUDA-graph capture sizes (vllm-project/vllm, vllm/config/vllm.py,
    ``set_cudagraph_sizes``): 1, 2, 4, then multiples of 8 below 256, then multiples of 16 up
    to ``max_capture_size``, by default min(2 × max_num_seqs, 512)."""
    largest = max_capture_size or min(2 * max_num_seqs, 512)
    sizes = [1, 2, 4, *range(8, 256, 8), *range(256, largest + 1, 16)]
    return tuple(size for size in sizes if size <= largest)


def sglang_graph_sizes(max_batch: int) -> tuple[int, ...]:
    """SGLang's default decode capture sizes (sgl-project/sglang, python/sglang/srt/
    server_args.py): 1, 2, 4, 8, 12, multiples of 8 from 16 to 256, of 16 from 272 below 512,
    of 32 from 512; those up to the largest batch, and the largest itself."""
    sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), *range(512, max_batch + 1, 32)]
    found = [size for size in sizes if size <= max_batch]
    if max_batch not in found:
        found.append(max_batch)
    return tuple(found)


@dataclass(frozen=True)
class Server:
    """One serving engine's behaviour around its steps (see the module's docstring)."""

    name: str
    prefill_first: bool = False
    graph_sizes: tuple[int, ...] = ()  # ascending; empty: no CUDA graphs priced
    graphs_with_prompts: bool = False  # steps with a prompt run padded graphs too (vLLM)
    request_fixed_s: float = 0.0
    request_serial_s: float = 0.0  # of a request's cost, the part its front end serves one at a time
    recv_interval: int = 1  # decode steps between polls for new requests (SGLang's setting)

    def padded(self, tokens: int, decode_only: bool) -> int:
        """A step's token rows as its CUDA graph runs them."""
        sizes = self.graph_sizes
        if not sizes or tokens > sizes[-1] or not (decode_only or self.graphs_with_prompts):
            return tokens
        return sizes[bisect.bisect_left(sizes, tokens)]


def vllm_server(max_num_seqs: int, max_capture_size: int | None = None) -> Server:
    """vLLM V1 as served: ``max_capture_size`` is ``max-cudagraph-capture-size`` if set."""
    sizes = vllm_graph_sizes(max_num_seqs, max_capture_size)
    return Server(
        VLLM,
        prefill_first=False,
        graph_sizes=sizes,
        graphs_with_prompts=True,
        request_fixed_s=REQUEST_FIXED_S[VLLM],
        request_serial_s=REQUEST_SERIAL_S[VLLM],
    )


def sglang_server(cuda_graph_max_bs: int, recv_interval: int = 1) -> Server:
    """SGLang as served: ``--cuda-graph-max-bs`` and ``--scheduler-recv-interval``."""
    sizes = sglang_graph_sizes(cuda_graph_max_bs)
    return Server(
        SGLANG,
        prefill_first=True,
        graph_sizes=sizes,
        graphs_with_prompts=False,
        request_fixed_s=REQUEST_FIXED_S[SGLANG],
        request_serial_s=REQUEST_SERIAL_S[SGLANG],
        recv_interval=recv_interval,
    )
