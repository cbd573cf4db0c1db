"""Sizing: replicas for peak traffic, and serverless against dedicated (lessons 03, 15).

Lesson 03's replica formula and lesson 15's serverless-against-dedicated one (the crossover is the project's own formula: the kit publishes none).

The defaults are one scenario, the capstone's (lesson 15): its example flags (peak concurrency
200, 5 million tickets a month, serverless $0.15 in / $0.60 out per million tokens, $8 a
GPU-hour) with lesson 15's worked example (300 tokens in, 50 out, 730 hours, one replica), so the
default result is that example: $375 a month serverless against $5,840 dedicated, crossover
about 78 million tickets. For that one replica to carry the capstone's 200 users with 20%
headroom it must hold at least 240, so the default capacity is 256 (a power of two, as lesson
03's sweep levels are). The course measures no capacity for a rented GPU: the number is the
scenario's assumption, to be replaced by a measured sweep. The practice server's 8 users
(lesson 03) are a Mac-sized server's, not an $8-an-hour GPU's; cards that use them set them.

Lesson 15's crossover holds the replicas fixed as tickets grow; beside it,
``crossover_growing_tickets_month`` lets peak users grow with tickets (their ratio this
scenario's) and works the replicas out again at each volume (``crossover_growing``).

Headroom is spare capacity: replicas with headroom = ceil(peak × (1 + headroom) ÷ capacity).
Lesson 03's example (120 ÷ 8 = 15, +20% → 18) is the same either way, but rounding up twice would turn
one replica into two for 20% headroom. Lesson 03's replica formula and its live numbers do round twice,
headroom added to whole replicas: ``replicas_plus_headroom`` = ceil(ceil(peak ÷ capacity) × (1 +
headroom)), which lesson 03's practice asks for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..core.calculator import Calculator, Output, OutputSpec, Params, WorkedExample, counted, typed
from ..core.chart import BLUE, ORANGE, Figure, Series, layout, line, these_settings
from ..core.params import Param
from ..hardware.prices import price
from .cost import price_param, tokens_param, usd_per_task

SERVERLESS = "serverless"
DEDICATED = "dedicated"


def ceil_count(x: float) -> int:
    # 15 × 1.2 is 18.000000000000004 in floating point: round away the noise before rounding up.
    return math.ceil(round(x, 9))


def crossover_growing(p: Params, per_ticket: float) -> tuple[float | None, int | None]:
    """The volume from which dedicated stays the cheaper, when peak users grow with tickets
    (their ratio held at this scenario's), and the replicas it takes there; (None, None) when
    serverless is the cheaper at every volume, or there are no tickets to scale peak users by.

    Replicas at T tickets are ⌈k × T⌉ with k = peak ÷ tickets × (1 + headroom) ÷ capacity; a
    replica-month costs c = hours × GPU-hour price, a ticket s serverless. On the volumes n
    replicas cover, dedicated (c × n) is the dearer below c × n ÷ s, which lies inside them
    while n < s ÷ (s − c × k): the last such n is n* = ⌈s ÷ (s − c × k)⌉ − 1, and from
    c × n* ÷ s on dedicated is never dearer. When s ≤ c × k, a ticket costs more on dedicated
    GPUs at any scale, so serverless is the cheaper at every volume."""
    if p["tickets_per_month"] <= 0 or per_ticket <= 0:
        return None, None
    k = p["peak_users"] / p["tickets_per_month"] * (1 + p["headroom"]) / p["capacity"]
    c = p["hours"] * p["gpu_hour_usd"]
    if per_ticket <= c * k:
        return None, None
    replicas = ceil_count(per_ticket / (per_ticket - c * k)) - 1
    return c * replicas / per_ticket, replicas


def _compute(p: Params) -> dict[str, float | str | None]:
    replicas = ceil_count(p["peak_users"] / p["capacity"])
    with_headroom = ceil_count(p["peak_users"] * (1 + p["headroom"]) / p["capacity"])
    per_ticket = usd_per_task(
        p["input_tokens"], p["output_tokens"], p["input_usd_per_m"], p["output_usd_per_m"]
    )
    serverless = p["tickets_per_month"] * per_ticket
    dedicated = with_headroom * p["hours"] * p["gpu_hour_usd"]
    return {
        "replicas": replicas,
        "replicas_with_headroom": with_headroom,
        "replicas_plus_headroom": ceil_count(replicas * (1 + p["headroom"])),
        "replicas_plus_headroom_unrounded": replicas * (1 + p["headroom"]),
        "usd_per_ticket": per_ticket,
        "serverless_usd_month": serverless,
        "dedicated_usd_month": dedicated,
        # Free tokens never cost more than a deployment: no crossover to report.
        "crossover_tickets_month": dedicated / per_ticket if per_ticket > 0 else None,
        "crossover_growing_tickets_month": crossover_growing(p, per_ticket)[0],
        "cheaper": SERVERLESS if serverless <= dedicated else DEDICATED,
    }


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    result = CALCULATOR.run(p)
    per_ticket, dedicated = result.value("usd_per_ticket"), result.value("dedicated_usd_month")
    top = max(p["tickets_per_month"] * 4, (result.value("crossover_tickets_month") or 0) * 2, 1000)
    xs = [top * i / 60 for i in range(61)]
    data = [
        line("serverless", xs, [x * per_ticket for x in xs], BLUE),
        line(
            f"dedicated, {result.value('replicas_with_headroom')} replicas",
            [0, top],
            [dedicated, dedicated],
            ORANGE,
        ),
        these_settings(p["tickets_per_month"], result.value("serverless_usd_month")),
    ]
    return {"data": data, "layout": layout("tickets per month", "$ per month")}


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    users, capacity = counted(p["peak_users"], "user"), typed(p["capacity"])
    price = (
        f"({typed(p['input_tokens'])} × {typed(p['input_usd_per_m'], '$')} + "
        f"{typed(p['output_tokens'])} × {typed(p['output_usd_per_m'], '$')}) ÷ 10⁶"
    )
    return {
        "replicas": f"{out('replicas')} = ⌈{users} ÷ {capacity} per replica⌉",
        "replicas_with_headroom": (
            f"{out('replicas_with_headroom')} = ⌈{users} × (1 + {typed(p['headroom'])}) ÷ {capacity}⌉"
        ),
        "replicas_plus_headroom": (
            f"{out('replicas_plus_headroom')} = ⌈⌈{users} ÷ {capacity}⌉ × (1 + {typed(p['headroom'])})⌉"
        ),
        "replicas_plus_headroom_unrounded": (
            f"{out('replicas_plus_headroom_unrounded')} = ⌈{users} ÷ {capacity}⌉ × (1 + {typed(p['headroom'])})"
        ),
        "usd_per_ticket": f"{out('usd_per_ticket')} = {price}",
        "serverless_usd_month": (
            f"{out('serverless_usd_month')} = {typed(p['tickets_per_month'])} tickets × {out('usd_per_ticket')}"
        ),
        "dedicated_usd_month": (
            f"{out('dedicated_usd_month')} = {out('replicas_with_headroom')} × {typed(p['hours'])} hours × "
            f"{typed(p['gpu_hour_usd'], '$')}"
        ),
        "crossover_tickets_month": (
            f"{out('crossover_tickets_month')} = {out('dedicated_usd_month')} ÷ {out('usd_per_ticket')}"
            if out("crossover_tickets_month") != "—"
            else "— : free tokens never cost more than a deployment"
        ),
        "crossover_growing_tickets_month": _growing_formula(p, out),
        "cheaper": f"{out('cheaper')}: {out('serverless_usd_month')} serverless against {out('dedicated_usd_month')} dedicated",
    }


def _growing_formula(p: Params, out: Callable[[str], str]) -> str:
    key = "crossover_growing_tickets_month"
    if p["tickets_per_month"] <= 0:
        return "— : no tickets a month to grow peak users with"
    per_ticket = usd_per_task(
        p["input_tokens"], p["output_tokens"], p["input_usd_per_m"], p["output_usd_per_m"]
    )
    if per_ticket <= 0:
        return "— : free tokens never cost more than a deployment"
    growing = (
        f"peak users growing with tickets ({counted(p['peak_users'], 'user')} at "
        f"{typed(p['tickets_per_month'])} tickets a month)"
    )
    volume, replicas = crossover_growing(p, per_ticket)
    if volume is None or replicas is None:
        k = p["peak_users"] / p["tickets_per_month"] * (1 + p["headroom"]) / p["capacity"]
        dedicated = Output(p["hours"] * p["gpu_hour_usd"] * k, "$", "").text()
        return (
            f"— : with {growing}, a ticket costs {dedicated} on dedicated replicas at the least "
            f"(each full) against {out('usd_per_ticket')} serverless: serverless is the cheaper at every volume"
        )
    return (
        f"{out(key)} = {counted(replicas, 'replica')} × {typed(p['hours'])} hours × "
        f"{typed(p['gpu_hour_usd'], '$')} ÷ {out('usd_per_ticket')}: with {growing}, dedicated is "
        "never the dearer from there on"
    )


CALCULATOR = Calculator(
    name="sizing",
    order=70,
    title="Sizing: replicas, and serverless against dedicated",
    lessons=("03", "15"),
    meaning=(
        "Replicas follow peak concurrent users ÷ what one server holds within the latency target; "
        "serverless bills each token, dedicated bills every hour, so low traffic favours serverless "
        "until the crossover volume."
    ),
    params=(
        Param(
            "peak_users",
            "int",
            200,
            "Users sending requests at the same moment, at peak (the capstone's example: 200).",
            "users",
            label="peak users",
            low=1,
            high=100_000_000,
        ),
        Param(
            "capacity",
            "int",
            256,
            "Concurrent users one replica serves within the latency target: measure it (lesson 03's "
            "sweep). 256: the capstone's 200 users on one GPU replica; the practice server holds 8.",
            "users",
            label="users per replica",
            low=1,
            high=1_000_000,
        ),
        Param("headroom", "float", 0.2, "Spare capacity on top, as a share (0.2 = 20%).", low=0, high=10),
        tokens_param("input_tokens", 300, "Prompt tokens per ticket."),
        tokens_param("output_tokens", 50, "Generated tokens per ticket."),
        price_param(
            "input_usd_per_m",
            price("capstone-serverless-input").usd,
            "Serverless price of input tokens (lesson 15: $0.15).",
            "input price",
        ),
        price_param(
            "output_usd_per_m",
            price("capstone-serverless-output").usd,
            "Serverless price of output tokens (lesson 15: $0.60).",
            "output price",
        ),
        Param(
            "tickets_per_month",
            "int",
            5_000_000,
            "Tickets (requests) per month.",
            "tickets",
            label="tickets a month",
            low=0,
            high=1_000_000_000_000,
        ),
        Param(
            "gpu_hour_usd",
            "float",
            price("dedicated-gpu-hour").usd,
            "Price of one GPU-hour, dedicated.",
            "$/h",
            label="GPU-hour price",
            low=0,
            high=100_000,
        ),
        Param(
            "hours",
            "float",
            730.0,
            "Hours a month the replicas run (730 = always on).",
            "h",
            label="hours a month",
            low=0,
            high=744,
        ),
    ),
    outputs=(
        OutputSpec("replicas", "replicas", "replicas for peak"),
        OutputSpec("replicas_with_headroom", "replicas", "replicas with headroom"),
        OutputSpec(
            "replicas_plus_headroom", "replicas", "whole replicas for peak, plus headroom (lesson 03)"
        ),
        OutputSpec(
            "replicas_plus_headroom_unrounded",
            "replicas",
            "whole replicas for peak × (1 + headroom), before rounding up",
        ),
        OutputSpec("usd_per_ticket", "$", "serverless cost per ticket"),
        OutputSpec("serverless_usd_month", "$", "serverless per month"),
        OutputSpec("dedicated_usd_month", "$", "dedicated per month"),
        OutputSpec("crossover_tickets_month", "tickets", "tickets a month where dedicated becomes cheaper"),
        OutputSpec(
            "crossover_growing_tickets_month",
            "tickets",
            "tickets a month from which dedicated stays cheaper, peak users growing with tickets",
        ),
        OutputSpec("cheaper", "", "the cheaper option at this volume"),
    ),
    compute=_compute,
    formulas=_formulas,
    chart=_chart,
    chart_description="Monthly cost against tickets per month, serverless against dedicated.",
    examples=(
        WorkedExample(
            "lesson 03: 120 users ÷ 8, +20% → 18 replicas",
            {"peak_users": "120", "capacity": "8", "headroom": "0.2"},
            "replicas_with_headroom",
            "18 replicas",
        ),
        WorkedExample(
            "lesson 15: 5M tickets serverless → $375 a month", {}, "serverless_usd_month", "$375.00"
        ),
        WorkedExample(
            "lesson 03's 8 users a replica: 200 users × 1.2 ÷ 8 → 30 replicas",
            {"capacity": "8"},
            "replicas_with_headroom",
            "30 replicas",
        ),
    ),
    note="`dedicated_usd_month` uses `replicas_with_headroom` = ceil(peak × (1 + headroom) ÷ capacity). "
    "The defaults are lesson 15's capstone scenario on one replica that holds 256, so they give "
    "its worked example ($375 against $5,840, crossover ≈ 78M); the practice server's 8 users "
    "per replica must be set (`capacity: 8`).",
)
