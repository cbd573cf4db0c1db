"""Fine-tuning memory: full, LoRA, DoRA and QLoRA (lessons 11, 16, 17).

Lessons 11, 16 and 17's formulas, with peft_params' exact matrix shapes: per adapted layer, LoRA adds
r × (inputs + outputs) to each target matrix (q, k, v, o; with ``mlp`` also gate, up, down),
DoRA one magnitude per output on top. Training memory excludes activations unless
``activations_gb`` is given: full 16 B per parameter (bf16 weights and gradients, fp32 Adam
moments and master copy); LoRA and DoRA a frozen bf16 base (2 B) plus 16 B per trainable;
QLoRA a 4-bit base (0.5625 B, scales included) plus 16 B per trainable. GB and MB are 10⁹, 10⁶.

The shape must be the model's: its layers' attention and MLP matrices plus the token embeddings
(vocab × hidden, twice unless tied) must come within 10% of ``params_b``, else the calculator
refuses and names both counts; otherwise an adapter can come out bigger than its model.
``adapted_layers`` adapts only the last N of the model's layers (peft_params' ``--layers N``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, require, typed
from ..core.chart import BLUE, GREEN, PURPLE, RED, Figure, Series, bars, layout
from ..core.params import Param
from ..models.model_params import MOST_SIZE, MOST_VOCAB

SHAPE_TOLERANCE = 0.10
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


def adapted_layers(p: Params) -> int:
    return p["layers"] if p["adapted_layers"] is None else p["adapted_layers"]


def adapter_params(p: Params, *, dora: bool) -> int:
    per_layer = sum(
        p["rank"] * (inputs + outputs) + (outputs if dora else 0) for inputs, outputs in target_shapes(p)
    )
    return per_layer * adapted_layers(p)


def shape_params(p: Params) -> int:
    """The parameters the shape implies: every layer's attention and MLP, and the embeddings."""
    hidden, attention, kv = p["hidden"], p["heads"] * p["head_dim"], p["kv_heads"] * p["head_dim"]
    per_layer = 2 * hidden * attention + 2 * hidden * kv + 3 * hidden * p["mlp_hidden"]
    embeddings = p["vocab"] * hidden * (1 if p["tied_embeddings"] else 2)
    return per_layer * p["layers"] + embeddings


def _billions(count: float) -> str:
    return f"{count / 1e9:,.3g}B"


def _check(p: Params) -> None:
    require(
        p["kv_heads"] <= p["heads"],
        "kv_heads",
        f"kv_heads must be at most heads ({p['heads']})",
    )
    if p["adapted_layers"] is not None:
        require(
            p["adapted_layers"] <= p["layers"],
            "adapted_layers",
            f"adapted_layers must be at most layers ({p['layers']:,})",
        )
    stated, implied = p["params_b"] * 1e9, shape_params(p)
    require(
        abs(implied - stated) <= SHAPE_TOLERANCE * stated,
        "params_b",
        f"{_billions(stated)} stated, but the shape holds {_billions(implied)}: they differ by "
        f"more than {SHAPE_TOLERANCE:.0%}; give the model's own shape (layers, hidden size, "
        f"heads, MLP size, vocabulary)",
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
        "trainable_pct": 100 * (trainable / params),  # exactly 100 for full: x / x is 1
        "train_gb": (memory[method] + activations) / 1e9,
        "adapter_mb": trainable * CHECKPOINT_BYTES / 1e6,
        "full_train_gb": (memory["full"] + activations) / 1e9,
        "lora_train_gb": (memory["lora"] + activations) / 1e9,
        "qlora_train_gb": (memory["qlora"] + activations) / 1e9,
        "serve_gb": params * BF16_BYTES / 1e9,
    }


def _shape(name: str, default: int, help: str, label: str = "") -> Param:
    return Param(name, "int", default, help, label=label, low=1, high=MOST_SIZE)


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    methods = (("full", "full"), ("lora", "LoRA"), ("dora", "DoRA"), ("qlora", "QLoRA"))
    values = [CALCULATOR.compute_with("train_gb", p, method=method) for method, _ in methods]
    bar = bars("GB to train", [label for _, label in methods], values, [RED, BLUE, PURPLE, GREEN])
    return {"data": [bar], "layout": layout("", "memory to train (GB)", showlegend=False)}


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    params = f"{typed(p['params_b'])} × 10⁹"
    extra = f" + {typed(p['activations_gb'], 'GB')} activations"
    adapter = f"{counted(adapted_layers(p), 'layer')} × Σ rank {p['rank']} × (inputs + outputs) of {len(target_shapes(p))} matrices"
    method = p["method"]
    trainable = (
        f"{out('trainable_params')} = every parameter"
        if method == "full"
        else f"{out('trainable_params')} = {adapter}"
        + (" + each matrix's outputs (DoRA's magnitudes)" if method == "dora" else "")
    )
    train = {
        "full": f"{params} × {typed(FULL_BYTES, 'B')}",
        "lora": f"{params} × {typed(BF16_BYTES, 'B')} + {out('trainable_params')} × {typed(TRAINABLE_BYTES, 'B')}",
        "dora": f"{params} × {typed(BF16_BYTES, 'B')} + {out('trainable_params')} × {typed(TRAINABLE_BYTES, 'B')}",
        "qlora": f"{params} × {typed(FOUR_BIT_BYTES, 'B')} + {out('trainable_params')} × {typed(TRAINABLE_BYTES, 'B')}",
    }
    lora = f"the LoRA adapter × {typed(TRAINABLE_BYTES, 'B')}"
    return {
        "trainable_params": trainable,
        "trainable_pct": f"{out('trainable_pct')} = {out('trainable_params')} ÷ {params}",
        "train_gb": f"{out('train_gb')} = ({train[method]}) ÷ 10⁹{extra}",
        "adapter_mb": f"{out('adapter_mb')} = {out('trainable_params')} × {typed(CHECKPOINT_BYTES, 'B')} ÷ 10⁶",
        "full_train_gb": f"{out('full_train_gb')} = {params} × {typed(FULL_BYTES, 'B')} ÷ 10⁹{extra}",
        "lora_train_gb": f"{out('lora_train_gb')} = ({params} × {typed(BF16_BYTES, 'B')} + {lora}) ÷ 10⁹{extra}",
        "qlora_train_gb": f"{out('qlora_train_gb')} = ({params} × {typed(FOUR_BIT_BYTES, 'B')} + {lora}) ÷ 10⁹{extra}",
        "serve_gb": f"{out('serve_gb')} = {params} × {typed(BF16_BYTES, 'B')} ÷ 10⁹",
    }


CALCULATOR = Calculator(
    name="finetune-memory",
    order=90,
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
        _shape("layers", 32, "Layers in the model (Llama-3.1-8B: 32)."),
        Param(
            "adapted_layers",
            "int",
            None,
            "Adapt only the last N layers (peft_params' --layers; empty: all of them).",
            label="adapted layers",
            low=1,
            high=1_000_000,
            optional=True,
        ),
        _shape("hidden", 4096, "Hidden size (Llama-3.1-8B: 4,096).", "hidden size"),
        _shape("heads", 32, "Attention heads (Llama-3.1-8B: 32).", "attention heads"),
        _shape("kv_heads", 8, "Key/value heads (Llama-3.1-8B: 8).", "KV heads"),
        _shape("head_dim", 128, "Values per head (Llama-3.1-8B: 128).", "head size"),
        Param("mlp", "bool", False, "Adapt the MLP's gate, up and down matrices too.", label="adapt the MLP"),
        _shape("mlp_hidden", 14336, "MLP inner size (Llama-3.1-8B: 14,336).", "MLP size"),
        Param(
            "vocab",
            "int",
            128_256,
            "Vocabulary size, for the embeddings (Llama-3.1: 128,256; Qwen2.5: 151,936 or 152,064).",
            "tokens",
            label="vocabulary",
            low=1,
            high=MOST_VOCAB,
        ),
        Param(
            "tied_embeddings",
            "bool",
            False,
            "The input and output embeddings share one matrix (Qwen2.5-0.5B: yes; Llama-3.1-8B: no).",
            label="tied embeddings",
        ),
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
    formulas=_formulas,
    check=_check,
    chart=_chart,
    chart_description="Memory to train with each method, for this model.",
    examples=(
        WorkedExample(
            "lesson 17: 8B LoRA r16, attention → 13.63M, 16.2 GB",
            {"method": "lora", "rank": "16"},
            "train_gb",
            "16.2 GB",
        ),
        WorkedExample(
            "rank 64 trains 4 × rank 16's 13,631,488 weights",
            {"rank": "64"},
            "trainable_params",
            "54,525,952 params",
        ),
    ),
    note="`adapter_mb` is the file training saves (for `full`, the whole model in bf16). The shape must "
    "hold within 10% of `params_b`, or the calculator refuses naming both counts; "
    "`adapted_layers` adapts only the last N. Lesson 11's qlora_memory treats every target as "
    "hidden × hidden: reproduce it with `kv_heads` equal to `heads` (`params_b: 7.6, layers: 28, "
    "adapted_layers: 8, hidden: 3584, heads: 28, kv_heads: 28, mlp_hidden: 18944, vocab: 152064, "
    "rank: 8, method: qlora, activations_gb: 2` → 1.84M, 6.3 GB, 3.7 MB). Its 70B run, which "
    "keeps the 7B's hidden 3,584, is refused: the card uses Llama-3.1-70B's shape (65.5M, 42.4 GB).",
)
