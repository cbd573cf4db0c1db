"""`manage.py chain`: the chain's steps as text or as /sim/chain.json's JSON."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from felab_sim.engine.models.model_presets import BY_NAME


def chain(*args: str) -> str:
    out = io.StringIO()
    call_command("chain", *args, stdout=out)
    return out.getvalue()


def test_the_text_gives_every_step_its_formula_and_its_calculator_then_the_verdict():
    text = chain()
    assert text.startswith("1. weights + overhead on each GPU")
    assert "41 = ⌊4,756 MB ÷ 114.7 MB a conversation" in text
    assert "sizing: /sim/calc/sizing/?capacity=41#output-replicas_with_headroom" in text
    assert text.strip().splitlines()[-1].startswith("Yes: Llama-3.1-70B at FP8")


def test_70b_at_bf16_on_one_gpu_says_no_and_stops():
    text = chain("--precision", "bf16")
    assert "✗ the chain stops here" in text and "2. " not in text
    assert text.strip().splitlines()[-1].startswith("No: Llama-3.1-70B at BF16 on 1 GPU")


@pytest.mark.django_db
def test_json_is_the_endpoint_s(client):
    data = json.loads(chain("--peak-users", "400", "--json"))
    assert data == client.get("/sim/chain.json", {"peak_users": "400"}).json()


def test_a_model_config_file_is_read(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(BY_NAME["Qwen2.5-7B"].config)))
    from_file = json.loads(chain("--model-config", str(path), "--json"))
    preset = json.loads(chain("--model", "Qwen2.5-7B", "--json"))
    assert [s["value"] for s in from_file["steps"]] == [s["value"] for s in preset["steps"]]


def test_custom_hardware_flags_and_bad_input_name_the_flag():
    text = chain(
        "--hardware", "custom", "--memory-gb", "200", "--bandwidth-gbs", "1000", "--peak-tflops", "500"
    )
    assert "200 GB" in text
    with pytest.raises(CommandError, match="--bandwidth-gbs"):
        chain("--hardware", "custom", "--memory-gb", "200")
    with pytest.raises(CommandError, match="--peak-users: peak_users must be an integer at least 1"):
        chain("--peak-users", "0")
