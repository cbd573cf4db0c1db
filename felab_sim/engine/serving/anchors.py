"""The three measured vLLM runs issue 24 names, as the web app needs them at run time.

LLMServingSim (github.com/casys-kaist/LLMServingSim, MIT) commits real vLLM 0.19 runs under
``bench/examples/HARDWARE/MODEL/vllm/``. felab keeps a small file derived from three of them,
``anchor_runs.json`` beside this module, written by ``bench/bench_engine.py --export-anchors``
(:func:`derive` is what it runs): per run the trace (arrival, prompt and output tokens of each
request), the engine's settings, its KV pool where meta.json records it, the per-second running,
waiting and KV% curves of timeseries.csv, and the summary means computed with issue 24's
definitions from requests.jsonl. The file's ``source`` names the repository, commit, files and
licence. The repository's other runs are kept back for an independent check: never read here.

When the engine page's settings are one of these runs (its model, GPU, parallelism, engine
settings and its trace), the page draws the measured run over felab's. A 300-request run costs
more CPU than a web request's 250 ms, so each run's ``felab`` section keeps felab's own run of it
(every field of the Result, lesson 03's sweep beside it, and the engine inputs that produced them),
computed by the same export; tests/sim/test_anchor_felab.py re-simulates each one and asserts the
stored run equals the engine's, so the stored numbers cannot drift from it. Pure Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .run_results import Result, measured_summary, result_from_stored
from .simulate import EngineSettings, TraceRequest, read_trace

ANCHOR_FILE = Path(__file__).with_name("anchor_runs.json")
# The summary means compared, with the targets bench/bench_engine.py holds the engine to.
MEASURED_KEYS = ("ttft_mean_ms", "tpot_mean_ms", "latency_mean_ms", "total_s", "output_tok_s")
# The settings a run is recognised by, as the engine's parameters name them.
SETTING_NAMES = (
    "tensor_parallel",
    "data_parallel",
    "expert_parallel",
    "max_num_seqs",
    "max_num_batched_tokens",
    "block_size",
    "gpu_memory_utilization",
    "prefix_caching",
)


@dataclass(frozen=True)
class AnchorSpec:
    """Where a run lives in LLMServingSim and which of felab's presets it ran on."""

    folder: str  # under bench/examples/
    model: str  # felab's model preset
    hardware: str  # felab's hardware preset
    settings: EngineSettings  # what meta.json leaves unsaid (the Qwen run's DP and EP are stated)
    gpu_label: str  # the GPU as LLMServingSim's folder names it

    @property
    def label(self) -> str:
        return self.folder.replace("/", " ")


ANCHOR_SPECS = (
    AnchorSpec(
        "RTX4090/Llama-3.1-8B", "Llama-3.1-8B", "rtx-4090", EngineSettings(max_num_seqs=256), "RTX 4090"
    ),
    AnchorSpec(
        "RTXPRO6000/Llama-3.1-8B",
        "Llama-3.1-8B",
        "rtx-pro-6000",
        EngineSettings(max_num_seqs=128),
        "RTX PRO 6000",
    ),
    AnchorSpec(
        "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507",
        "Qwen3-30B-A3B",  # the Instruct-2507 release has the base model's config.json shape
        "rtx-pro-6000",
        EngineSettings(max_num_seqs=128, data_parallel=2, expert_parallel=True),
        "RTX PRO 6000",
    ),
)


@dataclass(frozen=True)
class AnchorRun:
    """One measured run as the file keeps it."""

    spec: AnchorSpec
    settings: EngineSettings
    trace: tuple[TraceRequest, ...]
    summary: dict[str, float]  # measured means, issue 24's definitions
    kv_tokens: int | None  # the engine's own pool (one GPU) where meta.json records it
    timeseries: dict[str, list[float]]  # "t", "running", "waiting", "kv_pct": one a second
    where: str  # the device and vLLM version, as meta.json states them
    felab: Mapping[str, Any] | None = None  # felab's stored run of it (engine_params.anchor_felab)

    def felab_inputs(self) -> Mapping[str, Any] | None:
        """What produced the stored run: model and hardware presets, every engine setting, the
        timeseries' sample interval and the sweep's work cap (None if the file has no run)."""
        return None if self.felab is None else self.felab["inputs"]

    def felab_result(self) -> Result | None:
        return None if self.felab is None else _stored_result(self.spec.folder)

    def felab_result_for(self, settings: EngineSettings) -> Result | None:
        """The stored run if it was simulated with exactly these engine settings."""
        inputs = self.felab_inputs()
        if inputs is None or inputs["settings"] != asdict(settings):
            return None
        return self.felab_result()

    def felab_sweep(self) -> list[dict[str, float]] | None:
        if self.felab is None or self.felab["sweep"] is None:
            return None
        return [dict(level) for level in self.felab["sweep"]]

    def setting_values(self) -> dict[str, object]:
        return {name: getattr(self.settings, name) for name in SETTING_NAMES}

    def errors(self, felab: Mapping[str, float]) -> dict[str, float]:
        """felab's mean against the measured one: felab ÷ measured − 1, per metric."""
        return {key: felab[key] / self.summary[key] - 1 for key in MEASURED_KEYS}


def settings_from_meta(spec: AnchorSpec, meta: Mapping[str, Any]) -> EngineSettings:
    """The run's own engine settings where its meta.json states them, the spec's elsewhere."""
    kwargs = meta.get("engine_kwargs", {})
    cache_config = meta.get("kv_cache") or {}
    base = spec.settings
    return EngineSettings(
        max_num_seqs=kwargs.get("max_num_seqs", base.max_num_seqs),
        max_num_batched_tokens=kwargs.get("max_num_batched_tokens", base.max_num_batched_tokens),
        tensor_parallel=kwargs.get("tensor_parallel_size", base.tensor_parallel),
        data_parallel=kwargs.get("data_parallel_size", base.data_parallel),
        expert_parallel=kwargs.get("enable_expert_parallel", base.expert_parallel),
        block_size=cache_config.get("block_size", base.block_size),
        gpu_memory_utilization=cache_config.get("gpu_memory_utilization", base.gpu_memory_utilization),
        prefix_caching=cache_config.get("enable_prefix_caching", base.prefix_caching),
    )


def derive(
    spec: AnchorSpec, rows: list[dict], meta: Mapping[str, Any], timeseries: Iterable[Mapping[str, str]]
) -> dict[str, Any]:
    """One run's entry of anchor_runs.json from its three files (rows: requests.jsonl's lines;
    timeseries: timeseries.csv's rows)."""
    trace = read_trace(json.dumps(row) for row in rows)
    summary = measured_summary(rows)
    series = list(timeseries)
    settings = settings_from_meta(spec, meta)
    # meta.json names the device only in the 4090 run; the others' folder names the GPU (not
    # its edition: felab's preset is the workstation card's spec sheet).
    recorded = meta.get("hardware") or {}
    gpus = recorded.get("device_count") or settings.tensor_parallel * settings.data_parallel
    device = recorded.get("device_name") or f"{spec.gpu_label} (as the run's folder names it)"
    return {
        "folder": spec.folder,
        "where": f"vLLM {meta.get('vllm_version', '?')} on {gpus} × {device}",
        "settings": {name: getattr(settings, name) for name in SETTING_NAMES},
        "kv_tokens": (meta.get("kv_cache") or {}).get("num_kv_tokens"),
        "summary": {key: summary[key] for key in MEASURED_KEYS},
        "timeseries": {
            "t": [float(row["t"]) for row in series],
            "running": [int(float(row["running"])) for row in series],
            "waiting": [int(float(row["waiting"])) for row in series],
            "kv_pct": [float(row["kv_cache_pct"]) for row in series],
        },
        # Arrival (seconds after the first), prompt and output tokens: read_trace's exact floats.
        "trace": [[r.arrival, r.prompt_tokens, r.output_tokens] for r in trace],
    }


def run_from_entry(spec: AnchorSpec, entry: Mapping[str, Any]) -> AnchorRun:
    return AnchorRun(
        spec,
        EngineSettings(**entry["settings"]),
        tuple(TraceRequest(float(a), int(p), int(o)) for a, p, o in entry["trace"]),
        dict(entry["summary"]),
        entry["kv_tokens"],
        {key: list(values) for key, values in entry["timeseries"].items()},
        entry["where"],
        entry.get("felab"),
    )


@cache
def _stored_result(folder: str) -> Result:
    """felab's stored run of one measured trace, read once a process."""
    entry = next(entry for entry in anchor_file()["runs"] if entry["folder"] == folder)
    return result_from_stored(entry["felab"]["result"])


@cache
def anchor_file() -> dict[str, Any]:
    return json.loads(ANCHOR_FILE.read_text())


def anchor_source() -> str:
    """Where the runs come from, as the page and engine.json cite them."""
    source = anchor_file()["source"]
    return f"LLMServingSim ({source['repository']}, {source['licence']}) at {source['commit'][:12]}"


@cache
def anchor_runs() -> tuple[AnchorRun, ...]:
    entries = {entry["folder"]: entry for entry in anchor_file()["runs"]}
    return tuple(run_from_entry(spec, entries[spec.folder]) for spec in ANCHOR_SPECS)


def bundled_trace(model: str, hardware: str) -> tuple[TraceRequest, ...]:
    """LLMServingSim's 300-request ShareGPT trace as a measured run sent it: the run on this
    model and GPU if there is one (each run's arrivals are its own, a few ms apart), else the
    first run on this model (the Qwen3 run's tokenizer counts the same prompts differently),
    else the RTX 4090 Llama 3.1 run's."""
    runs = anchor_runs()
    for run in runs:
        if (run.spec.model, run.spec.hardware) == (model, hardware):
            return run.trace
    for run in runs:
        if run.spec.model == model:
            return run.trace
    return runs[0].trace


def matching_anchor(
    model: str, hardware: str, hardware_changed: bool, settings: EngineSettings, on_trace: bool
) -> AnchorRun | None:
    """The measured run these settings repeat, if any: the same model and GPU preset (no figure
    typed over it), every engine setting the run's, and its trace."""
    if not on_trace or hardware_changed:
        return None
    for run in anchor_runs():
        if (
            run.spec.model == model
            and run.spec.hardware == hardware
            and all(getattr(settings, name) == value for name, value in run.setting_values().items())
        ):
            return run
    return None
