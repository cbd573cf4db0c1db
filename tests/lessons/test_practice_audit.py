"""Bundled practice templates against the audit of their mistakes, wording and grading: each case
is one draw a student could see, with the number a student would type."""

import io
import json
import math
import re

import pytest
import yaml

from felab_sim.engine.problems.drills import draw_problem
from lessons.content_format import CONTENT_DIR
from lessons.models import PracticeTemplate
from tests.lessons.test_practice_bundled import SPECS


def offered(slug: str, seed: int) -> dict[str, float]:
    return {m.slug: m.value for m in draw_problem(SPECS[slug], seed).mistakes}


def test_swapped_prices_put_each_price_on_the_other_tokens():
    problem = draw_problem(SPECS["l09-cost-per-1k"], 1)
    inputs = problem.inputs
    swapped = (
        inputs["input_tokens"] * inputs["output_usd_per_m"]
        + inputs["output_tokens"] * inputs["input_usd_per_m"]
    ) / 1000
    assert offered("l09-cost-per-1k", 1)["prices-swapped"] == pytest.approx(swapped)
    assert problem.grade(swapped).mistake.slug == "prices-swapped"


@pytest.mark.parametrize("slug", ["l03-replicas-with-headroom", "l03-capacity-halves"])
def test_replicas_round_up_then_add_headroom_as_lesson_03_does(slug):
    # seed 2 of l03-replicas-with-headroom: 90 users, 4 a replica, 0.2 headroom → ⌈23 × 1.2⌉ = 28
    for seed in range(60):
        problem = draw_problem(SPECS[slug], seed)
        inputs = problem.after.params if problem.after else problem.inputs
        users, capacity, headroom = inputs["peak_users"], inputs["capacity"], inputs["headroom"]
        course = math.ceil(round(math.ceil(users / capacity) * (1 + headroom), 9))
        assert problem.answer == course, (slug, seed)
        assert problem.grade(course).checked.verdict == "right"
    assert "round up again" in problem.question


@pytest.mark.parametrize("slug", ["l03-replicas-with-headroom", "l03-capacity-halves"])
def test_rounding_down_is_offered_only_where_it_gives_another_number(slug):
    for seed in range(300):
        problem = draw_problem(SPECS[slug], seed)
        inputs = problem.after.params if problem.after else problem.inputs
        exact = math.ceil(inputs["peak_users"] / inputs["capacity"]) * (1 + inputs["headroom"])
        down = {m.slug: m.value for m in problem.mistakes}.get("rounded-down")
        assert down is None or down == math.floor(exact + 1e-9) != problem.answer, (slug, seed)
    assert draw_problem(SPECS["l03-replicas-with-headroom"], 2).answer == 28


@pytest.mark.parametrize("slug", ["l03-replicas-with-headroom", "l03-capacity-halves"])
def test_leaving_out_the_headroom_is_told_the_question_s_order_not_another_named_mistake(slug):
    # Headroom on the users before dividing is headroom-on-users, a mistake of its own; the
    # question rounds the replicas up first, then adds the headroom to them.
    seed = next(s for s in range(100) if "no-headroom" in offered(slug, s))
    problem = draw_problem(SPECS[slug], seed)
    sentence = says(slug, seed, offered(slug, seed)["no-headroom"])
    assert "multiply the replicas by (1 + headroom) and round up again" in sentence
    assert "users" not in sentence
    assert "then add the headroom to them and round up again" in problem.question


def test_the_fp8_pool_is_stated_in_gib_and_the_answer_counts_gib():
    for seed in range(40):
        problem = draw_problem(SPECS["l14-fp8-kv"], seed)
        assert "The same pool" not in problem.question
        gib = float(problem.question.split("Available KV cache memory: ")[1].split(" GiB")[0])
        inputs = problem.inputs
        per_sequence = (
            2 * inputs["layers"] * inputs["kv_heads"] * inputs["head_dim"] * 1 * inputs["context_tokens"]
        )
        assert problem.answer == (gib * 2**30) // per_sequence, seed


def says(slug: str, seed: int, given: float) -> str:
    graded = draw_problem(SPECS[slug], seed).grade(given)
    assert graded.mistake is not None, (slug, seed, given)
    return graded.mistake.says


def test_the_bandwidth_mistakes_say_what_gives_their_value():
    ridge = draw_problem(SPECS["l00-bandwidth-not-cores"], 1)
    # ridge × 2 B a weight, with no ÷ 2 FLOP a weight: twice the ridge, not half
    assert "leaves out its 2 FLOP" in says("l00-bandwidth-not-cores", 1, ridge.answer * 2)
    ceiling = draw_problem(SPECS["l00-decode-ceiling"], 1)
    # bandwidth ÷ 8, or size × 8: an eighth of the ceiling, never "size ÷ 8" (which is 8×)
    eighth = says("l00-decode-ceiling", 1, ceiling.answer / 8)
    assert "8 times too low" in eighth and "once too often" not in eighth


def test_the_warm_ttft_mistakes_say_what_gives_their_value():
    problem = draw_problem(SPECS["l06-warm-ttft"], 1)  # 9,360 + 80 characters: 56 tokens prefilled
    assert problem.answer == pytest.approx(37.4)
    assert "whole prompt" in says("l06-warm-ttft", 1, 15)  # the overhead alone
    assert "question" in says("l06-warm-ttft", 1, 29.4)  # the preamble's 14 tokens, no question
    assert "whole prompt" not in says("l06-warm-ttft", 1, 29.4)


@pytest.mark.parametrize(("slug", "seed"), [("l09-cost-per-1k", 8), ("l09-output-doubles", 3)])
def test_pricing_output_at_the_input_price_is_worded_from_the_draw(slug, seed):
    problem = draw_problem(SPECS[slug], seed)
    cheaper = problem.inputs["output_usd_per_m"] < problem.inputs["input_usd_per_m"]
    assert cheaper, "these draws price the output below the input"
    [mistake] = [m for m in problem.mistakes if m.slug == "input-price-for-output"]
    assert "cost more" not in mistake.says and "{" not in mistake.says
    assert problem.shown["output_usd_per_m"] in mistake.says


def test_a_mistake_naming_nothing_drawn_is_refused():
    from felab_sim.engine.problems.drill_specs import DrillSpec
    from felab_sim.engine.problems.drills import spec_problems

    [path] = CONTENT_DIR.glob("*/practice-09-*.yaml")
    data = yaml.safe_load(path.read_text())["templates"][0]
    data["mistakes"] = [{"slug": "odd", "says": "It costs {nothing}.", "factor": 2}]
    problems = spec_problems(DrillSpec.from_data("x", data))
    assert any("{nothing} names no input or output" in p.message for p in problems)


def test_the_printed_answer_retyped_is_graded_right():
    # l18-loss seed 5 (β 0.2, margin 10): 0.127 printed "0.13" was 2.4% off a 2% tolerance
    for slug, spec in SPECS.items():
        for seed in range(40):
            problem = draw_problem(spec, seed)
            if "×" in problem.answer_number:
                continue
            printed = float(problem.answer_number.replace(",", ""))
            assert problem.grade(printed).checked.verdict == "right", (slug, seed, problem.answer_number)


@pytest.mark.django_db
def test_the_page_prints_the_answer_with_the_digits_that_grade_right(client, lessons):
    template = PracticeTemplate.objects.get(slug="l18-loss")
    page = client.post(template.get_absolute_url(), {"seed": 5, "action": "show"})
    assert "0.127" in page.content.decode()


def test_the_quantized_ceiling_states_the_bits_a_weight():
    for seed in range(40):
        problem = draw_problem(SPECS["l04-quant-ceiling"], seed)
        bits = problem.before.value("bits_per_weight")
        assert f"({bits:g} bits a weight" in problem.question, (seed, problem.question)
        assert "quantized as f16" not in problem.question


@pytest.mark.parametrize("slug", ["l06-warm-ttft", "l06-speedup", "l06-variable-first"])
def test_each_prefix_cache_problem_states_its_own_rules(slug):
    problem = draw_problem(SPECS[slug], 1)
    assert "The same agent" not in problem.question
    assert "256 characters" in problem.question and "15 ms" in problem.question
    assert "4 characters a token" in problem.question
    steps = " ".join(problem.steps)
    assert f"= {problem.result.outputs['uncached_tokens'].text()}" in steps or slug == "l06-variable-first"
    assert "÷ 4 =" in steps


@pytest.mark.django_db
def test_a_factor_two_miss_is_off_and_close_is_a_band_tied_to_the_tolerance(client, lessons):
    from django.core.management import call_command

    problem = draw_problem(SPECS["l00-bandwidth-not-cores"], 1)
    assert problem.grade(problem.answer * 2).checked.verdict == "off"  # 10% allowed: 2× is no near miss
    assert problem.grade(problem.answer * 1.25).checked.verdict == "close"
    assert problem.grade(problem.answer * 1.35).checked.verdict == "off"
    tight = draw_problem(SPECS["l03-replicas-with-headroom"], 2)  # 1% allowed: close to 3%
    assert tight.grade(tight.answer * 1.02).checked.verdict == "close"
    assert tight.grade(tight.answer * 1.05).checked.verdict == "off"
    out = io.StringIO()
    typed = f"{problem.answer * 2}"
    call_command("drill", "l00-bandwidth-not-cores", "--seed", "1", "--answer", typed, "--json", stdout=out)
    graded = json.loads(out.getvalue())
    assert graded["verdict"] == "off" and graded["close_within"] == pytest.approx(0.3)
    page = client.get(
        PracticeTemplate.objects.get(slug="l00-bandwidth-not-cores").get_absolute_url() + "?seed=1"
    )
    assert "close within 30%" in page.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("slug", ["l13-break-even", "l16-preference-probability"])
def test_a_share_typed_as_a_bare_percent_is_asked_about_not_counted(client, lessons, slug):
    from django.core.management import CommandError, call_command

    from quiz.models import PracticeAttempt

    template = PracticeTemplate.objects.get(slug=slug)
    percent = f"{template.problem(1).answer * 100:.1f}"
    page = client.post(template.get_absolute_url(), {"seed": 1, "answer": percent}).content.decode()
    assert "Did you mean" in page and not PracticeAttempt.objects.exists()
    with pytest.raises(CommandError, match="Did you mean"):
        call_command("drill", slug, "--seed", "1", "--answer", percent, "--json", stdout=io.StringIO())
    client.post(template.get_absolute_url(), {"seed": 1, "answer": f"{percent}%"})
    assert PracticeAttempt.objects.get().verdict == "right"


def test_a_loss_is_no_share_and_reads_a_bare_number_as_it_is():
    problem = draw_problem(SPECS["l18-loss"], 1)
    assert not problem.share and draw_problem(SPECS["l13-break-even"], 1).share


def test_no_question_doubles_a_phrase_and_every_worked_operation_has_its_result():
    for slug, spec in SPECS.items():
        problem = draw_problem(spec, 1)
        words = problem.question.split()
        for size in (2, 3, 4):
            grams = [" ".join(words[i : i + size]) for i in range(len(words) - size + 1)]
            doubled = [g for i, g in enumerate(grams) if i + size < len(grams) and grams[i + size] == g]
            assert not doubled, (slug, doubled)
        if slug not in ("l03-replicas-with-headroom", "l10-serving-bill"):
            continue
        for step in problem.steps:
            if re.search(r"\d\S*\s*[×÷]\s*[$\d(]", step):  # arithmetic on the draw's numbers
                assert "=" in step, (slug, step)


def test_bits_for_bytes_names_the_drawn_format():
    for seed in range(60):
        problem = draw_problem(SPECS["l05-kv-per-conversation"], seed)
        if problem.inputs["kv_dtype"] != "q8_0":
            continue
        sentence = says("l05-kv-per-conversation", seed, problem.answer * 8)
        assert "q8_0" in sentence and "f16" not in sentence and "1.0625 B" in sentence
        return
    raise AssertionError("no q8_0 draw in 60 seeds")


def test_the_gradient_fade_reads_without_1_nats_or_a_value_only_scientific_notation_can_type():
    for seed in range(100):
        problem = draw_problem(SPECS["l18-gradient-fade"], seed)
        assert " 1 nats" not in problem.question
        assert problem.answer > 1e-5, (seed, problem.answer)
        weight = [m for m in problem.mistakes if m.slug == "with-beta"]
        assert not weight or "whole weight" not in weight[0].says


@pytest.mark.django_db
def test_a_bare_small_percent_that_is_right_as_typed_is_not_asked_about(client, lessons):
    from quiz.models import PracticeAttempt

    template = PracticeTemplate.objects.get(slug="l16-lora-share")
    seed = next(s for s in range(50) if template.problem(s).answer < 1)
    typed = f"{template.problem(seed).answer:.4f}"  # 0.44, meaning the 0.44% asked for
    page = client.post(template.get_absolute_url(), {"seed": seed, "answer": typed}).content.decode()
    assert "Did you mean" not in page and PracticeAttempt.objects.get().verdict == "right"
    other = next(
        s for s in range(50) if s != seed and template.problem(s).answer > 5 * template.problem(seed).answer
    )
    page = client.post(template.get_absolute_url(), {"seed": other, "answer": typed}).content.decode()
    assert "Did you mean" in page  # neither right nor sure: still asked


def test_a_template_checked_once_is_checked_again_when_any_field_changes():
    # One process keeps each template's checks: an edit the checks refuse must not get the
    # answer its valid version got, and undoing the edit gets the valid answer again.
    from felab_sim.engine.problems.drill_specs import DrillSpec
    from felab_sim.engine.problems.drills import spec_problems

    [path] = CONTENT_DIR.glob("*/practice-09-*.yaml")
    data = yaml.safe_load(path.read_text())["templates"][0]
    assert spec_problems(DrillSpec.from_data("x", data)) == []
    data["mistakes"] = [
        *data.get("mistakes", []),
        {"slug": "odd", "says": "It costs {nothing}.", "factor": 2},
    ]
    assert spec_problems(DrillSpec.from_data("x", data)), "an edit naming nothing drawn is refused"
    data["mistakes"].pop()
    assert spec_problems(DrillSpec.from_data("x", data)) == []
