"""The one serving scenario the serving pages open at: step-time and prefill
(/sim/calc/step-time/, /sim/calc/prefill/), the engine (/sim/engine/) and the chain (/sim/chain/).

The capstone's drill, "70B on one GPU?" (lesson 15): Llama-3.1-70B (its config.json, as
model_presets.py holds it) at FP8 on one H100 SXM (NVIDIA's datasheet, hardware.py), its KV
cache at the model's 16 bits, with lesson 15's worked ticket of 300 prompt and 50 reply tokens
and vLLM's defaults of 256 running sequences and 0.9 of the GPU's memory. Each page declares
its parameters with these defaults, so a page opened without settings shows the same model,
GPU and precision as the others. Pure Python: no Django.
"""

from __future__ import annotations

MODEL = "Llama-3.1-70B"
HARDWARE = "h100-sxm"
PRECISION = "fp8"
KV_DTYPE = "bf16"
PROMPT_TOKENS = 300
REPLY_TOKENS = 50
MAX_NUM_SEQS = 256
GPU_MEMORY_UTILIZATION = 0.9
