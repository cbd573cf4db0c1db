"""`manage.py engine`: issue 24's interface, with flags from the engine's declarations."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from felab_sim.engine.core.numbers import format_number
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving.engine_params import ENGINE_PARAMS
from felab_sim.management.commands import engine as engine_command
from tests.support.engine_runs import ON_A_4090_FLAGS

SMALL = (*ON_A_4090_FLAGS, "--requests", "12", "--output-tokens", "16")
SUMMARY_KEYS = {
    "ttft_mean_ms", "tpot_mean_ms", "latency_mean_ms", "total_s", "output_tok_s", "kv_tokens", "max_running",
}  # fmt: skip


def engine(*args: str) -> str:
    out = io.StringIO()
    call_command("engine", *args, stdout=out)
    return out.getvalue()


def as_json(*args: str) -> dict:
    return json.loads(engine(*args, "--json"))


def test_the_table_gives_the_summary_the_pool_and_the_binding_limit():
    text = engine(*ON_A_4090_FLAGS)
    assert "KV pool 41,008 tokens a GPU" in text
    assert "mean TTFT" in text and "tpot_mean_ms" in text
    assert text.strip().splitlines()[-1].startswith("KV blocks bind:")


def test_json_has_issue_24s_shape():
    data = as_json(*SMALL)
    assert set(data["summary"]) == SUMMARY_KEYS
    assert len(data["requests"]) == 12
    assert {
        "input_toks",
        "output_toks",
        "arrival_time",
        "queued_ts",
        "first_token_ts",
        "last_token_ts",
    } <= set(data["requests"][0])
    assert data["timeseries"] and set(data["timeseries"][0]) == {"t", "running", "waiting", "kv_pct"}
    assert data["timeseries"][0]["t"] == 1.0  # each second, as LLMServingSim's timeseries.csv
    assert data["binding"]["limit"] in {"blocks", "seqs", "budget", "bandwidth", "compute"}
    assert data["pool"]["kv_tokens"] == data["summary"]["kv_tokens"] == 41_008


def test_a_trace_file_is_read_with_its_other_fields_ignored(tmp_path):
    trace = tmp_path / "requests.jsonl"
    rows = [
        {
            "input_toks": 100 + i,
            "output_toks": 5,
            "arrival_time": 1000.0 + i / 10,
            "queued_ts": 0,
            "model": "x",
        }
        for i in range(7)
    ]
    trace.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    data = as_json(
        "--trace", str(trace), "--model", "Llama-3.1-8B", "--hardware", "rtx-4090", "--precision", "bf16"
    )
    assert [r["input_toks"] for r in data["requests"]] == [row["input_toks"] for row in rows]
    assert data["requests"][0]["arrival_time"] == 0  # shifted to start at 0
    assert data["requests"][-1]["arrival_time"] == pytest.approx(0.6)


def test_a_trace_line_without_a_field_is_refused_naming_the_flag(tmp_path):
    trace = tmp_path / "requests.jsonl"
    trace.write_text('{"input_toks": 5, "arrival_time": 0}\n')
    with pytest.raises(CommandError, match=r"^--trace: line 1: output_toks missing"):
        engine(
            "--trace", str(trace), "--model", "Llama-3.1-8B", "--hardware", "rtx-4090", "--precision", "bf16"
        )


def test_a_model_config_file_runs_as_its_preset(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(preset("Llama-3.1-8B").config)))
    rest = SMALL[4:]
    from_file = as_json("--model-config", str(config), "--hardware", "rtx-4090", "--precision", "bf16", *rest)
    assert from_file["summary"] == as_json(*SMALL)["summary"]
    assert from_file["params"]["model"] == "config"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--hardware", "rtx-4090", "--precision", "bf16"), "--model PRESET or --model-config FILE.json is required"),
        (("--model", "Llama-3.1-8B"), "--hardware PRESET is required"),
        (("--model", "Llama-3.1-8B", "--hardware", "rtx-4090", "--precision", "bf16", "--max-num-seqs", "0"), "^--max-num-seqs: max_num_seqs"),
        (("--model", "Llama-3.1-8B", "--hardware", "rtx-4090", "--precision", "bf16", "--expert-parallel"), "^--expert-parallel: "),
        (("--model", "Llama-3.1-8B", "--hardware", "dgx-spark"), "^--peak-tflops: peak_tflops must be typed in"),
        (("--model", "Llama-3.1-8B", "--hardware", "custom", "--peak-tflops", "100", "--bandwidth-gbs", "900"),
         "^--memory-gb: "),
        (("--model", "Llama-3.1-8B", "--hardware", "rtx-4090", "--precision", "bf16", "--input-tokens", "60000"), "^--trace: request 0"),
        (("--model", "Llama-3.1-8B", "--hardware", "h100"), "^--hardware: hardware must be one of"),
    ],
)  # fmt: skip
def test_bad_input_exits_naming_the_flag(args, message):
    with pytest.raises(CommandError, match=message):
        engine(*args)


def test_model_and_model_config_together_are_refused(tmp_path):
    config = tmp_path / "config.json"
    config.write_text("{}")
    with pytest.raises(CommandError, match="not both"):
        engine(
            "--model",
            "Llama-3.1-8B",
            "--model-config",
            str(config),
            "--hardware",
            "rtx-4090",
            "--precision",
            "bf16",
        )


def test_switches_turn_settings_from_their_defaults():
    data = as_json(*SMALL, "--no-prefix-caching")
    assert data["params"]["prefix_caching"] is False
    moe = as_json(
        "--model", "Qwen3-30B-A3B", "--hardware", "rtx-pro-6000", "--data-parallel", "2", "--expert-parallel",
        "--requests", "8", "--output-tokens", "8",
    )  # fmt: skip
    assert moe["params"]["expert_parallel"] is True and moe["params"]["data_parallel"] == 2


def test_concurrency_makes_a_closed_loop():
    data = as_json(*SMALL, "--concurrency", "3")
    assert data["params"]["workload"] == "concurrency"
    assert data["summary"]["max_running"] == 3 and len(data["requests"]) == 12


def test_every_declared_setting_has_a_flag():
    parser = engine_command.Command().create_parser("manage.py", "engine")
    flags = {option for action in parser._actions for option in action.option_strings}
    for param in ENGINE_PARAMS:
        if param.name == "workload":
            continue  # derived: --concurrency makes a closed loop
        assert engine_command.switch_flag(param) in flags if param.kind == "bool" else param.flag in flags
    assert {"--trace", "--model-config", "--json", "--expert-parallel", "--no-prefix-caching"} <= flags


def test_one_output_token_has_no_tpot_and_none_left_running_rather_than_zeros():
    one = (*SMALL[:6], "--output-tokens", "1")
    summary = as_json(*one)["summary"]
    assert summary["tpot_mean_ms"] is None and summary["max_running"] is None
    lines = {line.split()[-1]: line for line in engine(*one).splitlines() if line.strip()}
    assert "none" in lines["tpot_mean_ms"] and " 0 " not in lines["tpot_mean_ms"]
    assert "none" in lines["max_running"] and " 0 " not in lines["max_running"]


def test_a_model_larger_than_the_gpu_is_the_model_s_to_change_not_the_utilization_s():
    with pytest.raises(CommandError) as refused:
        engine("--model", "Llama-3.1-70B", "--hardware", "rtx-4090", "--precision", "bf16")
    assert str(refused.value).startswith("--model:") and "tensor_parallel 8" in str(refused.value)


DEEPSEEK_FP8 = ("--model", "DeepSeek-V3", "--hardware", "h200", "--tensor-parallel", "8")
TINY_LOAD = ("--concurrency", "4", "--requests", "4", "--input-tokens", "64", "--output-tokens", "4")


def test_deepseek_v3_runs_in_fp8_on_eight_h200s_and_is_refused_at_bf16():
    data = as_json(*DEEPSEEK_FP8, "--precision", "fp8", *TINY_LOAD)
    assert data["params"]["precision"] == "fp8"
    # Every GPU holds MLA's down-projections (7,168 × (1,536 + 512 + 64) a layer, 61 layers) and
    # the routers (7,168 × 256, 58 MoE layers) whole, an eighth of the rest; each FP8 weight with
    # its share of a 128 × 128 block's 4-byte scale.
    whole = 61 * 7168 * (1536 + 512 + 64) + 58 * 7168 * 256
    split = (preset("DeepSeek-V3").shape.total_params - whole) / 8
    assert data["pool"]["weight_bytes"] == pytest.approx((split + whole) * (1 + 4 / 128**2), rel=1e-6)
    assert len(data["requests"]) == 4
    with pytest.raises(CommandError, match=r"169\.6 GB a GPU"):
        engine(*DEEPSEEK_FP8, "--precision", "bf16", *TINY_LOAD)


def test_a_calibration_file_changes_the_steps(tmp_path):
    slow = tmp_path / "slow.jsonl"
    slow.write_text('{"kind": "bandwidth", "op": "read", "gbs": 100.0}\n')
    base = as_json(*SMALL)["summary"]["tpot_mean_ms"]
    assert as_json(*SMALL, "--calibration", str(slow))["summary"]["tpot_mean_ms"] > 3 * base
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(CommandError, match="--calibration: calibration cannot be read: line 1"):
        engine(*SMALL, "--calibration", str(bad))


def nearest_rank(values: list[float], percent: int) -> float:
    """The smallest value that at least ``percent`` of the values are within."""
    return min(v for v in values if 100 * sum(w <= v for w in values) >= percent * len(values))


def test_tail_latencies_are_the_simulated_requests_nearest_rank_percentiles_in_json_and_table():
    data = as_json(*SMALL)
    requests = data["requests"]
    ttfts = [1000 * (r["first_token_ts"] - r["queued_ts"]) for r in requests]
    tpots = [1000 * (r["last_token_ts"] - r["first_token_ts"]) / (r["output_toks"] - 1) for r in requests]
    for percent in (50, 90, 99):
        assert data["percentiles"][f"ttft_p{percent}_ms"] == pytest.approx(nearest_rank(ttfts, percent))
        assert data["percentiles"][f"tpot_p{percent}_ms"] == pytest.approx(nearest_rank(tpots, percent))
    assert data["percentiles"]["ttft_p99_ms"] > data["percentiles"]["ttft_p50_ms"]
    lines = {line.split()[-1]: line for line in engine(*SMALL).splitlines() if line.strip()}
    assert lines["ttft_p99_ms"].startswith("TTFT p50 / p90 / p99")
    assert format_number(data["percentiles"]["tpot_p99_ms"]) in lines["tpot_p99_ms"]


def test_the_table_gives_each_figure_its_expected_error_and_marks_a_gpu_scaled_from_the_h200():
    on_h100 = engine(
        "--model", "Llama-3.1-8B", "--hardware", "h100-pcie", "--requests", "12", "--output-tokens", "16"
    )
    lines = {line.split()[-1]: line for line in on_h100.splitlines() if line.strip()}
    expected = as_json(*SMALL)["expected_error"]["figures"]
    for key in ("ttft_mean_ms", "tpot_mean_ms", "tpot_p99_ms", "output_tok_s"):
        share = format_number(round(100 * expected[key]["share"], 1))
        assert f"±{share}%" in lines[key], lines[key]
    # The published runs measured throughput: the run's time, its tokens ÷ it, takes the band through
    # the division.
    total = expected["total_s"]
    assert total["reciprocal"] and total["share"] == expected["output_tok_s"]["share"]
    low, high = (format_number(round(100 * total[end], 1)) for end in ("low_share", "high_share"))
    assert f"−{low}% / +{high}%" in lines["total_s"], lines["total_s"]
    assert "scaled from the H200" in on_h100
    assert "scaled from the H200" not in engine(*SMALL)
