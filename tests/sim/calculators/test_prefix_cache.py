"""The prefix-cache calculator (lesson 06) reproduces the course's worked examples. No database."""

import pytest

from tests.support.calculators import outputs


def test_prefix_cache_reproduces_lesson_06s_formula():
    out = outputs("prefix-cache", prefix_chars=12_120, suffix_chars=80)
    assert out["prompt_tokens"] == 3050
    assert out["cached_tokens"] == 3008  # 47 whole 256-character blocks
    assert out["uncached_tokens"] == 42
    assert out["ttft_warm_ms"] == pytest.approx(31.8)
    assert out["ttft_cold_ms"] == pytest.approx(1235.0)
    assert out["speedup"] == pytest.approx(1235 / 31.8)  # ≈ 39×


def test_variable_part_first_caches_nothing():
    out = outputs("prefix-cache", prefix_chars=12_120, suffix_chars=80, order="variable-first")
    assert out["cached_tokens"] == 0
    assert out["ttft_warm_ms"] == out["ttft_cold_ms"] == pytest.approx(1235.0)
    assert out["speedup"] == pytest.approx(1.0)


def test_a_partial_block_is_never_cached():
    assert outputs("prefix-cache", prefix_chars=255, suffix_chars=10)["cached_tokens"] == 0
    assert outputs("prefix-cache", prefix_chars=256, suffix_chars=10)["cached_tokens"] == 64
