"""Measure one GPU for felab's step-cost model, and write the calibration file it reads.

    python3 tools/measure_gpu.py --out mygpu.jsonl [--steps] [--cpu]

Run by hand on a machine with PyTorch and a CUDA GPU (about a minute); felab itself never
imports it and its tests do not need it. Then ``manage.py engine --calibration mygpu.jsonl``,
``manage.py calc step-time --calibration mygpu.jsonl`` and every calculator that times a step
predict for your GPU (felab_sim/engine/hardware/calibration.py reads the file: one JSON object a line,
``kind`` saying what it is, the format of felab_sim/engine/measured/h200.jsonl).

What it measures, and what felab takes from each:

- ``bandwidth``: a read-only pass (a sum) and a copy over a large bf16 buffer: achieved memory
  bandwidth, ``gbs``;
- ``gemm``: one large square matrix product at bf16 and, where the GPU has it, FP8: achieved
  FLOP/s, ``tflops``;
- ``knee``: one weight matrix (4096 × 14336, bf16) multiplied by B rows as B grows, each in a CUDA
  graph: where a product turns from memory-bound to compute-bound; its smallest batch's time
  beyond its bytes is a kernel's fixed cost;
- ``overhead``: a graph of ten tiny kernels a layer for 32 layers (the kernels vLLM launches in a
  layer, on matrices too small to cost anything): ``step_ms`` is what a step's kernels cost
  beside their bytes and FLOPs (felab reads it as a step's fixed cost when present);
- with ``--steps``, decode steps and prefills of a Llama-3.1-8B-shaped model with random weights,
  for checking predictions (felab never calibrates on these).

``--cpu`` runs small shapes on the CPU: a smoke test of the script, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
import torch.nn.functional as F

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, MLP, VOCAB = 32, 4096, 32, 8, 128, 14336, 128256


class Recorder:
    def __init__(self, path: str, device: str) -> None:
        self.file = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self.device = device
        self.started = time.time()

    def write(self, **row: object) -> None:
        row["t"] = round(time.time() - self.started, 1)
        line = json.dumps(row)
        print(line, flush=True)
        self.file.write(line + "\n")
        self.file.flush()

    def seconds(self, run, repeats: int = 20, warm: int = 3) -> float:
        """Mean seconds of one call of ``run``: CUDA events on a GPU, the clock on the CPU."""
        for _ in range(warm):
            run()
        if self.device == "cpu":
            start = time.perf_counter()
            for _ in range(repeats):
                run()
            return (time.perf_counter() - start) / repeats
        torch.cuda.synchronize()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(repeats):
            run()
        end.record()
        torch.cuda.synchronize()
        return begin.elapsed_time(end) / 1000 / repeats

    def graph(self, run):
        """``run`` replayed from a CUDA graph (its launches cost nothing extra), or itself on the CPU."""
        if self.device == "cpu":
            return run
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            run()
            run()
        torch.cuda.current_stream().wait_stream(side)
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            run()
        return captured.replay


def measure_bandwidth(rec: Recorder, elements: int) -> None:
    data = torch.ones(elements, dtype=torch.bfloat16, device=rec.device)
    copy = torch.empty_like(data)
    seconds = rec.seconds(lambda: data.sum(dtype=torch.float32), repeats=10)
    rec.write(
        kind="bandwidth", op="read", bytes=2 * elements, s=seconds, gbs=round(2 * elements / seconds / 1e9, 1)
    )
    seconds = rec.seconds(lambda: copy.copy_(data), repeats=10)
    rec.write(
        kind="bandwidth", op="copy", bytes=4 * elements, s=seconds, gbs=round(4 * elements / seconds / 1e9, 1)
    )


def measure_gemm(rec: Recorder, size: int) -> None:
    a = torch.randn(size, size, dtype=torch.bfloat16, device=rec.device)
    b = torch.randn(size, size, dtype=torch.bfloat16, device=rec.device)
    flop = 2 * size**3
    seconds = rec.seconds(lambda: a @ b, repeats=10)
    rec.write(kind="gemm", dtype="bf16", m=size, s=seconds, tflops=round(flop / seconds / 1e12, 1))
    if rec.device == "cpu":
        return
    try:
        a8, b8 = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t()
        scale = torch.tensor(1.0, device=rec.device)
        seconds = rec.seconds(
            lambda: torch._scaled_mm(a8, b8, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16),
            repeats=10,
        )
        rec.write(kind="gemm", dtype="fp8", m=size, s=seconds, tflops=round(flop / seconds / 1e12, 1))
    except (RuntimeError, AttributeError) as error:  # no FP8 tensor cores, or an older PyTorch
        rec.write(kind="gemm", dtype="fp8", error=repr(error)[:200])


def measure_knee(rec: Recorder, k: int, n: int, batches: list[int]) -> None:
    weight = torch.randn(k, n, dtype=torch.bfloat16, device=rec.device)
    for batch in batches:
        rows = torch.randn(batch, k, dtype=torch.bfloat16, device=rec.device)
        out = torch.empty(batch, n, dtype=torch.bfloat16, device=rec.device)
        seconds = rec.seconds(
            rec.graph(lambda rows=rows, out=out: torch.matmul(rows, weight, out=out)), repeats=50
        )
        moved = 2 * (k * n + batch * k + batch * n)
        rec.write(
            kind="knee", B=batch, K=k, N=n, s=seconds, gbs=round(moved / seconds / 1e9, 1),
            tflops=round(2 * batch * k * n / seconds / 1e12, 2),
        )  # fmt: skip


def measure_overhead(rec: Recorder, layers: int) -> None:
    """Ten kernels a layer on 64-wide tensors: what a step's launches cost with nothing to move."""
    width = 64
    x = torch.randn(1, width, dtype=torch.bfloat16, device=rec.device)
    w = torch.randn(width, width, dtype=torch.bfloat16, device=rec.device)
    gain = torch.ones(width, dtype=torch.bfloat16, device=rec.device)

    def step() -> torch.Tensor:
        h = x
        for _ in range(layers):
            h = F.rms_norm(h, (width,), gain)  # 1 add-and-norm
            q = h @ w  # 2 QKV
            q = q * 1.0001  # 3 rotary
            k = q + 0  # 4 KV write
            a = torch.softmax(q * k, dim=-1)  # 5 attention
            h = h + a @ w  # 6 output
            h = F.rms_norm(h, (width,), gain)  # 7 add-and-norm
            u = h @ w  # 8 gate-up
            u = F.silu(u) * u  # 9 SiLU and multiply
            h = h + u @ w  # 10 down
        return h

    seconds = rec.seconds(rec.graph(step))
    rec.write(
        kind="overhead", layers=layers, kernels_per_layer=10, s=seconds, step_ms=round(seconds * 1000, 3)
    )


def measure_steps(
    rec: Recorder, shape: tuple[int, ...], grid: list[tuple[int, int]], prompts: list[int]
) -> None:
    """A Llama-3.1-8B-shaped model's decode steps and prefills (random weights), to check against."""
    layers, hidden, heads, kv_heads, head_dim, mlp, vocab = shape
    group = heads // kv_heads

    def weight(*size: int) -> torch.Tensor:
        return torch.randn(*size, dtype=torch.bfloat16, device=rec.device) * 0.02

    blocks = [
        (weight(hidden, (heads + 2 * kv_heads) * head_dim), weight(heads * head_dim, hidden), weight(hidden, 2 * mlp), weight(mlp, hidden))
        for _ in range(layers)
    ]  # fmt: skip
    head = weight(hidden, vocab)
    gain = torch.ones(hidden, dtype=torch.bfloat16, device=rec.device)
    sizes = [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim]

    def decode(x, keys, values, context):
        batch = x.shape[0]
        for (qkv, out, gate_up, down), k_cache, v_cache in zip(blocks, keys, values, strict=True):
            q, k, v = (F.rms_norm(x, (hidden,), gain) @ qkv).split(sizes, dim=-1)
            k_cache[:, :, context] = k.view(batch, kv_heads, head_dim)
            v_cache[:, :, context] = v.view(batch, kv_heads, head_dim)
            attended = F.scaled_dot_product_attention(
                q.view(batch, kv_heads, group, head_dim),
                k_cache[:, :, : context + 1],
                v_cache[:, :, : context + 1],
            )
            x = x + attended.reshape(batch, heads * head_dim) @ out
            g, u = (F.rms_norm(x, (hidden,), gain) @ gate_up).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ down
        return torch.argmax(F.rms_norm(x, (hidden,), gain) @ head, dim=-1)

    for batch, context in grid:
        keys = [
            torch.zeros(batch, kv_heads, context + 1, head_dim, dtype=torch.bfloat16, device=rec.device)
            for _ in blocks
        ]
        values = [torch.zeros_like(k) for k in keys]
        x = torch.randn(batch, hidden, dtype=torch.bfloat16, device=rec.device) * 0.1
        run = rec.graph(
            lambda x=x, keys=keys, values=values, context=context: decode(x, keys, values, context)
        )
        seconds = rec.seconds(run, warm=2)
        rec.write(kind="decode", B=batch, T=context, s=round(seconds, 6), step_ms=round(seconds * 1000, 3))
        del keys, values, run

    def prefill(x):
        length = x.shape[0]
        for qkv, out, gate_up, down in blocks:
            q, k, v = (F.rms_norm(x, (hidden,), gain) @ qkv).split(sizes, dim=-1)
            q = q.view(1, length, heads, head_dim).transpose(1, 2)
            k = k.view(1, length, kv_heads, head_dim).transpose(1, 2).repeat_interleave(group, 1)
            v = v.view(1, length, kv_heads, head_dim).transpose(1, 2).repeat_interleave(group, 1)
            attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + attended.transpose(1, 2).reshape(length, heads * head_dim) @ out
            g, u = (F.rms_norm(x, (hidden,), gain) @ gate_up).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ down
        return torch.argmax(F.rms_norm(x[-1:], (hidden,), gain) @ head, dim=-1)

    for length in prompts:
        x = torch.randn(length, hidden, dtype=torch.bfloat16, device=rec.device) * 0.1
        seconds = rec.seconds(lambda x=x: prefill(x), repeats=5, warm=2)
        rec.write(kind="prefill", P=length, s=round(seconds, 6), ms=round(seconds * 1000, 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="gpu.jsonl", help="the calibration file to append to")
    parser.add_argument("--steps", action="store_true", help="also time whole decode steps and prefills")
    parser.add_argument("--cpu", action="store_true", help="small shapes on the CPU: a smoke test")
    args = parser.parse_args()
    device = "cpu" if args.cpu else "cuda"
    rec = Recorder(args.out, device)
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        rec.write(kind="device", name=props.name, memory_gib=round(props.total_memory / 2**30, 1), sms=props.multi_processor_count, torch=torch.__version__)  # fmt: skip
    small = args.cpu
    measure_bandwidth(rec, 2**20 if small else 4 * 2**30)
    measure_gemm(rec, 256 if small else 8192)
    measure_knee(
        rec,
        *((256, 512) if small else (4096, 14336)),
        [1, 8, 64] if small else [1, 8, 32, 64, 128, 192, 256, 512, 1024, 2048],
    )
    measure_overhead(rec, 2 if small else LAYERS)
    if args.steps:
        shape = (
            (2, 256, 4, 2, 64, 512, 1000)
            if small
            else (LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, MLP, VOCAB)
        )
        grid = (
            [(1, 64), (4, 128)] if small else [(b, 1024) for b in (1, 8, 64, 256)] + [(1, 8192), (32, 8192)]
        )
        measure_steps(rec, shape, grid, [32, 128] if small else [512, 2048, 8192])
    rec.write(kind="done")


if __name__ == "__main__":
    main()
