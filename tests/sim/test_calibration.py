"""Calibrations from measurements (felab_sim/engine/hardware/calibration.py): the H200's file and a user's."""

from __future__ import annotations

import json

import pytest

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.hardware.calibration import (
    MEASURED_FILES,
    default_calibration,
    engine_calibration,
    gpu_calibration,
    measured_calibrations,
)
from felab_sim.engine.hardware.hardware import hardware_preset

H200 = hardware_preset("h200")


def test_the_h200s_calibration_is_its_measured_file():
    calibration = measured_calibrations()["h200"]
    assert calibration.memory_efficiency * 4800 == pytest.approx(4307.7)
    assert calibration.compute_efficiency * 989.4 == pytest.approx(797.0)
    assert calibration.fp8_compute_efficiency * 1978.9 == pytest.approx(1467.0)
    # The knee's B = 1 product: 34.2 µs, of which its bytes at 4,307.7 GB/s take 27.3 µs.
    assert calibration.kernel_latency_s == pytest.approx(6.93e-6, rel=1e-3)
    assert calibration.step_overhead_s == 0


def test_a_product_of_fewer_rows_computes_at_the_knees_measured_rate():
    calibration = measured_calibrations()["h200"]
    # The knee's compute-bound rows ÷ the 8192³ product's 797 TFLOP/s: 662.26 at 256, 706.55 at 512.
    assert 797 * calibration.matrix_share(512) == pytest.approx(706.55, rel=1e-3)
    assert 797 * calibration.matrix_share(256) == pytest.approx(662.26, rel=1e-3)
    assert calibration.matrix_share(64) == calibration.matrix_share(256)  # memory-bound there
    assert calibration.matrix_share(8192) == calibration.matrix_share(100_000) == 1
    assert default_calibration().matrix_rows == calibration.matrix_rows  # the stated default
    assert default_calibration().attention_efficiency == 0.35  # FlashAttention-2 on an H100


def test_a_file_without_knee_rows_takes_the_defaults_share_by_rows_of_its_own_large_product():
    rows = [
        {"kind": "bandwidth", "op": "read", "gbs": 2400.0},
        {"kind": "gemm", "dtype": "bf16", "tflops": 300.0},
    ]
    mine = gpu_calibration(H200, "\n".join(json.dumps(row) for row in rows))
    assert mine.compute_efficiency * 989.4 == pytest.approx(300)
    assert mine.matrix_rows == default_calibration().matrix_rows


def test_an_unmeasured_gpu_gets_the_measured_ratios_said_so():
    h100 = gpu_calibration(hardware_preset("h100-sxm"))
    assert h100 == default_calibration()
    assert h100.memory_efficiency == measured_calibrations()["h200"].memory_efficiency
    assert h100.source.startswith("not measured: the default")


def test_a_file_of_tiny_kernels_measures_the_kernel_cost_directly():
    rows = [
        {"kind": "bandwidth", "op": "read", "gbs": 2400.0},
        {"kind": "overhead", "layers": 32, "kernels_per_layer": 10, "s": 0.00096},
    ]
    calibration = gpu_calibration(H200, "\n".join(json.dumps(row) for row in rows))
    assert calibration.memory_efficiency == pytest.approx(0.5)
    assert calibration.kernel_latency_s == pytest.approx(3e-6)
    assert calibration.source == "your calibration file"
    assert engine_calibration(
        H200, "\n".join(json.dumps(row) for row in rows)
    ).kernel_latency_s == pytest.approx(3e-6)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "line 1 is not JSON"),
        ('{"gbs": 1}', "line 1 has no kind"),
        ('{"kind": "bandwidth", "op": "read", "gbs": -3}', "must be a positive number"),
        ('{"kind": "device", "name": "x"}', "no bandwidth, gemm or knee rows"),
    ],
)
def test_a_file_that_cannot_be_read_is_refused_naming_the_calibration(text, message):
    with pytest.raises(ParamError) as refused:
        gpu_calibration(H200, text)
    assert refused.value.param == "calibration" and message in refused.value.message


def test_a_calibrations_bounds_are_the_typed_fields_bounds():
    # The reader holds measured figures to the ranges a student could type; a change to one of
    # the declarations must move the calibration's bound with it.
    from felab_sim.engine.calculators import CALCULATORS
    from felab_sim.engine.hardware.calibration import FIGURE_BOUNDS

    declared = {param.name: param for param in CALCULATORS["decode-ceiling"].params}
    for figure, field in (("gbs", "bandwidth_gbs"), ("tflops", "peak_tflops")):
        low, high, _ = FIGURE_BOUNDS[figure]
        assert (low, high) == (declared[field].low, declared[field].high), figure


def test_the_h200s_memory_is_the_total_cuda_reported_on_the_measured_card():
    # The first line of measured/h200.jsonl: torch's total_memory on a real H200.
    device = json.loads(MEASURED_FILES["h200"].read_text().splitlines()[0])
    assert device["kind"] == "device"
    assert H200.memory_bytes / 2**30 == pytest.approx(device["memory_gib"], abs=0.05)
    assert H200.memory_bytes_measured
    assert H200.memory_bytes / 1e9 == pytest.approx(150.1, abs=0.05)  # GB, not the 141 printed
