"""Fine-tuning memory: full, LoRA, DoRA and QLoRA (lessons 11, 16, 17).

COURSE.md F27–F30, with peft_params' exact matrix shapes: per adapted layer, LoRA adds
r × (inputs + outputs) to each target matrix (q, k, v, o; with ``mlp`` also gate, up, down),
DoRA one magnitude per output on top. Training memory excludes activations unless
``activations_gb`` is given: full 16 B per parameter (bf16 weights and gradients, fp32 Adam
moments and master copy); LoRA and DoRA a frozen bf16 base (2 B) plus 16 B per trainable;
QLoRA a 4-bit base (0.5625 B, scales included) plus 16 B per trainable. GB and MB are 10⁹, 10⁶.
"""

from __future__ import annotations

from ..calculator import Calculator, OutputSpec, Params, require
from ..params import Param

FULL_BYTES = 16.0
TRAINABLE_BYTES = 16.0
BF16_BYTES = 2.0
FOUR_BIT_BYTES = 0.5625
CHECKPOINT_BYTES = 2.0
METHODS = {
    "full": "full fine-tuning",
    "lora": "LoRA",
    "dora": "DoRA",
    "qlora": "QLoRA (4-bit base)",
}


def target_shapes(p: Params) -> list[tuple[int, int]]:
    """(inputs, outputs) of each adapted matrix in one layer."""
    hidden, attention, kv = p["hidden"], p["heads"] * p["head_dim"], p["kv_heads"] * p["head_dim"]
    shapes = [(hidden, attention), (hidden, kv), (hidden, kv), (attention, hidden)]
    if p["mlp"]:
        shapes += [(hidden, p["mlp_hidden"]), (hidden, p["mlp_hidden"]), (p["mlp_hidden"], hidden)]
    return shapes


def adapter_params(p: Params, *, dora: bool) -> int:
    per_layer = sum(
        p["rank"] * (inputs + outputs) + (outputs if dora else 0) for inputs, outputs in target_shapes(p)
    )
    return per_layer * p["layers"]


def _check(p: Params) -> None:
    require(
        p["kv_heads"] <= p["heads"],
        "kv_heads",
        f"kv_heads must be at most heads ({p['heads']})",
    )


def _compute(p: Params) -> dict[str, float]:
    params = p["params_b"] * 1e9
    lora = adapter_params(p, dora=False)
    activations = p["activations_gb"] * 1e9
    memory = {
        "full": params * FULL_BYTES,
        "lora": params * BF16_BYTES + lora * TRAINABLE_BYTES,
        "dora": params * BF16_BYTES + adapter_params(p, dora=True) * TRAINABLE_BYTES,
        "qlora": params * FOUR_BIT_BYTES + lora * TRAINABLE_BYTES,
    }
    method = p["method"]
    trainable = params if method == "full" else adapter_params(p, dora=method == "dora")
    return {
        "trainable_params": trainable,
        "trainable_pct": 100 * trainable / params,
        "train_gb": (memory[method] + activations) / 1e9,
        "adapter_mb": trainable * CHECKPOINT_BYTES / 1e6,
        "full_train_gb": (memory["full"] + activations) / 1e9,
        "lora_train_gb": (memory["lora"] + activations) / 1e9,
        "qlora_train_gb": (memory["qlora"] + activations) / 1e9,
        "serve_gb": params * BF16_BYTES / 1e9,
    }


def _shape(name: str, default: int, help: str, label: str = "") -> Param:
    return Param(name, "int", default, help, label=label, low=1, high=1_000_000)


CALCULATOR = Calculator(
    name="finetune-memory",
    title="Fine-tuning memory: full, LoRA, DoRA, QLoRA",
    lessons=("11", "16", "17"),
    meaning=(
        "Full fine-tuning keeps about 16 bytes for every parameter, while LoRA trains well under 1% "
        "of them beside a frozen base, so the base's own size dominates, and QLoRA shrinks that base "
        "to 4 bits."
    ),
    params=(
        Param(
            "params_b",
            "float",
            8.0,
            "Parameters of the base model, in billions (Llama-3.1-8B: 8.0).",
            "B",
            label="parameters",
            low=0.001,
            high=100_000,
        ),
        Param("method", "choice", "lora", "How the model is trained.", choices=METHODS),
        _shape("rank", 16, "LoRA rank r: the adapter's inner size.", "rank (r)"),
        _shape("layers", 32, "Layers adapted (peft_params: all of them; Llama-3.1-8B has 32)."),
        _shape("hidden", 4096, "Hidden size (Llama-3.1-8B: 4,096).", "hidden size"),
        _shape("heads", 32, "Attention heads (Llama-3.1-8B: 32).", "attention heads"),
        _shape("kv_heads", 8, "Key/value heads (Llama-3.1-8B: 8).", "KV heads"),
        _shape("head_dim", 128, "Values per head (Llama-3.1-8B: 128).", "head size"),
        Param("mlp", "bool", False, "Adapt the MLP's gate, up and down matrices too.", label="adapt the MLP"),
        _shape("mlp_hidden", 14336, "MLP inner size (Llama-3.1-8B: 14,336).", "MLP size"),
        Param(
            "activations_gb",
            "float",
            0.0,
            "Activations to add (peft_params leaves them out; lesson 11's qlora_memory adds 2).",
            "GB",
            label="activations",
            low=0,
            high=100_000,
        ),
    ),
    outputs=(
        OutputSpec("trainable_params", "params", "trainable parameters"),
        OutputSpec("trainable_pct", "%", "share of the model trained"),
        OutputSpec("train_gb", "GB", "memory to train"),
        OutputSpec("adapter_mb", "MB", "saved file (the adapter; for full, the whole model)"),
        OutputSpec("full_train_gb", "GB", "memory to train, full"),
        OutputSpec("lora_train_gb", "GB", "memory to train, LoRA"),
        OutputSpec("qlora_train_gb", "GB", "memory to train, QLoRA"),
        OutputSpec("serve_gb", "GB", "memory to serve the model in bf16"),
    ),
    compute=_compute,
    check=_check,
)
