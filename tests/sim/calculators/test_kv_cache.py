"""The kv-cache calculator (lesson 05) reproduces the course's worked examples. No database."""

import pytest

from tests.support.calculators import outputs


def test_kv_cache_reproduces_lesson_05s_formulas():
    out = outputs("kv-cache", context_tokens=131_072)
    assert out["kv_bytes_per_token"] == 131_072
    assert out["kv_kib_per_token"] == 128
    assert out["kv_mib_per_conversation"] == 16_384
    assert out["kv_gb_per_conversation"] == pytest.approx(17.18, abs=0.005)


def test_kv_cache_max_conversations_reproduce_lesson_05s_formula():
    assert outputs("kv-cache", context_tokens=32_768, free_gb=20)["max_conversations"] == 4
    assert outputs("kv-cache", context_tokens=32_768, free_gb=20, kv_dtype="q8_0")["max_conversations"] == 8
    eighteen_gib = 18 * 1024**3 / 1e9
    assert outputs("kv-cache", free_gb=eighteen_gib)["max_conversations"] == 18
    assert outputs("kv-cache", free_gb=eighteen_gib, kv_dtype="fp8")["max_conversations"] == 36


def test_kv_cache_of_llama_70b_for_16_users():
    out = outputs("kv-cache", layers=80, context_tokens=32_768, users=16)
    assert out["kv_kib_per_token"] == 320
    assert out["kv_gb_per_conversation"] == pytest.approx(10.7, abs=0.05)
    assert out["kv_gb_total"] == pytest.approx(172, abs=0.5)
