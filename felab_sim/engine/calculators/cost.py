"""Cost: dollars per task, with batch and cached-input discounts, and a fine-tune's bill.

Lessons 06, 08, 09 and 10's formulas. Prices are dollars per million tokens, as
providers quote them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, typed
from ..core.chart import BLUE, GREEN, ORANGE, PURPLE, Figure, Series, bars, layout
from ..core.params import Param
from ..hardware.prices import price

PER_M = 1e6


def usd_per_task(
    input_tokens: float, output_tokens: float, input_usd_per_m: float, output_usd_per_m: float
) -> float:
    """Lesson 09's formula: one task's bill at list prices."""
    return (input_tokens * input_usd_per_m + output_tokens * output_usd_per_m) / PER_M


def tokens_param(name: str, default: int, help: str, label: str = "") -> Param:
    return Param(name, "int", default, help, "tokens", label=label, low=0, high=100_000_000)


def price_param(name: str, default: float, help: str, label: str) -> Param:
    return Param(name, "float", default, help, "$/M tokens", label=label, low=0, high=100_000)


def _compute(p: Params) -> dict[str, float]:
    full = usd_per_task(p["input_tokens"], p["output_tokens"], p["input_usd_per_m"], p["output_usd_per_m"])
    # Lesson 06's formula: cached input tokens are billed at cached_price_ratio × the input price.
    input_bill_share = 1 - p["cached_share"] + p["cached_share"] * p["cached_price_ratio"]
    cached = usd_per_task(
        p["input_tokens"] * input_bill_share, p["output_tokens"], p["input_usd_per_m"], p["output_usd_per_m"]
    )
    batch = 1 - p["batch_discount"]
    training_tokens = p["train_examples"] * p["epochs"] * p["tokens_per_example"]
    return {
        "usd_per_task": full,
        "usd_per_1k_tasks": full * 1000,
        "usd_for_tasks": full * p["tasks"],
        "batch_usd_per_1k_tasks": full * batch * 1000,
        "cached_usd_per_1k_tasks": cached * 1000,
        "batch_cached_usd_per_1k_tasks": cached * batch * 1000,
        "input_bill_pct": 100 * input_bill_share,
        "training_tokens": training_tokens,
        "training_usd": training_tokens / PER_M * p["training_usd_per_m"],
        "serving_usd": p["serving_minutes"] / 60 * p["gpu_hour_usd"],
    }


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    result = CALCULATOR.run(p)
    keys = (
        "usd_per_1k_tasks",
        "batch_usd_per_1k_tasks",
        "cached_usd_per_1k_tasks",
        "batch_cached_usd_per_1k_tasks",
    )
    names = ["list price", "batch", "cached input", "batch + cached"]
    bar = bars("$ per 1,000 tasks", names, [result.value(key) for key in keys], [BLUE, GREEN, ORANGE, PURPLE])
    return {"data": [bar], "layout": layout("", "$ per 1,000 tasks", showlegend=False)}


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    price = (
        f"({typed(p['input_tokens'])} × {typed(p['input_usd_per_m'], '$')} + "
        f"{typed(p['output_tokens'])} × {typed(p['output_usd_per_m'], '$')}) ÷ 10⁶"
    )
    batch = f"(1 − {typed(p['batch_discount'])})"
    return {
        "usd_per_task": f"{out('usd_per_task')} = {price}",
        "usd_per_1k_tasks": f"{out('usd_per_1k_tasks')} = 1,000 × {out('usd_per_task')}",
        "usd_for_tasks": f"{out('usd_for_tasks')} = {typed(p['tasks'])} × {out('usd_per_task')}",
        "batch_usd_per_1k_tasks": f"{out('batch_usd_per_1k_tasks')} = {out('usd_per_1k_tasks')} × {batch}",
        "cached_usd_per_1k_tasks": (
            f"{out('cached_usd_per_1k_tasks')} = 1,000 × ({typed(p['input_tokens'])} × {out('input_bill_pct')} × "
            f"{typed(p['input_usd_per_m'], '$')} + {typed(p['output_tokens'])} × {typed(p['output_usd_per_m'], '$')}) ÷ 10⁶"
        ),
        "batch_cached_usd_per_1k_tasks": (
            f"{out('batch_cached_usd_per_1k_tasks')} = {out('cached_usd_per_1k_tasks')} × {batch}"
        ),
        "input_bill_pct": (
            f"{out('input_bill_pct')} = 1 − {typed(p['cached_share'])} + {typed(p['cached_share'])} × "
            f"{typed(p['cached_price_ratio'])}"
        ),
        "training_tokens": (
            f"{out('training_tokens')} = {typed(p['train_examples'])} examples × {typed(p['epochs'])} epochs × "
            f"{typed(p['tokens_per_example'])} tokens"
        ),
        "training_usd": (
            f"{out('training_usd')} = {out('training_tokens')} ÷ 10⁶ × {typed(p['training_usd_per_m'], '$')}"
        ),
        "serving_usd": (
            f"{out('serving_usd')} = {typed(p['serving_minutes'])} minutes ÷ 60 × {typed(p['gpu_hour_usd'], '$')}"
        ),
    }


CALCULATOR = Calculator(
    name="cost",
    order=80,
    title="Cost per task: list price, batch and cached input",
    lessons=("08", "09", "10"),
    meaning=(
        "A task's bill is its tokens times their prices; a batch job takes a share off the whole "
        "bill, cached input a share off the repeated part, and the two stack."
    ),
    params=(
        tokens_param("input_tokens", 200, "Prompt tokens per task."),
        tokens_param("output_tokens", 50, "Generated tokens per task."),
        price_param(
            "input_usd_per_m",
            price("gpt-oss-20b-input").usd,
            "Price of input tokens (gpt-oss-20b example: $0.07).",
            "input price",
        ),
        price_param(
            "output_usd_per_m",
            price("gpt-oss-20b-output").usd,
            "Price of output tokens (gpt-oss-20b example: $0.30).",
            "output price",
        ),
        Param(
            "batch_discount",
            "float",
            0.5,
            "Share a Batch API takes off the bill (about half).",
            low=0,
            high=1,
        ),
        Param(
            "cached_share",
            "float",
            0.0,
            "Share of input tokens served from the prompt cache.",
            label="cached share of input",
            low=0,
            high=1,
        ),
        Param(
            "cached_price_ratio",
            "float",
            0.5,
            "Price of a cached input token as a share of the input price (illustrative: half).",
            low=0,
            high=1,
        ),
        Param(
            "tasks", "int", 1000, "Tasks in the job, for its total.", "tasks", low=0, high=1_000_000_000_000
        ),
        Param(
            "train_examples",
            "int",
            800,
            "Fine-tuning examples (lesson 10: 800).",
            "examples",
            label="training examples",
            low=0,
            high=1_000_000_000,
        ),
        Param("epochs", "int", 2, "Passes over the training examples.", low=0, high=1000),
        tokens_param("tokens_per_example", 190, "Tokens per training example (lesson 10: about 190)."),
        price_param(
            "training_usd_per_m",
            0.50,
            "Price of training tokens (illustrative: the course gives only cents).",
            "training price",
        ),
        Param(
            "serving_minutes",
            "float",
            38.0,
            "Minutes a dedicated deployment ran, from deploy to delete (lesson 10: 38).",
            "min",
            label="serving time",
            low=0,
            high=10_000_000,
        ),
        Param(
            "gpu_hour_usd",
            "float",
            price("dedicated-gpu-hour").usd,
            "Price of one GPU-hour of a dedicated deployment.",
            "$/h",
            label="GPU-hour price",
            low=0,
            high=100_000,
        ),
    ),
    outputs=(
        OutputSpec("usd_per_task", "$", "per task, list price"),
        OutputSpec("usd_per_1k_tasks", "$", "per 1,000 tasks, list price"),
        OutputSpec("usd_for_tasks", "$", "for all the tasks, list price"),
        OutputSpec("batch_usd_per_1k_tasks", "$", "per 1,000 tasks, batch"),
        OutputSpec("cached_usd_per_1k_tasks", "$", "per 1,000 tasks, with cached input"),
        OutputSpec("batch_cached_usd_per_1k_tasks", "$", "per 1,000 tasks, batch and cached input"),
        OutputSpec("input_bill_pct", "%", "input bill with caching, as a share of list price"),
        OutputSpec("training_tokens", "tokens", "fine-tuning tokens"),
        OutputSpec("training_usd", "$", "fine-tuning bill"),
        OutputSpec("serving_usd", "$", "dedicated deployment bill"),
    ),
    compute=_compute,
    formulas=_formulas,
    chart=_chart,
    chart_description="Dollars per 1,000 tasks at list price, batch, cached input, and both.",
    examples=(
        WorkedExample(
            "lesson 09: 200 in, 50 out at $0.07/$0.30 → $0.029 per 1k",
            {"input_tokens": "200", "output_tokens": "50"},
            "usd_per_1k_tasks",
            "$0.029",
        ),
        WorkedExample(
            "90% of the input cached at half price → 55% of the input bill",
            {"cached_share": "0.9"},
            "input_bill_pct",
            "55%",
        ),
    ),
    note="`training_usd_per_m` (0.50) and `cached_price_ratio` (0.5) are illustrative: the course "
    "publishes neither.",
)
