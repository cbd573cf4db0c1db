"""Facts the bundled cards state that no live panel holds: what a model's active count includes,
how many models DPO keeps, which GPU a setup is, what a glossary example names. Each test reads
the content files with table facts filled in and computed figures worked out here, as a student
would check them. No database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from felab_sim.engine.calculators import get
from felab_sim.engine.course import facts
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.problems.drills import draw_problem
from tests.lessons.test_practice_bundled import SPECS

CONTENT = Path(__file__).resolve().parents[2] / "lessons" / "content"
FIELDS = ("question", "plain_words", "picture_it", "real_numbers_source", "real_numbers", "more_detail")


def card(lesson: str, step: int) -> dict:
    (path,) = (CONTENT / "llm-inference-performance").glob(f"lesson-{lesson}-*.yaml")
    (found,) = [c for c in yaml.safe_load(path.read_text(encoding="utf-8"))["cards"] if c["step"] == step]
    return found


def text(lesson: str, step: int, *fields: str) -> str:
    found = card(lesson, step)
    return facts.fill(" ".join(str(found.get(field) or "") for field in fields or FIELDS))


def every_card_text() -> list[tuple[str, str]]:
    cards = []
    for path in sorted((CONTENT / "llm-inference-performance").glob("lesson-*.yaml")):
        for found in yaml.safe_load(path.read_text(encoding="utf-8"))["cards"]:
            body = " ".join(str(found.get(field) or "") for field in FIELDS)
            cards.append((f"{path.stem}/step-{found['step']}", body))
    return cards


def glossary_example(term: str) -> str:
    entries = yaml.safe_load((CONTENT / "glossary.yaml").read_text(encoding="utf-8"))
    (entry,) = [e for e in entries if e["term"] == term]
    return facts.fill(entry["example"])


def parameter_sets() -> list[dict]:
    return yaml.safe_load((CONTENT / "parameter_sets.yaml").read_text(encoding="utf-8"))


def figure(slug: str, output: str) -> float:
    (found,) = [s for s in parameter_sets() if s["slug"] == slug]
    return get(found["calculator"]).run(found["params"]).outputs[output].value


def sentences(body: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n", body) if s.strip()]


# Lesson 12 ------------------------------------------------------------------------------------


def test_gpt_oss_20bs_published_active_count_already_holds_its_attention_and_output_layer():
    # 0.64B attention + 2.39B in 4 of 32 experts + 0.58B output layer (+ router, norms) = 3.6B.
    shape = preset("gpt-oss-20b").shape
    parts = (
        shape.layers * shape.attention_params()
        + shape.layers * 4 * shape.expert_params()
        + shape.vocab_size * shape.hidden_size
    )
    assert parts / 1e9 == pytest.approx(3.6, abs=0.01)
    probe = text("12", 2, "more_detail")
    (said,) = [s for s in sentences(probe) if "published active count" in s]
    assert "already" in said and "attention" in said and "output layer" in said
    for where, body in every_card_text():
        assert not re.search(r"also reads the shared attention", body), where


def test_a_moe_cards_bytes_a_token_come_from_its_preset_tensor_by_tensor_never_typed_counts():
    # Spreading a file's average bits over typed active parameters undercounts gpt-oss's 16-bit
    # attention and output layer: every decode ceiling of a mixture of experts names its model.
    for found in parameter_sets():
        params = found["params"]
        if found["calculator"] == "decode-ceiling" and params.get("active_params_b") is not None:
            pytest.fail(f"{found['slug']} types active_params_b; choose the model and quant: published")
    assert figure("l12-gptoss-20b-probe", "gb_per_token") == pytest.approx(3.71, abs=0.01)
    assert figure("l12-gptoss-20b-probe", "efficiency_pct") == pytest.approx(80.1, abs=0.1)
    assert figure("l12-moe-gptoss-120b", "ceiling_tok_s") == pytest.approx(109.1, abs=0.1)


def test_the_probe_card_works_llama_8b_from_the_speed_the_probes_demo_prints():
    # The demo prints 84 tok/s and 99.5% for llama3.1:8b and 118 tok/s for gpt-oss:20b (COURSE
    # §12): the question quotes the demo's pair, not one demo figure beside llama-bench's 86.
    question = text("12", 2, "question")
    assert "probe, in its demo" in question and "to the smaller model's 84" in question
    assert facts.text_of("measured.l04-m4-max-llama8b.q4_k_m_tg128") not in question
    share = 546 * 0.75 / 84 / 4.9 * 100
    assert round(share, 1) == 99.5
    numbers = text("12", 2, "real_numbers")
    assert "llama3.1:8b: 84 tokens per second in the probe's demo" in numbers
    assert f"{share:.1f}% of its 4.9 GB file" in numbers
    assert "97.2%" not in text("12", 2)


def test_two_h100s_to_a_server_are_the_bridged_pcie_cards_split_an_even_number_of_ways():
    body = text("12", 4)
    raw = " ".join(str(card("12", 4).get(field) or "") for field in FIELDS)
    assert "two to a server" in body and "hw.h100-pcie." in raw and "hw.h100-sxm." not in raw
    assert not re.search(r"\bthree\b[^.]*GPUs", body)


def test_two_bridged_pairs_split_tp_inside_a_pair_and_pp_between_or_the_weights_go_to_fp8():
    # An NVLink bridge joins two cards, so four GPUs are two pairs with PCIe between them.
    body = text("12", 4)
    assert "needs four GPUs" not in body
    assert "TP=2 inside each pair and PP=2 between them" in body
    two_cards = 2 * float(facts.text_of("hw.h100-pcie.memory_decimal_gb"))
    assert f"{two_cards:.1f} − 80 = {two_cards - 80:.1f} GB" in body
    assert "one chopping while the other stirs" not in text("12", 4, "picture_it")


def test_the_moe_card_names_the_machine_that_holds_the_120b_model():
    question = text("12", 1, "question")
    assert question.startswith("On a 128 GB M4 Max")
    assert "layers every token uses" in text("12", 1, "plain_words")


def test_practice_at_4_8_bits_never_draws_gpt_oss_stored_in_mxfp4_and_bf16():
    for slug in ("l12-moe-ceiling", "l12-moe-memory"):
        drawn = {draw_problem(SPECS[slug], seed).question for seed in range(60)}
        assert all("4.8 bits" in q for q in drawn), slug
        assert not [q for q in drawn if "gpt-oss" in q], slug
        assert any("mixtral" in q for q in drawn), slug


# Lessons 04, 10, 13 ---------------------------------------------------------------------------


def test_q3_k_ms_main_tensors_are_q3_k_blocks_of_3_44_bits():
    block_bytes = 32 + 64 + 12 + 2  # 256 weights: high bits, low bits, 6-bit scales, one fp16 scale
    detail = text("04", 3, "more_detail")
    assert f"256 weights in {block_bytes} bytes, {block_bytes * 8 / 256:.2f} bits" in detail
    assert not re.search(r"3\.9 bits in its main tensors", detail)


def test_lesson_10s_training_bill_is_the_cost_calculators_figure():
    bill = figure("l10-serving-38-minutes", "training_usd")
    assert bill == pytest.approx(0.152)
    numbers = " ".join(str(card("10", 2).get(field) or "") for field in FIELDS)
    assert "{{calc.l10-serving-38-minutes.training_usd}}" in numbers
    assert "a few cents" not in numbers


def test_speculation_for_64_users_at_1000_tokens_costs_no_step_time_on_the_h100():
    plain = figure("l13-h100-64-users-1k", "step_ms")
    speculating = figure("l13-h100-64-users-verify-4-1k", "step_ms")
    assert speculating == pytest.approx(plain)
    assert figure("l13-h100-64-users-verify-4-1k", "bound") == "memory"
    users_at_ridge = figure("l13-h100-64-users-verify-4-1k", "ridge_batch") / 5
    assert round(users_at_ridge) == 114
    body = text("13", 4)
    assert "already busy" not in body and "Past that point" not in body
    assert "checking the guesses costs no step time here" in body
    assert "about 114 users" in body
    assert "Llama 3.1 8B" in text("13", 4, "real_numbers_source")


def test_a_dearer_draft_pulls_the_prose_formula_down_not_up():
    # A 1B Q4_K_M draft is about 0.81 GB against the target's 4.9 GB, a draft cost near 0.165.
    (prose,) = [s for s in parameter_sets() if s["slug"] == "l13-prose-alpha-041-k8"]
    cheap = get("speculative").run(prose["params"]).outputs["speedup"].value
    dear = get("speculative").run({**prose["params"], "draft_cost": 0.81 / 4.9}).outputs["speedup"].value
    assert dear < cheap < 1
    detail = text("13", 2, "more_detail")
    assert "Each of these pulls the structured result below 2.3 and the prose result above" not in detail
    assert "a dearer draft and a dearer verify pass pull both results down" in detail
    assert text("13", 3, "real_numbers").startswith("- With llama.cpp:")


# Lessons 10, 16 and 18, and the glossary ------------------------------------------------------


def test_lesson_10s_glossary_examples_name_its_held_out_set_and_the_model_counted():
    assert "60 held-out tickets" in glossary_example("Held-out set")
    assert "Llama 3.1 8B" in glossary_example("LoRA")


def test_the_toys_12_bytes_a_number_are_not_called_adam_state():
    # Adam's state is its two 32-bit averages, 8 bytes a number (the glossary on the same card).
    assert "8 of the 16 bytes" in glossary_example("Adam optimizer")
    for where, body in every_card_text():
        assert "bytes of Adam state" not in body, where


def test_the_dpo_card_of_lesson_16_says_its_run_prints_no_dpo_figure():
    assert "prints no reward or true value" in text("16", 3, "real_numbers")


def test_dpos_margin_is_zero_before_training_and_the_raw_gap_is_not_called_margin():
    for where, body in every_card_text():
        for sentence in sentences(body):
            if re.search(r"\bmargin\b", sentence, re.IGNORECASE):
                before = re.findall(r"(?<![\d.])([+−-]?\d+(?:\.\d+)?) before\b", sentence)
                assert all(float(n.replace("−", "-")) == 0 for n in before), (where, sentence)
    evaluation = text("18", 5, "real_numbers")
    assert "0 before training" in evaluation


def test_dpos_second_copy_is_a_choice_of_the_course_not_a_rule_of_dpo():
    for step in (1, 4):
        body = text("18", step, "real_numbers")
        assert "adapter" in body and ("switched off" in body or "adapter off" in body), step
    for where, body in every_card_text():
        assert "DPO needs two copies" not in body, where


# Smaller facts the audit checked --------------------------------------------------------------


def test_k_quants_go_down_to_2_bits_and_q3_k_m_is_4_bits_on_llama_3_8b():
    assert "stores weights in 2 to 6 bits" in text("04", 4, "more_detail")
    bits = 3.74 * 2**30 * 8 / 8.03e9  # llama.cpp's quantize list: Q3_K_M 3.74 GiB on Llama-3-8B
    assert f"On Llama 3 8B it lists 3.74 GiB, {bits:.1f} bits" in text("04", 3, "more_detail")
    assert "Llama 3.1 8B" in text("04", 4, "real_numbers_source")


def test_the_batch_price_is_half_the_list_price_to_the_tenth_of_a_cent():
    half = figure("l08-nightly-eval", "batch_usd_per_1k_tasks")
    assert half == pytest.approx(0.0145)
    assert f"${half}." in text("08", 1, "real_numbers")


def test_the_rejected_severity_is_off_by_up_to_2_and_graders_check_the_true_label():
    assert "off by up to 2" in text("18", 3, "real_numbers")
    assert "matches the ticket's true label" in text("16", 4, "more_detail")
    assert "one of four labels" not in text("16", 4, "more_detail")
    assert "Computed from the toy's sampling probabilities" in text("16", 3, "real_numbers")


def test_orpo_saves_the_references_weights_not_half_the_memory():
    detail = text("18", 4, "more_detail")
    assert "halves the model memory" not in detail
    assert "reference's copy of the weights (2 bytes a parameter)" in detail
    assert 'pref_eval prints that gap under the name "margin"' in text("18", 5, "real_numbers")
