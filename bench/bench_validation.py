"""felab's step-cost model against everything measured: predicted, measured, error, in two groups.

    .venv/bin/python bench/bench_validation.py [--fit] [--markdown] [--export-serving]

Group "fitted": points a number was fitted on (LLMServingSim's three named vLLM runs: vLLM's own
cost a step was fitted on all three, the RTX PRO 6000's memory efficiency on its two). Group
"predicted": points nothing was fitted on (the H200's decode steps and prefills, timed from its
bandwidth, gemm and knee rows alone). Then issue 43's DeepSeek-V3 check: the chain's per-user
speed, step-time's and the engine's, at FP8 on 8 H200s with 256 users.

Then the published serving runs (felab_sim/engine/serving/serving_validation.py): felab's engine run as
each was run, per group of serving_split.csv, dense and MoE apart, the median and 90th percentile
of |error| of mean TTFT, mean TPOT and output tokens a second per GPU, and each run's figures.
They are read from the stored serving_predictions.json; ``--export-serving`` reruns all of
them and rewrites it (a few minutes).

``--fit-serving`` refits each engine's fixed cost a request (servers.REQUEST_FIXED_S) on the
fitted group of the serving runs alone, vLLM's with the rate of a grouped product of MXFP4
experts (its fitted runs are gpt-oss-120b's); about 25 minutes.

``--fit`` reruns the one least-squares fit (felab_sim/engine/hardware/calibration.py): over vLLM's step
overhead and the RTX PRO 6000's memory efficiency, every metric of all three runs, each error
over its target; about a minute.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from felab_sim.engine.calculators import CALCULATORS  # noqa: E402
from felab_sim.engine.course import chain  # noqa: E402
from felab_sim.engine.hardware.calibration import gpu_calibration  # noqa: E402
from felab_sim.engine.hardware.hardware import hardware_preset  # noqa: E402
from felab_sim.engine.hardware.model_cost import model_cost  # noqa: E402
from felab_sim.engine.hardware.step_load import decode_load  # noqa: E402
from felab_sim.engine.models.model_presets import preset  # noqa: E402
from felab_sim.engine.serving.anchors import anchor_runs  # noqa: E402
from felab_sim.engine.serving.serving_runs import runs as serving_runs  # noqa: E402
from felab_sim.engine.serving.serving_validation import (  # noqa: E402
    FOUR_BIT_SHARE_GRID,
    PREDICTIONS_FILE,
    compute_predictions,
    export_predictions,
    fit_front_end,
    fit_request_fixed,
    run_row,
    serving_points,
    summaries,
    summary_row,
)
from felab_sim.engine.serving.simulate import ClosedLoop, EngineSettings, TraceRequest, simulate  # noqa: E402
from felab_sim.engine.serving.step_time import StepPricer, calibration_for  # noqa: E402
from felab_sim.engine.serving.validation import (  # noqa: E402
    ANCHOR_METRICS,
    FITTED,
    PREDICTED,
    markdown_row,
    validation_points,
)

DEEPSEEK = {"model": "DeepSeek-V3", "hardware": "h200", "precision": "fp8", "tensor_parallel": 8}
USERS, PROMPT, REPLY = 256, 300, 50


def table(markdown: bool) -> list[str]:
    lines = []
    points = validation_points()
    for group, title in ((FITTED, "points a number was fitted on"), (PREDICTED, "points predicted")):
        chosen = [p for p in points if p.group == group]
        met = sum(p.met for p in chosen)
        lines.append(f"\n{title} ({met} of {len(chosen)} within their targets)")
        if markdown:
            lines += [
                "",
                "| point | metric | measured | felab | error | target |",
                "| --- | --- | ---: | ---: | ---: | ---: |",
            ]
        for p in chosen:
            row = markdown_row(p)
            lines.append(
                row if markdown else "  " + "  ".join(cell.strip() for cell in row.strip("|").split("|"))
            )
    return lines


SERVING_HEADER = (
    "| group | models | metric | runs | median abs. error | p90 abs. error | floor (median / p90) |",
    "| --- | --- | --- | ---: | ---: | ---: | ---: |",
)
RUN_HEADER = (
    "| run | group | mean TTFT ms: measured → felab | mean TPOT ms | output tok/s per GPU |",
    "| --- | --- | ---: | ---: | ---: |",
)


def serving_table() -> list[str]:
    """The serving runs: the summary per group and kind of model, then every run."""
    lines = ["\nPublished serving runs, felab run as each was run (error = felab ÷ measured − 1)", ""]
    lines += [*SERVING_HEADER, *(summary_row(summary) for summary in summaries())]
    points = serving_points()
    lines += ["", *RUN_HEADER]
    lines += [run_row(run, points) for run in serving_runs() if any(p.run is run for p in points)]
    return lines


def deepseek() -> list[str]:
    """The chain's per-user speed, step-time's at the chain's context, and the engine's step."""
    walked = chain.walk({**DEEPSEEK, "peak_users": USERS, "max_num_seqs": USERS, "slo_ms": 1e6})
    chain_speed = float(walked.step("decode").value)  # type: ignore[arg-type]
    step = CALCULATORS["step-time"].run({**DEEPSEEK, "batch": USERS, "context_tokens": PROMPT + REPLY})
    step_speed = float(step.value("tok_s_per_user"))  # type: ignore[arg-type]
    settings = EngineSettings(max_num_seqs=USERS, tensor_parallel=8, bytes_per_param=1.0)
    run = simulate(
        [TraceRequest(0.0, PROMPT, REPLY)],
        preset("DeepSeek-V3").shape,
        hardware_preset("h200"),
        settings,
        closed_loop=ClosedLoop(USERS, 2 * USERS),
    )
    engine_speed = 1000 / run.summary["tpot_mean_ms"]
    shape, hardware = preset("DeepSeek-V3").shape, hardware_preset("h200")
    pricer = StepPricer(
        model_cost(shape, 1.0, 2.0, settings.parallel), hardware, calibration_for(hardware), settings.parallel
    )
    # The engine's own decode step of 256 sequences at the chain's context (the one function again).
    engine_step = 1 / pricer.step_seconds(decode_load(USERS, PROMPT + REPLY + 1), USERS)
    return [
        f"\nDeepSeek-V3, FP8, TP 8 on H200, {USERS} users of {PROMPT} + {REPLY} tokens: tok/s a user",
        f"  chain {chain_speed:.1f}; step-time {step_speed:.1f} ({100 * (chain_speed / step_speed - 1):+.1f}%); "
        f"the engine's decode step {engine_step:.1f} (chain {100 * (chain_speed / engine_step - 1):+.1f}%)",
        f"  the engine's TPOT in a closed loop of {USERS} users, new prompts prefilled between decodes: "
        f"{run.summary['tpot_mean_ms']:.1f} ms = {engine_speed:.1f} (chain {100 * (chain_speed / engine_speed - 1):+.1f}%)",
    ]


def fit() -> None:
    targets = {key: target for key, _, _, _, target in ANCHOR_METRICS}
    scored = []
    for efficiency, overhead in itertools.product(
        (0.54, 0.56, 0.58, 0.6, 0.62, 0.64, 0.66), (0.0, 0.0005, 0.001, 0.0015, 0.002)
    ):
        squares = 0.0
        for run in anchor_runs():
            hardware = hardware_preset(run.spec.hardware)
            calibration = replace(gpu_calibration(hardware), step_overhead_s=overhead)
            if run.spec.hardware == "rtx-pro-6000":
                calibration = replace(calibration, memory_efficiency=efficiency)
            result = simulate(
                list(run.trace), preset(run.spec.model).shape, hardware, run.settings, calibration
            )
            errors = run.errors(result.summary)
            squares += sum((errors[key] / target) ** 2 for key, target in targets.items())
        scored.append((squares, efficiency, overhead))
        print(
            f"  RTX PRO 6000 memory {efficiency:.2f}, vLLM {1000 * overhead:.1f} ms a step: {squares:.2f}",
            flush=True,
        )
    best = min(scored)
    print(
        f"best: memory efficiency {best[1]:.2f}, vLLM overhead {1000 * best[2]:.1f} ms (sum of squares {best[0]:.2f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="rerun the fit of the two numbers fitted on runs")
    parser.add_argument(
        "--markdown", action="store_true", help="print the tables as docs/benchmarks.md has them"
    )
    parser.add_argument(
        "--fit-serving",
        action="store_true",
        help="refit each engine's fixed cost a request on the fitted group of the serving runs",
    )
    parser.add_argument(
        "--export-serving", action="store_true", help="rerun every serving run and rewrite the stored figures"
    )
    args = parser.parse_args()
    if args.fit_serving:
        # vLLM's fitted runs are the 4-bit ones: the rate of their grouped expert products is
        # fitted with its front end.
        for engine, shares in (("vllm", FOUR_BIT_SHARE_GRID), ("sglang", (None,))):
            scored = fit_front_end(engine, shares)
            for share, serial, fixed, score in sorted(scored, key=lambda found: (found[0] or 0, found[1])):
                rate = "" if share is None else f"4-bit grouped products at {share:.3f} × BF16, "
                print(
                    f"  {engine}: {rate}{1000 * serial:4.1f} ms one at a time, {1000 * fixed:6.1f} ms delay: {score:.3f}"
                )
            share, serial, _, _ = scored[0]
            value, found, _ = fit_request_fixed(engine, serial, share)
            for run_id, residual in found:
                print(f"  {run_id}: measured median TTFT − felab's {1000 * residual:+.1f} ms")
            rate = "" if share is None else f"4-bit grouped products at {share:.3f} × BF16; "
            print(
                f"{engine}: {rate}{1000 * serial:.1f} ms a request one at a time, then {1000 * value:.1f} ms "
                f"(the median of {len(found)} fitted runs)",
                flush=True,
            )
        return 0
    if args.export_serving:
        PREDICTIONS_FILE.write_text(export_predictions(compute_predictions()))
        print(f"wrote {PREDICTIONS_FILE}")
        return 0
    if args.fit:
        fit()
        return 0
    print("felab's predictions against what was measured (error = felab ÷ measured − 1)")
    print("\n".join(table(args.markdown) + deepseek() + serving_table()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
