"""`manage.py engine`: a workload through the continuous-batching engine (issue 24's interface).

    manage.py engine --trace FILE.jsonl (--model-config FILE.json | --model PRESET) --hardware PRESET
        [--calibration FILE.jsonl] [--precision bf16|fp8|mxfp4 --tensor-parallel N --data-parallel N --expert-parallel --max-num-seqs 256
         --max-num-batched-tokens 2048 --block-size 16 --gpu-memory-utilization 0.9
         --no-prefix-caching] [--json]

With ``--curve`` it runs the planner's curve instead of one workload (felab_sim/engine/serving/planner.py):
throughput per GPU against tokens per second per user at C = 1, 2, 4, … up to
``--curve-max-concurrency``, goodput at ``--ttft-target-ms`` and ``--tpot-target-ms``, dollars per
million output tokens, and the published runs at the same settings; its budget of simulation work
is far larger than the web's, and it stops itself too, saying what to change.

Without ``--trace``: ``--requests N --rate R --input-tokens A --output-tokens B`` (Poisson
arrivals, the same seed each time), or ``--concurrency C`` for a closed loop (with ``--trace``
the closed loop repeats the trace's sizes). The trace is LLMServingSim's requests file
(``input_toks``, ``output_toks``, ``arrival_time`` in seconds; other fields ignored). The flags
come from the engine's declarations (felab_sim/engine/serving/engine_params.py); a bad value
exits non-zero naming its flag. No web caps here.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.core.numbers import format_number
from felab_sim.engine.core.params import Param, ParamError
from felab_sim.engine.serving.binding import binding_limit
from felab_sim.engine.serving.engine_params import (
    CONCURRENCY,
    ENGINE_PARAMS,
    HARDWARE_FIGURES,
    MODEL_CONFIG,
    PASTED,
    RATE,
    EngineInputs,
    engine_inputs,
    parse_engine_values,
    run_engine,
    run_json,
)
from felab_sim.engine.serving.planner import (
    COMMAND_CURVE_WORK,
    PLANNER_PARAMS,
    PRICE_NOTE,
    Plan,
    best_sentence,
    parse_planner_values,
    plan,
    server_sentence,
    share_text,
    simulate_curve,
)
from felab_sim.engine.serving.refusals import no_kv_block
from felab_sim.engine.serving.run_results import TAIL_PERCENTS, Result, tail_latencies
from felab_sim.engine.serving.serving_runs import FIT
from felab_sim.engine.serving.simulate import TraceRequest, read_trace
from felab_sim.engine.serving.validation import (
    ENGINE_RECIPROCAL_NAMES,
    SCALED_NOTE,
    band_legend,
    engine_expected_errors,
    scaled_from_h200,
)
from felab_sim.management.declared import add_declared_flags, flag_error, given_flags

# Derived from the flags given rather than a flag of its own: --concurrency makes a closed loop.
WORKLOAD = "workload"
VALUED = tuple(p for p in ENGINE_PARAMS if p.kind != "bool" and p.name != WORKLOAD)
SWITCHES = tuple(p for p in ENGINE_PARAMS if p.kind == "bool")
SUMMARY = (
    ("ttft_mean_ms", "mean TTFT", "ms"),
    ("tpot_mean_ms", "mean TPOT", "ms"),
    ("latency_mean_ms", "mean latency", "ms"),
    ("total_s", "total time", "s"),
    ("output_tok_s", "output throughput", "tok/s"),
    ("kv_tokens", "KV pool", "tokens"),
    ("max_running", "most running at once", ""),
)
# The percentiles printed under a mean: the figure's name in tail_latencies and the line's label.
TAIL_LABELS = {
    "ttft_mean_ms": (("ttft", "TTFT p50 / p90 / p99"),),
    "tpot_mean_ms": (("tpot", "TPOT p50 / p90 / p99"),),
}


def switch_flag(param: Param) -> str:
    """A switch that turns a setting away from its default: --expert-parallel, --no-prefix-caching."""
    return param.flag if not param.default else "--no-" + param.flag[2:]


def legend_text(legend: list[str]) -> str:
    """The ± bands' legend as sentences: the page's words, each line a sentence."""
    return "± is the expected error. " + " ".join(f"{line[0].upper()}{line[1:]}." for line in legend)


def format_table(inputs: EngineInputs, result: Result, sentence: str) -> str:
    """The run as a table: each figure, its expected error from the validation table, its key."""
    pool = result.pool
    gpus = inputs.settings.tensor_parallel * inputs.settings.data_parallel
    lines = [
        f"{inputs.hardware.vendor_name}, {gpus} GPU{'s' if gpus > 1 else ''}: KV pool "
        f"{format_number(pool.kv_tokens)} tokens a GPU ({format_number(pool.num_blocks)} blocks of "
        f"{pool.block_size}), weights {pool.weight_bytes / 1e9:.1f} GB a GPU",
    ]
    errors = engine_expected_errors(inputs.shape.is_moe)
    tails = tail_latencies(result.requests)
    rows = []
    for key, label, unit in SUMMARY:
        figure = result.summary.get(key)
        value = "none" if figure is None else f"{format_number(figure)} {unit}".rstrip()
        rows.append((label, value, errors[key].text if key in errors else "", key))
        for name, tail_label in TAIL_LABELS.get(key, ()):
            keys = [f"{name}_p{percent}_ms" for percent in TAIL_PERCENTS]
            shown = " / ".join("none" if tails[k] is None else format_number(tails[k]) for k in keys)
            rows.append((tail_label, f"{shown} ms", errors[keys[0]].text, " ".join(keys)))
    width = max(len(label) for label, *_ in rows)
    for label, value, error, key in rows:
        lines.append(f"{label.ljust(width)}  {value}{f'  {error}' if error else ''}  {key}")
    lines.append(legend_text(band_legend(errors, ENGINE_RECIPROCAL_NAMES)))
    if inputs.calibration is None and scaled_from_h200(inputs.hardware.name):
        lines.append(f"{inputs.hardware.vendor_name}: {SCALED_NOTE}.")
    lines.append(sentence)
    return "\n".join(lines)


def format_curve(inputs: EngineInputs, planned: Plan) -> str:
    """The curve as a table: a line a concurrency, each column's expected error in its heading,
    then the measured runs at these settings and the planner's answer."""
    errors = planned.errors
    gpus = planned.gpus
    lines = [
        f"{inputs.hardware.vendor_name}, {gpus} GPU{'s' if gpus > 1 else ''}: the curve at "
        f"{planned.curve.lengths[0]:,} and {planned.curve.lengths[1]:,} tokens (each drawn from 80-100%), "
        f"goodput at TTFT <= {format_number(planned.targets.ttft_ms)} ms and TPOT <= "
        f"{format_number(planned.targets.tpot_ms)} ms",
    ]
    head = (
        "C",
        f"tok/s/GPU {errors['output_tok_s_per_gpu'].text}",
        f"tok/s/user {errors['tok_s_per_user'].text}",
        f"TTFT ms {errors['ttft_mean_ms'].text}",
        f"TPOT ms {errors['tpot_mean_ms'].text}",
        "meeting both",
        f"goodput tok/s/GPU {errors['goodput_tok_s_per_gpu'].text}",
        f"$/M out {errors['usd_per_m_output_tokens'].text}",
    )
    rows = [head]
    for level in planned.levels:
        rows.append(
            (
                f"{level.concurrency}{' *' if planned.best is level else ''}",
                format_number(level.output_tok_s_per_gpu),
                "none" if level.tok_s_per_user is None else format_number(level.tok_s_per_user),
                format_number(level.ttft_mean_ms),
                "none" if level.tpot_mean_ms is None else format_number(level.tpot_mean_ms),
                f"{share_text(level.meeting_share)} ({share_text(level.meeting_share_low)}-{share_text(level.meeting_share_high)})"
                + (" ok" if level.meets else ""),
                format_number(level.goodput_tok_s_per_gpu),
                f"{level.usd_per_m_tokens:,.2f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines += ["  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    if planned.curve.stopped_because:
        lines.append(planned.curve.stopped_because + ".")
    for point in planned.measured:
        run = point.run
        shown = ", ".join(f"{key} {100 * error:+.1f}%" for key, error in point.errors().items())
        lines.append(
            f"measured C={run.concurrency} ({'fitted' if point.group == FIT else 'predicted'}, {run.engine} "
            f"{run.engine_version}): {format_number(run.output_tok_s_per_gpu)} tok/s/GPU, "
            f"{format_number(point.tok_s_per_user)} tok/s/user, TTFT {format_number(run.ttft_mean_ms)} ms, "
            f"TPOT {format_number(run.tpot_mean_ms)} ms{f'; felab {shown}' if shown else ''} ({run.source_group})"
        )
    for i, o, n in planned.other_lengths:
        lines.append(f"measured at other lengths: {n} run{'s' if n > 1 else ''} at {i:,} in, {o:,} out")
    price = planned.gpu_hour
    lines.append(f"$ at {price.usd:.2f} a {price.unit}: {price.source}; {PRICE_NOTE}.")
    lines.append(server_sentence(planned.curve) + ".")
    lines.append(legend_text(planned.error_legend))
    if planned.scaled_from_h200:
        lines.append(f"{inputs.hardware.vendor_name}: {SCALED_NOTE}.")
    lines.append(
        f"Work: {planned.curve.work:,.0f} of {planned.curve.budget:,.0f} units. * marks the best concurrency."
    )
    lines.append(best_sentence(planned))
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Run a workload through felab_sim's continuous-batching engine (vLLM V1's scheduler)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--trace", type=Path, metavar="FILE.jsonl", help="LLMServingSim's requests.jsonl")
        parser.add_argument(
            "--model-config",
            type=Path,
            dest=MODEL_CONFIG,
            metavar="FILE.json",
            help="a model's config.json (instead of --model)",
        )
        parser.add_argument(
            "--calibration",
            type=Path,
            metavar="FILE.jsonl",
            help="the GPU's measurements (tools/measure_gpu.py writes them) instead of its own calibration",
        )
        add_declared_flags(parser, VALUED)
        for param in SWITCHES:
            parser.add_argument(
                switch_flag(param),
                dest=param.name,
                action="store_const",
                const=not param.default,
                default=argparse.SUPPRESS,
                help=f"{param.help} (default {'on' if param.default else 'off'})",
            )
        parser.add_argument(
            "--curve",
            action="store_true",
            help="run the planner's curve (throughput per GPU against tokens/s per user over concurrency) "
            "instead of one workload",
        )
        add_declared_flags(parser, PLANNER_PARAMS)
        parser.add_argument("--json", action="store_true", help="print JSON instead of the table")

    def handle(self, *args, **options) -> None:
        given = given_flags(options, VALUED) | {
            p.name: options[p.name] for p in SWITCHES if p.name in options
        }
        config_path = options.get(MODEL_CONFIG)
        if config_path is not None and "model" in given:
            raise CommandError("give --model or --model-config, not both")
        if config_path is None and "model" not in given:
            raise CommandError("--model PRESET or --model-config FILE.json is required")
        if "hardware" not in given:
            raise CommandError("--hardware PRESET is required (or --hardware custom with its figures)")
        config = None
        if config_path is not None:
            config = self.read_file(config_path, "--model-config")
            given["model"] = PASTED
        given[WORKLOAD] = CONCURRENCY if "concurrency" in given else RATE
        trace = self.trace(options["trace"]) if options["trace"] else None
        calibration = options.get("calibration")
        calibration_text = self.read_file(calibration, "--calibration") if calibration else None
        planner_given = given_flags(options, PLANNER_PARAMS)
        if planner_given and not options["curve"]:
            flag = PLANNER_PARAMS[[p.name for p in PLANNER_PARAMS].index(next(iter(planner_given)))].flag
            raise CommandError(f"{flag} is a setting of the curve: add --curve")
        if options["curve"] and trace is not None:
            raise CommandError("--trace: the curve runs its own closed loops; leave out --trace")
        try:
            values = parse_engine_values(given)
            inputs = engine_inputs(values, config, trace, calibration_text)
            planner = parse_planner_values(planner_given)
        except ParamError as error:
            raise self.named(error) from error
        if options["curve"]:
            self.curve(
                values,
                planner,
                inputs,
                typed_in=config is not None or calibration is not None,
                json_out=options["json"],
            )
            return
        try:
            result = run_engine(inputs, work_budget=math.inf)  # the command line has no cap
        except ParamError as error:
            if error.param == "gpu_memory_utilization":  # the pool holds no KV block
                model = str(config_path) if config_path is not None else str(values["model"])
                error = no_kv_block(error, values, inputs, model)
            raise self.named(error) from error
        binding = binding_limit(result, inputs.settings)
        if options["json"]:
            self.stdout.write(json.dumps(run_json(values, result, binding, inputs), indent=2))
        else:
            self.stdout.write(format_table(inputs, result, binding.sentence))

    def curve(self, values, planner, inputs: EngineInputs, typed_in: bool, json_out: bool) -> None:
        top = int(planner["curve_max_concurrency"])
        curve = simulate_curve(
            inputs,
            top,
            int(values["input_tokens"]),
            int(values["output_tokens"]),
            COMMAND_CURVE_WORK,
            "shorten --output-tokens or lower --curve-max-concurrency",
        )
        typed_in = typed_in or any(values[name] is not None for name in HARDWARE_FIGURES)
        planned = plan(curve, values, planner, inputs, hardware_typed_in=typed_in)
        if json_out:
            self.stdout.write(
                json.dumps(
                    {"params": dict(values), "curve": {"params": planner, **planned.as_json()}}, indent=2
                )
            )
        else:
            self.stdout.write(format_curve(inputs, planned))

    def named(self, error: ParamError) -> CommandError:
        if error.param == "trace":
            return CommandError(f"--trace: {error.message}")
        return flag_error(error)

    def read_file(self, path: Path, flag: str) -> str:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"{flag}: cannot read {path}: {error}") from error

    def trace(self, path: Path) -> list[TraceRequest]:
        try:
            return read_trace(self.read_file(path, "--trace").splitlines())
        except ValueError as error:  # a line that is not JSON, or lacks a field
            raise CommandError(f"--trace: {error}") from error
