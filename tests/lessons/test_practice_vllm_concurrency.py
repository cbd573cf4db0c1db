"""l14-max-concurrency asks for the figure vLLM's start-up log prints, in the log's own unit (GiB)."""

import math

import pytest

from felab_sim.engine.calculators import CALCULATORS
from lessons.models import PracticeTemplate

pytestmark = pytest.mark.django_db


def test_the_answer_is_the_concurrency_vllms_log_prints_for_that_pool(lessons):
    template = PracticeTemplate.objects.get(slug="l14-max-concurrency")
    for seed in range(40):
        problem = template.problem(seed)
        gib = problem.inputs["free_gb"] * 1e9 / 2**30
        tokens = problem.inputs["context_tokens"]
        assert f"Available KV cache memory: {gib:.2f} GiB" in problem.question
        per_token = 2 * 2 * problem.inputs["layers"] * problem.inputs["kv_heads"] * problem.inputs["head_dim"]
        printed = f"{gib * 2**30 / (per_token * tokens):.2f}"  # vLLM prints two decimals
        log = (
            f"Available KV cache memory: {gib:.2f} GiB\n"
            f"Maximum concurrency for {tokens:,} tokens per request: {printed}x\n"
        )
        read = CALCULATORS["kv-cache"].run({**problem.before.params, "engine_log": log})
        assert math.isclose(problem.answer, read.value("felab_max_concurrency"), rel_tol=1e-9)
        assert abs(float(printed) / problem.answer - 1) <= template.tolerance


def test_typing_the_logs_figure_is_right(client, lessons):
    template = PracticeTemplate.objects.get(slug="l14-max-concurrency")
    problem = template.problem(1)
    page = client.post(template.get_absolute_url(), {"seed": 1, "answer": f"{problem.answer:.2f}x"})
    assert "Right" in page.content.decode()
    assert "rounded down" not in problem.question.replace("not rounded down", "")
