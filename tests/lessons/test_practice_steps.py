"""Every printed step of every bundled template's worked solution holds to the digits it prints.

Each step's equations are read from the page's own text (felab_sim.engine.problems.step_check): the left
side computed from the numbers as printed must round to the right side at its last printed digit.
"""

import itertools
import re

import pytest

from felab_sim.engine.core.numbers import format_with_unit
from felab_sim.engine.problems.drills import draw_problem
from felab_sim.engine.problems.step_check import check_step, false_steps
from tests.lessons.test_practice_bundled import SPECS

SEEDS = 300


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_every_printed_step_of_every_seed_adds_up(slug):
    checked = 0
    for seed in range(SEEDS):
        problem = draw_problem(SPECS[slug], seed)
        assert len(problem.steps) >= 1
        for number, step in enumerate(problem.steps, 1):
            result = check_step(step)
            assert result.problems == [], f"{slug} seed {seed} step {number}: {step}"
            checked += result.checked
        answer = problem.answer_text
        assert answer.replace(" ", "") in " ".join(problem.steps).replace(" ", ""), (slug, seed, answer)
    assert checked >= SEEDS, f"{slug}: its steps hold fewer equations than draws"


# A clause's sides, as a reader splits them: "; ", ": " and ". " end a clause, "=" joins two sides.
CLAUSE = re.compile(r"; |: |\. (?=\S)|\.$")
GREEK = re.compile(r"[α-ωΑ-Ω]")


def printed_products_and_quotients(step: str) -> int:
    """How many equations in a step put a printed product or quotient beside a printed number:
    digits on both sides, × or ÷ on one, no formula's letter (α) on either."""
    count = 0
    for clause in CLAUSE.split(step):
        sides = clause.split("=")
        for left, right in itertools.pairwise(sides):
            both_printed = re.search(r"\d", left) and re.search(r"\d", right)
            if both_printed and re.search("[×÷]", left + right) and not GREEK.search(left + right):
                count += 1
    return count


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_every_printed_product_and_quotient_is_checked(slug):
    """Words in parentheses ("2 (K and V)", "2 B (f16)") and a unit of one letter ("730 h") once
    hid a step's arithmetic from the check; every product and quotient printed is now read."""
    for seed in range(SEEDS // 3):
        for step in draw_problem(SPECS[slug], seed).steps:
            assert check_step(step).checked >= printed_products_and_quotients(step), (slug, seed, step)


@pytest.mark.parametrize(
    "step",
    [
        "$0.000491 ÷ $0.000263 = 1×.",
        "$0.002016 ÷ $0.001908 = 1.0×.",
        "Concurrency = 42.9497 GB ÷ 0.939524 GB = 45×, not rounded down.",
        "Per token: 2 (K and V) × 28 layers × 4 KV heads × 128 dimensions × 2 B (f16) = 60,000 B.",
        "Dedicated: 730 h × $4 = $2,900 a month.",
        "At 8,192 tokens a conversation holds 57,344 B × 8,192 = 0.48 GB, twice what it did.",
        "One conversation at 8,192 tokens holds 1.1 GB; 80 GB ÷ 1.1 GB, rounded down = 74 conversations.",
        "Read per token: 3.6B active × 4.8 ÷ 8 = 2.2 GB; 546 GB/s ÷ 2.2 GB = 252.8 tok/s.",
        "Dedicated: 730 h × $2.5 = $1,825 a month; $1,825 ÷ $0.00046 = 3,976,035 tickets.",
        "Speed-up = 2 tokens ÷ 1.6 = 1.1×.",
        "Per ticket: (1,400 × $0.15 + 30 × $0.60) ÷ 1,000,000 = $0.00023; × 20,000,000 = $4,560.",
    ],
)
def test_the_walks_rounded_middle_steps_are_caught(step):
    assert false_steps(step)


@pytest.mark.parametrize(
    "step",
    [
        "80 GB ÷ 1.07374 GB = 74.51, rounded down = 74 conversations.",
        "Per token: 2 (K and V) × 32 layers × 8 KV heads × 128 dimensions × 2 B = 131,072 B; × 8,192 tokens = 1.07 GB.",
        "TTFT = 15 ms + 3,000 tokens ÷ 5,000 tok/s = 615 ms.",
        "The pool: 10.00 GiB = 10.7374 GB.",
        "σ(1) = 1 ÷ (1 + e^−1) = 0.73.",
        "Loss = −log σ(0.5) = 0.47.",
        "400 × (1 + 0.2) ÷ 8, rounded up = 60 replicas.",
        "At 8,192 tokens a conversation holds 57,344 B × 8,192 = 0.469762 GB, twice what it did.",
        "Dedicated: 730 h × $4 = $2,920 a month.",
    ],
)
def test_true_steps_pass(step):
    assert false_steps(step) == [] and check_step(step).checked >= 1


def test_money_leads_with_its_sign():
    assert format_with_unit(0.1315, "$") == "$0.13"
    assert format_with_unit(4.5e-5, "$") == "$4.5 × 10⁻⁵"


def test_the_kv_solution_names_bytes_per_value_and_l10_the_gpus_and_l11_the_rank():
    kv = draw_problem(SPECS["l05-kv-per-conversation"], 1)
    assert kv.inputs["kv_dtype"] == "f16" and "× 2 B =" in kv.steps[1]
    assert "on one GPU" in draw_problem(SPECS["l10-serving-bill"], 1).question
    full = draw_problem(SPECS["l11-full-memory"], 1)
    assert f"rank-{full.before.params['rank']} adapters" in full.steps[-1]
