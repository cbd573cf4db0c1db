"""Facts card text cites from the engine's tables: hardware, model shapes, prices, measurements."""

import pytest

from felab_sim.engine.course import facts
from felab_sim.engine.hardware.hardware import HARDWARE, hardware_preset
from felab_sim.engine.hardware.prices import PRICES


@pytest.mark.parametrize(
    ("name", "printed"),
    [
        ("hw.m4-max-32c.bandwidth_gbs", "410"),  # the course's 36 GB Mac
        ("hw.m4-pro.bandwidth_gbs", "273"),
        ("hw.h100-sxm.memory_gb", "80"),  # as NVIDIA prints it, in GiB
        ("hw.h100-sxm.memory_decimal_gb", "85.9"),  # 80 × 2³⁰ bytes in 10⁹
        ("hw.h100-sxm.link_gbs", "450"),
        ("model.Qwen2.5-7B.kv_heads", "4"),
        ("model.Llama-3.1-8B.kv_kib_per_token", "128"),
        ("model.gpt-oss-20b.kv_kib_per_token", "48"),  # every layer, the plain formula
        ("model.gpt-oss-20b.kv_kib_per_token_long", "24"),  # past the 128-token window: full layers only
        ("model.gpt-oss-20b.sliding_window", "128"),
        # The file OpenAI publishes: experts in MXFP4, the rest in BF16 (13.8 GB on Hugging Face).
        ("model.gpt-oss-20b.stored_gb", "13.8"),
        ("model.gpt-oss-120b.stored_gb", "65.2"),
        # A token reads its attention and output head at 2 bytes a weight and 4 experts at 4.25 bits.
        ("model.gpt-oss-20b.stored_gb_per_token", "3.7"),
        ("model.gpt-oss-120b.stored_gb_per_token", "5"),
        ("price.dedicated-gpu-hour.usd", "8.00"),
        ("measured.practice-run.c8_agg_tok_s", "275.1"),
        ("measured.l01-mac-ollama-8b.short_tok_s", "44.6"),
    ],
)
def test_a_fact_prints_its_table_s_value(name, printed):
    assert facts.text_of(name) == printed


def test_a_card_s_fact_follows_its_table():
    assert facts.parse("hw.h200.bandwidth_gbs").value * 1e9 == hardware_preset("h200").memory_bandwidth


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("hw.m5-ultra.bandwidth_gbs", "no hardware preset 'm5-ultra'"),
        ("hw.h100-sxm.speed", "'speed' is not a field"),
        ("hw.m4.bf16_tflops", "m4 has no bf16_tflops"),  # Apple publishes none
        ("model.Llama-9.layers", "Llama-9"),
        ("price.free-lunch.usd", "no price 'free-lunch'"),
        ("measured.l99.x", "no measurement 'l99'"),
        ("hw.h100-sxm", "write it KIND.ENTRY.FIELD"),
    ],
)
def test_a_fact_that_cannot_be_read_says_why(name, reason):
    with pytest.raises(facts.UnknownFact, match=reason):
        facts.parse(name)
    assert any(reason in problem for problem in facts.problems([f"text {{{{{name}}}}} text"]))
    assert facts.text_of(name) == "—"


def test_fill_replaces_every_fact_and_leaves_other_placeholders():
    text = "{{hw.m4-max-32c.bandwidth_gbs}} GB/s, {{sim.capacity}} seats, {{calc.x.y}}"
    assert facts.fill(text) == "410 GB/s, {{sim.capacity}} seats, {{calc.x.y}}"
    assert facts.fill("{{ hw.m4-pro.bandwidth_gbs }}", lambda name, value: f"<{name}={value}>") == (
        "<hw.m4-pro.bandwidth_gbs=273>"
    )


def test_every_table_entry_is_citable_and_every_price_has_a_source():
    names = {fact.name for fact in facts.every_fact()}
    assert {f"hw.{hardware.name}.bandwidth_gbs" for hardware in HARDWARE} <= names
    assert {f"price.{price.name}.usd" for price in PRICES} <= names
    assert all(price.source for price in PRICES)
    for fact in facts.every_fact():
        assert facts.parse(fact.name).value == fact.value


def test_a_price_a_card_cites_prints_to_the_cent():
    assert facts.text_of("price.capstone-serverless-output.usd") == "0.60"
    assert facts.text_of("price.dedicated-gpu-hour.usd") == "8.00"
