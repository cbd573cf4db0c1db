import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[2]
# The course's published table: C -> (agg_tok_s, user_tok_s, ttft_p50_ms).
COURSE = {1: (54.1, 54.9, 25.4), 8: (275.1, 38.9, 26.3), 16: (294.3, 38.9, 2776.3)}


def sweep(*args: str) -> str:
    out = io.StringIO()
    call_command("sweep", *args, stdout=out)
    return out.getvalue()


def test_table_reproduces_the_course_within_tolerance():
    rows = {}
    for line in sweep().splitlines()[1:-1]:
        conc, _requests, agg, user, p50, _p95, _goodput = line.split()
        rows[int(conc)] = (float(agg), float(user), float(p50))
    for conc, (agg, user, p50) in COURSE.items():
        assert rows[conc][0] == pytest.approx(agg, rel=0.01)
        assert rows[conc][1] == pytest.approx(user, rel=0.01)
        assert rows[conc][2] == pytest.approx(p50, rel=0.05)
    assert sweep().splitlines()[-1] == "capacity at TTFT p95 <= 500 ms: C = 8"


def test_json_has_design_md_shape_and_flags():
    data = json.loads(sweep("--levels", "1,8", "--slots", "8", "--step-ms", "18", "--growth", "0.06",
                            "--max-tokens", "128", "--slo-ms", "500", "--request-overhead-ms", "0",
                            "--token-overhead-ms", "0", "--json"))  # fmt: skip
    assert [level["conc"] for level in data["levels"]] == [1, 8]
    assert data["levels"][0]["user_tok_s"] == pytest.approx(1000 / 18, abs=0.1)
    assert data["levels"][1]["user_tok_s"] == pytest.approx(1000 / 25.56, abs=0.1)
    assert data["capacity"] == 8 and data["params"]["request_overhead_ms"] == 0


def test_command_line_accepts_the_full_ranges_beyond_the_web_cap():
    data = json.loads(sweep("--levels", "1024", "--slots", "1024", "--max-tokens", "200", "--json"))
    assert data["levels"][0]["requests"] == 3072


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--slots", "-1"], "--slots"),
        (["--slots", "0"], "--slots"),
        (["--step-ms", "nan"], "--step-ms"),
        (["--growth", "inf"], "--growth"),
        (["--max-tokens", "lots"], "--max-tokens"),
        (["--levels", ",".join(str(n) for n in range(1, 14))], "--levels"),
        (["--slo-ms", "1e999"], "--slo-ms"),
    ],
)
def test_bad_flags_are_a_command_error_naming_the_flag(args, flag):
    with pytest.raises(CommandError, match=flag):
        sweep(*args)


def test_bad_flag_exits_non_zero_without_a_traceback():
    process = subprocess.run(
        [sys.executable, "manage.py", "sweep", "--slots", "NaN"], cwd=ROOT, capture_output=True, text=True
    )
    assert process.returncode != 0
    assert "--slots" in process.stderr and "Traceback" not in process.stderr


def test_the_sweep_flags_are_the_declared_parameters(capsys):
    from felab_sim.engine.sweep.sweep_params import SWEEP_PARAMS, SweepParams

    with pytest.raises(SystemExit) as done:
        call_command("sweep", "--help")
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert {param.name for param in SWEEP_PARAMS} == set(SweepParams.FLAT_KEYS)
    for param in SWEEP_PARAMS:
        assert param.flag in out
    assert "adds 6%" in out


def test_the_declared_sweep_defaults_are_the_models():
    from felab_sim.engine.sweep.sweep_params import SWEEP_PARAMS, SweepParams
    from felab_sim.live import flat_text

    defaults = flat_text(SweepParams())
    for param in SWEEP_PARAMS:
        declared = param.default if isinstance(param.default, str) else f"{param.default:g}"
        assert declared == defaults[param.name], param.name
