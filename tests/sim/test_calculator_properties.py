"""Properties of the calculators issue 21 grounded: every output finite, and each moving the way
the physics says as one input moves, anywhere in the declared ranges. No database."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from felab_sim.engine.calculators import get
from felab_sim.engine.calculators.dpo import sigmoid
from felab_sim.engine.core.params import ParamError


def outputs(name: str, **params: object) -> dict[str, object]:
    return {key: out.value for key, out in get(name).run(params).outputs.items()}


def all_finite(out: dict[str, object]) -> bool:
    return all(isinstance(v, str) or v is None or math.isfinite(v) for v in out.values())


# --------------------------------------------------------------------------- speculative

acceptance = st.floats(0, 1)
draft_tokens = st.integers(1, 64)
cost = st.floats(1e-6, 1)


@given(acceptance, draft_tokens, cost, cost, cost)
def test_more_draft_cost_never_raises_the_speedup(alpha, k, verify, c1, c2):
    low, high = sorted((c1, c2))
    cheap = outputs("speculative", acceptance=alpha, draft_tokens=k, draft_cost=low, verify_cost=verify)
    dear = outputs("speculative", acceptance=alpha, draft_tokens=k, draft_cost=high, verify_cost=verify)
    assert all_finite(cheap) and all_finite(dear)
    assert dear["speedup"] <= cheap["speedup"]


@given(draft_tokens, draft_tokens, cost)
def test_the_verify_pass_never_costs_less_for_more_drafted_tokens(k1, k2, verify):
    fewer, more = sorted((k1, k2))
    steps = [
        outputs("speculative", draft_tokens=k, verify_cost=verify)["verify_pass_steps"] for k in (fewer, more)
    ]
    assert 1 <= steps[0] <= steps[1]


@given(draft_tokens, cost, cost)
def test_a_longer_draft_never_pays_when_nothing_is_accepted(k, c, verify):
    # At α 0 every round yields one token and costs at least one step plus drafting.
    assert (
        outputs("speculative", acceptance=0, draft_tokens=k, draft_cost=c, verify_cost=verify)["speedup"] < 1
    )


@given(acceptance, acceptance, draft_tokens, cost)
def test_higher_acceptance_never_lowers_the_speedup(a1, a2, k, c):
    low, high = sorted((a1, a2))
    assert (
        outputs("speculative", acceptance=low, draft_tokens=k, draft_cost=c)["speedup"]
        <= outputs("speculative", acceptance=high, draft_tokens=k, draft_cost=c)["speedup"]
    )


@given(draft_tokens)
def test_the_speedup_never_exceeds_the_tokens_one_round_can_yield(k):
    assert outputs("speculative", acceptance=1, draft_tokens=k, draft_cost=1e-6)["speedup"] < k + 1


# --------------------------------------------------------------------------- dpo

beta = st.floats(1e-3, 100)
margin = st.floats(-1e4, 1e4)


@given(beta, margin)
def test_dpo_gradient_weight_is_beta_times_sigma_of_minus_beta_margin_and_positive(b, m):
    out = outputs("dpo", beta=b, margin=m)
    assert all_finite(out)
    assert out["gradient_weight"] == pytest.approx(b * sigmoid(-b * m), rel=1e-12, abs=1e-300)
    assert out["gradient_weight"] >= 0
    assume(b * abs(m) < 700)  # beyond it σ underflows to 0 and the weight is exactly 0
    assert out["gradient_weight"] > 0


@given(beta, margin, margin)
def test_dpo_weight_and_loss_never_rise_with_the_margin(b, m1, m2):
    low, high = sorted((m1, m2))
    small, large = outputs("dpo", beta=b, margin=low), outputs("dpo", beta=b, margin=high)
    assert large["gradient_weight"] <= small["gradient_weight"]
    assert large["loss"] <= small["loss"]


@given(st.floats(1e-3, 1.0), st.floats(1e-3, 1.0), st.floats(0, 1.2))
def test_dpo_a_larger_beta_pulls_harder_while_its_scaled_margin_is_small(b1, b2, m):
    # d/dβ [β σ(−βm)] = σ(−βm)(1 − βm σ(βm)) > 0 while βm < 1.278: β ≤ 1 and m ≤ 1.2 (lesson 18's
    # pair) stay inside, so at that pair β 0.5 pulls harder than β 0.1.
    low, high = sorted((b1, b2))
    assert (
        outputs("dpo", beta=low, margin=m)["gradient_weight"]
        <= outputs("dpo", beta=high, margin=m)["gradient_weight"]
    )


# --------------------------------------------------------------------------- sizing

users = st.integers(1, 1_000_000)
capacity = st.integers(1, 10_000)
headroom = st.floats(0, 10)


@given(users, capacity, headroom, headroom)
def test_more_headroom_never_needs_fewer_replicas_and_always_covers_the_peak(n, cap, h1, h2):
    low, high = sorted((h1, h2))
    lean = outputs("sizing", peak_users=n, capacity=cap, headroom=low)
    roomy = outputs("sizing", peak_users=n, capacity=cap, headroom=high)
    assert all_finite(lean) and all_finite(roomy)
    assert lean["replicas"] <= lean["replicas_with_headroom"] <= roomy["replicas_with_headroom"]
    assert roomy["replicas_with_headroom"] * cap >= n * (1 + high) * (1 - 1e-9)


@given(users, capacity, capacity)
def test_a_bigger_replica_never_needs_more_of_them_nor_costs_more(n, c1, c2):
    small, big = sorted((c1, c2))
    few = outputs("sizing", peak_users=n, capacity=big)
    many = outputs("sizing", peak_users=n, capacity=small)
    assert few["replicas_with_headroom"] <= many["replicas_with_headroom"]
    assert few["dedicated_usd_month"] <= many["dedicated_usd_month"]


@given(st.integers(0, 10**12), st.integers(0, 10**12))
def test_serverless_cost_grows_with_tickets_and_dedicated_does_not_move(t1, t2):
    low, high = sorted((t1, t2))
    a, b = outputs("sizing", tickets_per_month=low), outputs("sizing", tickets_per_month=high)
    assert a["serverless_usd_month"] <= b["serverless_usd_month"]
    assert a["dedicated_usd_month"] == b["dedicated_usd_month"]


# --------------------------------------------------------------------------- finetune-memory

LLAMA_8B_PARAMS = 8.029995008  # its shape's own count: the defaults' shape


@given(st.floats(7.4, 8.8), st.integers(1, 512), st.sampled_from(["full", "lora", "dora", "qlora"]))
def test_finetune_memory_within_the_shape_is_finite_and_trains_at_most_the_whole_model(
    params_b, rank, method
):
    out = outputs("finetune-memory", params_b=params_b, rank=rank, method=method)
    assert all_finite(out)
    assert 0 < out["trainable_pct"] <= 100
    assert out["qlora_train_gb"] < out["lora_train_gb"] < out["full_train_gb"]


@given(st.integers(1, 256), st.integers(1, 256))
def test_a_higher_rank_never_trains_fewer_parameters_nor_needs_less_memory(r1, r2):
    low, high = sorted((r1, r2))
    a, b = outputs("finetune-memory", rank=low), outputs("finetune-memory", rank=high)
    assert a["trainable_params"] <= b["trainable_params"]
    assert a["train_gb"] <= b["train_gb"]


@given(st.floats(0.001, 100_000))
def test_finetune_memory_refuses_every_count_more_than_10_percent_from_the_shape(params_b):
    assume(abs(LLAMA_8B_PARAMS - params_b) > 0.1001 * params_b)
    with pytest.raises(ParamError) as refused:
        get("finetune-memory").run({"params_b": params_b})
    assert refused.value.param == "params_b"
    assert "8.03B" in refused.value.message


# --------------------------------------------------------------------------- KV reads (issue 21)

context = st.integers(0, 200_000)
batch = st.integers(1, 2048)
model_names = st.sampled_from(
    ["typed", "Llama-3.1-8B", "gpt-oss-20b", "DeepSeek-V3", "Gemma-2-9B", "Qwen2.5-7B"]
)
kv_dtypes = st.sampled_from(["f16", "q8_0", "fp8", "q4_0"])


@given(model_names, kv_dtypes, st.integers(1, 200_000), st.integers(1, 200_000))
def test_more_context_never_shrinks_the_kv_cache(model, dtype, t1, t2):
    short, long = sorted((t1, t2))
    few = outputs("kv-cache", model=model, kv_dtype=dtype, context_tokens=short)
    many = outputs("kv-cache", model=model, kv_dtype=dtype, context_tokens=long)
    assert all_finite(few) and all_finite(many)
    assert many["kv_gb_per_conversation"] >= few["kv_gb_per_conversation"]
    assert many["max_conversations"] <= few["max_conversations"]
    # Per token of context it never grows: a sliding layer stops adding once its window is full.
    assert (
        many["kv_bytes_per_context_token"] <= few["kv_bytes_per_context_token"] <= few["kv_bytes_per_token"]
    )


@given(model_names, st.integers(1, 200_000))
def test_fewer_bits_per_cached_value_never_grow_the_cache(model, tokens):
    sizes = [
        outputs("kv-cache", model=model, kv_dtype=d, context_tokens=tokens)["kv_gb_per_conversation"]
        for d in ("f16", "q8_0", "fp8", "q4_0")
    ]
    assert sizes == sorted(sizes, reverse=True)


@given(context, context, batch)
def test_more_context_never_raises_a_ceiling_or_lowers_the_bytes_read(c1, c2, b):
    short, long = sorted((c1, c2))
    roomy = {"decode-ceiling": {"ram_gb": 1e6}, "roofline": {"memory_gb": 1e6}}  # everything fits
    for name, memory in roomy.items():
        few = outputs(name, context_tokens=short, batch=b, **memory)
        many = outputs(name, context_tokens=long, batch=b, **memory)
        assert all_finite(few) and all_finite(many)
        assert many["gb_per_step"] >= few["gb_per_step"]
        assert many["kv_share_pct"] >= few["kv_share_pct"]
    ceiling = [
        outputs("decode-ceiling", context_tokens=t, batch=b, ram_gb=1e6)["ceiling_tok_s"]
        for t in (short, long)
    ]
    assert ceiling[1] <= ceiling[0]
    rates = [
        outputs("roofline", context_tokens=t, batch=b, memory_gb=1e6)["attainable_tok_s"]
        for t in (short, long)
    ]
    assert rates[1] <= rates[0]


@given(context, batch, batch)
def test_more_batch_raises_the_total_but_never_each_users_speed(t, b1, b2):
    small, large = sorted((b1, b2))
    few = outputs("roofline", context_tokens=t, batch=small, memory_gb=1e6)
    many = outputs("roofline", context_tokens=t, batch=large, memory_gb=1e6)
    assert many["attainable_tok_s"] >= few["attainable_tok_s"] * (1 - 1e-12)
    assert many["tok_s_per_user"] <= few["tok_s_per_user"] * (1 + 1e-12)
    assert many["memory_needed_gb"] >= few["memory_needed_gb"]
    # Once a batch does not fit, a larger one does not either.
    assert few["fits"] == "yes" or many["fits"] == "no"


@given(st.floats(0.1, 8), st.floats(0.1, 8), context, batch)
def test_fewer_bytes_per_weight_never_slow_decoding(w1, w2, t, b):
    light, heavy = sorted((w1, w2))
    fast = outputs("roofline", bytes_per_weight=light, context_tokens=t, batch=b, memory_gb=1e6)
    slow = outputs("roofline", bytes_per_weight=heavy, context_tokens=t, batch=b, memory_gb=1e6)
    assert fast["attainable_tok_s"] >= slow["attainable_tok_s"] * (1 - 1e-12)
    assert fast["memory_needed_gb"] <= slow["memory_needed_gb"]


# --------------------------------------------------------------------------- a model, and compute (issue 21)

decode_models = st.sampled_from(["Llama-3.1-8B", "gpt-oss-20b", "Gemma-2-9B", "Qwen2.5-7B", "Llama-3.1-70B"])
ROOMY = {"decode-ceiling": {"ram_gb": 1e6}, "roofline": {"memory_gb": 1e6}}  # everything fits
H100 = {"peak_tflops": 989.4, "peak_fp8_tflops": 1978.9, "bandwidth_gbs": 3350}


@given(decode_models, kv_dtypes, context, context, batch)
def test_with_a_model_more_context_never_raises_a_ceiling_nor_kv_per_token(model, dtype, c1, c2, b):
    short, long = sorted((c1, c2))
    for name, memory in ROOMY.items():
        few = outputs(name, model=model, kv_dtype=dtype, context_tokens=short, batch=b, **H100, **memory)
        many = outputs(name, model=model, kv_dtype=dtype, context_tokens=long, batch=b, **H100, **memory)
        assert all_finite(few) and all_finite(many)
        assert many["kv_gb_per_step"] >= few["kv_gb_per_step"]
        # Sliding layers stop adding once their window is full: a token of a longer context costs less.
        assert many["kv_bytes_per_token_used"] <= few["kv_bytes_per_token_used"] * (1 + 1e-12)
        speed = "ceiling_tok_s" if name == "decode-ceiling" else "tok_s_per_user"
        assert many[speed] <= few[speed] * (1 + 1e-12)


@given(decode_models, context, batch, batch)
def test_decode_ceiling_more_batch_raises_the_total_never_each_sequences_ceiling(model, t, b1, b2):
    small, large = sorted((b1, b2))
    for compute in ({}, H100):
        few = outputs("decode-ceiling", model=model, context_tokens=t, batch=small, ram_gb=1e6, **compute)
        many = outputs("decode-ceiling", model=model, context_tokens=t, batch=large, ram_gb=1e6, **compute)
        assert all_finite(few) and all_finite(many)
        assert many["ceiling_tok_s"] <= few["ceiling_tok_s"] * (1 + 1e-12)
        assert many["total_tok_s"] >= few["total_tok_s"] * (1 - 1e-12)
        # The ceiling is the lower of the bandwidth's and the compute's, and names which it is.
        if compute:
            lower = min(many["memory_ceiling_tok_s"], many["compute_ceiling_tok_s"])
            assert many["ceiling_tok_s"] == pytest.approx(lower, rel=1e-12)
            memory_wins = many["memory_ceiling_tok_s"] <= many["compute_ceiling_tok_s"]
            assert many["bound"] == ("memory" if memory_wins else "compute")
        else:
            assert many["bound"] is None and many["ceiling_tok_s"] == many["memory_ceiling_tok_s"]


@given(st.floats(1, 32), st.floats(1, 32), context, batch)
def test_decode_ceiling_fewer_bits_per_weight_never_lower_the_ceiling(w1, w2, t, b):
    light, heavy = sorted((w1, w2))
    fast = outputs("decode-ceiling", bits_per_weight=light, context_tokens=t, batch=b, ram_gb=1e6, **H100)
    slow = outputs("decode-ceiling", bits_per_weight=heavy, context_tokens=t, batch=b, ram_gb=1e6, **H100)
    assert all_finite(fast) and all_finite(slow)
    assert fast["ceiling_tok_s"] >= slow["ceiling_tok_s"] * (1 - 1e-12)
    assert fast["memory_needed_gb"] <= slow["memory_needed_gb"]


@given(decode_models, context, batch)
def test_fewer_bits_per_cached_value_never_slow_a_models_decode(model, t, b):
    for name, memory in ROOMY.items():
        speed = "ceiling_tok_s" if name == "decode-ceiling" else "tok_s_per_user"
        speeds = [
            outputs(name, model=model, kv_dtype=d, context_tokens=t, batch=b, **H100, **memory)[speed]
            for d in ("f16", "q8_0", "fp8", "q4_0")
        ]
        assert speeds == sorted(speeds)


@given(model_names, st.integers(1, 10_000), st.integers(1, 10_000), st.integers(1, 200_000))
def test_more_users_never_shrink_the_kv_cache_they_hold(model, u1, u2, tokens):
    few, many = sorted((u1, u2))
    small = outputs("kv-cache", model=model, users=few, context_tokens=tokens)
    large = outputs("kv-cache", model=model, users=many, context_tokens=tokens)
    assert all_finite(small) and all_finite(large)
    assert large["kv_gb_total"] >= small["kv_gb_total"]
