"""The finetune-memory calculator (lessons 11, 16, 17) reproduces the course's worked examples. No database."""

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from tests.support.calculators import outputs


def test_finetune_memory_reproduces_f30_for_llama_8b():
    lora = outputs("finetune-memory")
    assert lora["trainable_params"] == 13_631_488
    assert lora["trainable_pct"] == pytest.approx(0.17, abs=0.005)
    assert lora["train_gb"] == pytest.approx(16.2, abs=0.05)
    assert lora["adapter_mb"] == pytest.approx(27, abs=0.5)
    assert outputs("finetune-memory", method="qlora")["train_gb"] == pytest.approx(4.7, abs=0.05)
    full = outputs("finetune-memory", method="full")
    assert full["train_gb"] == pytest.approx(128)
    assert full["adapter_mb"] == pytest.approx(16_000)


def test_finetune_memory_reproduces_f30_for_qwen_05b_and_llama_70b():
    qwen = dict(
        params_b=0.49,
        layers=24,
        hidden=896,
        heads=14,
        kv_heads=2,
        head_dim=64,
        mlp_hidden=4864,
        vocab=151_936,
        tied_embeddings=True,
    )
    assert outputs("finetune-memory", **qwen)["trainable_params"] == pytest.approx(2.16e6, rel=0.002)
    assert outputs("finetune-memory", **qwen)["adapter_mb"] == pytest.approx(4.3, abs=0.05)
    assert outputs("finetune-memory", **qwen, method="dora")["trainable_pct"] == pytest.approx(
        0.45, abs=0.005
    )
    llama70 = dict(
        params_b=70.6, layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128, mlp_hidden=28672
    )
    out = outputs("finetune-memory", **llama70, rank=64, mlp=True)
    assert out["trainable_params"] == pytest.approx(828e6, rel=0.001)
    assert out["trainable_pct"] == pytest.approx(1.17, abs=0.005)
    assert out["train_gb"] == pytest.approx(154.5, abs=0.05)
    assert out["full_train_gb"] == pytest.approx(1130, abs=0.5)
    assert out["qlora_train_gb"] == pytest.approx(53, abs=0.5)


def test_finetune_memory_reproduces_lesson_11s_qlora_memory():
    # qlora_memory treats every target as hidden × hidden: KV heads equal to heads here.
    shape = dict(
        params_b=7.6,
        hidden=3584,
        heads=28,
        kv_heads=28,
        head_dim=128,
        mlp_hidden=18944,
        vocab=152_064,
        layers=28,
        adapted_layers=8,
        rank=8,
    )
    out = outputs("finetune-memory", **shape, method="qlora", activations_gb=2)
    assert out["trainable_params"] == 8 * 4 * 2 * 3584 * 8  # 1.84M
    assert out["train_gb"] == pytest.approx(6.3, abs=0.05)
    assert out["adapter_mb"] == pytest.approx(3.7, abs=0.05)
    assert outputs("finetune-memory", **shape, method="full")["train_gb"] == pytest.approx(121.6)


def test_dora_adds_one_magnitude_per_output_lesson_17s_formula():
    # Llama-3.1-8B with square key and value matrices (8.8B), one layer adapted.
    one_matrix = dict(params_b=8.8, adapted_layers=1, hidden=4096, heads=32, kv_heads=32, head_dim=128)
    lora = outputs("finetune-memory", **one_matrix)["trainable_params"]
    dora = outputs("finetune-memory", **one_matrix, method="dora")["trainable_params"]
    assert lora == 4 * 131_072
    assert dora == 4 * 135_168


def test_finetune_memory_refuses_a_shape_that_disagrees_with_the_parameter_count_naming_both():
    # Llama-3.1-8B's shape (8.03B) stated as a 50M model: the adapter would be 27% of it.
    with pytest.raises(ParamError) as refused:
        get("finetune-memory").run({"params_b": 0.05})
    assert refused.value.param == "params_b"
    assert "8.03B" in refused.value.message and "0.05B" in refused.value.message


@pytest.mark.parametrize(("params_b", "accepted"), [(7.4, True), (8.8, True), (7.2, False), (9.0, False)])
def test_finetune_memory_accepts_a_shape_within_10_percent(params_b, accepted):
    try:
        get("finetune-memory").run({"params_b": params_b})
    except ParamError:
        assert not accepted
    else:
        assert accepted
