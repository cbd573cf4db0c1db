"""`manage.py engine`: a workload through the continuous-batching engine (issue 24's interface).

    manage.py engine --trace FILE.jsonl (--model-config FILE.json | --model PRESET) --hardware PRESET
        [--calibration FILE.jsonl] [--precision bf16|fp8 --tensor-parallel N --data-parallel N --expert-parallel --max-num-seqs 256
         --max-num-batched-tokens 2048 --block-size 16 --gpu-memory-utilization 0.9
         --no-prefix-caching] [--json]

Without ``--trace``: ``--requests N --rate R --input-tokens A --output-tokens B`` (Poisson
arrivals, the same seed each time), or ``--concurrency C`` for a closed loop (with ``--trace``
the closed loop repeats the trace's sizes). The trace is LLMServingSim's requests file
(``input_toks``, ``output_toks``, ``arrival_time`` in seconds; other fields ignored). The flags
come from the engine's declarations (felab_sim/engine/batching/engine_params.py); a bad value
exits non-zero naming its flag. No web caps here.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.batching.binding import binding_limit
from felab_sim.engine.batching.engine_params import (
    CONCURRENCY,
    ENGINE_PARAMS,
    MODEL_CONFIG,
    PASTED,
    RATE,
    EngineInputs,
    engine_inputs,
    parse_engine_values,
    run_engine,
    run_json,
)
from felab_sim.engine.batching.refusals import no_kv_block
from felab_sim.engine.batching.simulate import Result, TraceRequest, read_trace
from felab_sim.engine.numbers import format_number
from felab_sim.engine.params import Param, ParamError
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


def switch_flag(param: Param) -> str:
    """A switch that turns a setting away from its default: --expert-parallel, --no-prefix-caching."""
    return param.flag if not param.default else "--no-" + param.flag[2:]


def format_table(inputs: EngineInputs, result: Result, sentence: str) -> str:
    pool = result.pool
    gpus = inputs.settings.tensor_parallel * inputs.settings.data_parallel
    lines = [
        f"{inputs.hardware.vendor_name}, {gpus} GPU{'s' if gpus > 1 else ''}: KV pool "
        f"{format_number(pool.kv_tokens)} tokens a GPU ({format_number(pool.num_blocks)} blocks of "
        f"{pool.block_size}), weights {pool.weight_bytes / 1e9:.1f} GB a GPU",
    ]
    width = max(len(label) for _, label, _ in SUMMARY)
    for key, label, unit in SUMMARY:
        figure = result.summary.get(key)
        value = "none" if figure is None else f"{format_number(figure)} {unit}".rstrip()
        lines.append(f"{label.ljust(width)}  {value}  {key}")
    lines.append(sentence)
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
        try:
            values = parse_engine_values(given)
            inputs = engine_inputs(values, config, trace, calibration_text)
        except ParamError as error:
            raise self.named(error) from error
        try:
            result = run_engine(inputs, work_budget=math.inf)  # the command line has no cap
        except ParamError as error:
            if error.param == "gpu_memory_utilization":  # the pool holds no KV block
                model = str(config_path) if config_path is not None else str(values["model"])
                error = no_kv_block(error, values, inputs, model)
            raise self.named(error) from error
        binding = binding_limit(result, inputs.settings)
        if options["json"]:
            self.stdout.write(json.dumps(run_json(values, result, binding), indent=2))
        else:
            self.stdout.write(format_table(inputs, result, binding.sentence))

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
