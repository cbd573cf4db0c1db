"""/progress/ lists the learner's concepts weakest first, from their first tries, each with the
problems that train it."""

import re

import pytest

from felab_sim.engine.problems import concepts
from lessons.models import PracticeTemplate
from quiz.concept_stats import tally

pytestmark = pytest.mark.django_db


def test_a_named_mistake_counts_against_its_concept_only():
    counts = tally([("l05-kv-per-conversation", "off", "kv-once", 0, False)])
    assert counts["k-and-v"] == [0, 1]
    assert counts["bytes-per-value"] == [0, 0] and counts["per-item-and-total"] == [0, 0]


def test_a_named_mistake_counts_only_against_concepts_its_template_exercises(monkeypatch):
    # kv-once tagged with a concept l05-kv-per-conversation's steps never use as well.
    monkeypatch.setattr(concepts, "MISTAKES", {**concepts.MISTAKES, "kv-once": ("k-and-v", "token-prices")})
    counts = tally([("l05-kv-per-conversation", "off", "kv-once", 0, False)])
    assert counts["k-and-v"] == [0, 1]
    assert counts["token-prices"] == [0, 0]


def test_a_named_mistake_with_no_concept_of_its_template_counts_against_all_of_them(monkeypatch):
    monkeypatch.setattr(concepts, "MISTAKES", {**concepts.MISTAKES, "kv-once": ("token-prices",)})
    counts = tally([("l05-kv-per-conversation", "off", "kv-once", 0, False)])
    assert counts["k-and-v"] == counts["bytes-per-value"] == counts["per-item-and-total"] == [0, 1]
    assert counts["token-prices"] == [0, 0]


def test_a_thousandfold_slip_counts_against_unit_prefixes_not_the_ridge():
    counts = tally([("l00-bandwidth-not-cores", "off", "tera-over-giga", 0, False)])
    assert counts["unit-prefixes"] == [0, 1]
    assert counts["roofline-ridge"] == [0, 0]


def test_cache_counted_once_where_the_context_doubles_counts_against_k_and_v_too():
    # The same number as the count before the change: the sentence names both slips.
    counts = tally([("l05-context-doubles", "off", "before-the-change", 0, False)])
    assert counts["after-over-before"] == counts["k-and-v"] == [0, 1]


def test_an_unnamed_miss_counts_against_every_concept_of_the_template():
    counts = tally([("l05-kv-per-conversation", "off", "", 0, False)])
    assert counts["k-and-v"] == counts["bytes-per-value"] == counts["per-item-and-total"] == [0, 1]


def test_right_after_a_hint_or_show_me_is_no_right_first_try():
    counts = tally(
        [("l04-efficiency", "right", "", 1, False), ("l04-efficiency", "right", "", 0, False),
         ("l04-efficiency", "off", "", 0, True)]
    )  # fmt: skip
    assert counts["shares-and-percents"] == [1, 3]


def concept_names(page: str) -> list[str]:
    section = page.split('id="concepts"')[1].split("</ol>")[0]
    return re.findall(r'<li class="concept" id="concept-([a-z-]+)"', section)


def test_progress_lists_concepts_weakest_first_with_problems_to_train_them(client, lessons):
    assert 'id="concepts"' not in client.get("/progress/").content.decode()
    kv = PracticeTemplate.objects.get(slug="l05-kv-per-conversation")
    bills = PracticeTemplate.objects.get(slug="l09-cost-per-1k")
    # KV counted once (a named mistake), then a right bill: K and V is weakest, prices strongest.
    kv_once = kv.problem(1).answer / 2
    assert client.post(kv.get_absolute_url(), {"seed": 1, "answer": f"{kv_once} GB"}).status_code == 200
    answer = f"${bills.problem(1).answer}"
    assert client.post(bills.get_absolute_url(), {"seed": 1, "answer": answer}).status_code == 200
    page = client.get("/progress/").content.decode()
    order = concept_names(page)
    assert order[0] == "k-and-v"
    assert order.index("token-prices") < order.index("gb-and-gib")  # practised before not yet
    k_and_v = page.split('id="concept-k-and-v"')[1].split('<li class="concept"')[0]
    assert "0 of 1 right first time (0%)" in k_and_v
    links = re.findall(r'href="/practice/([a-z0-9-]+)/"', k_and_v)
    # Three of the four templates whose steps count K and V, the ones not yet tried first.
    assert (
        len(links) == 3
        and set(links)
        <= {"l05-kv-per-conversation", "l05-context-doubles", "l14-max-concurrency", "l14-fp8-kv"}
        and "l05-kv-per-conversation" not in links
    )
    prices = page.split('id="concept-token-prices"')[1].split("</li>")[0]
    assert "1 of 1 right first time (100%)" in prices
    gib = page.split('id="concept-gb-and-gib"')[1].split("</li>")[0]
    assert "not practised yet" in gib and "a GiB, 2³⁰ bytes, is 7.4% more" in gib
    bytes_per_value = page.split('id="concept-bytes-per-value"')[1].split("</li>")[0]
    assert "4-bit 0.5, about 0.56 with its block scales" in bytes_per_value
