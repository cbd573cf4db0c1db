import html

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from felab_sim.models import Scenario
from lessons.models import Card, CardNumber
from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db
STEP_2 = SEED_CARD_URL.replace("step-1", "step-2")


def test_seed_card_shows_computed_live_beside_the_stated_numbers(client, seed_card):
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "Computed live" in body
    for label, stated, live in [
        ("Total, 8 people ÷ 1 person", "5.1", "5.1"),
        ("Share of solo speed each person keeps (%)", "71", "71"),  # 70.7, with the card's digits
        ("Step time, 8 people (ms)", "25.6", "25.6"),
    ]:
        # Each computed number links to the simulator at the card's scenario.
        link = f'<a href="{html.escape(seed_card.sim_url())}#sim-results" title="Change the settings it was worked out from">'
        row = f'<tr><th scope="row">{label}</th><td>{stated}</td><td class="live-value">{link}{live}</a></td></tr>'
        assert row in body
    assert 'id="card-live-figure"' in body and "plotly-basic" in body


def test_seed_card_shows_the_course_s_published_run_as_its_one_value_and_names_it(client, seed_card):
    # The card quotes the course's run; the model's 54.2, 276.3 and 38.8 for the same quantities
    # belong on /sim/, labelled as the model's, not beside them.
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    source = html.escape(
        "Rows marked published are not computed: they are the course's published run of lesson 03's "
        "practice server (8 slots, 128 max tokens)."
    )
    assert body.count(source) == 1
    for label, figure in [
        ("Total, 1 person (tok/s)", "54.1"),
        ("Total, 8 people (tok/s)", "275.1"),
        ("Each person, alone (tok/s)", "54.9"),
        ("Each person, 8 people (tok/s)", "38.9"),
    ]:
        row = (
            f'<tr><th scope="row">{label}<span class="number-note">Published, not computed</span></th>'
            f'<td>{figure}</td><td class="live-value">{figure}</td></tr>'
        )
        assert row in body
    for model_figure in ("54.2", "276.3", "38.8"):
        assert f">{model_figure}<" not in body


def test_hidden_answer_has_no_live_panel(client, seed_card):
    assert "Computed live" not in client.get(SEED_CARD_URL).content.decode()


def test_placeholders_in_card_text_are_filled_from_the_scenario(client, seed_card):
    body = client.get(STEP_2, {"answer": "shown"}).content.decode()
    assert 'title="Computed live: sim.replicas.u120">15</span>' in body
    assert 'title="Computed live: sim.replicas_headroom.u120">18</span>' in body
    assert "{{sim." not in body


def test_changing_the_scenario_changes_the_card(client, seed_card):
    Scenario.objects.filter(slug="practice-server").update(slots=16)
    body = client.get(STEP_2, {"answer": "shown"}).content.decode()
    assert 'title="Computed live: sim.capacity">16</span>' in body


def test_an_unknown_name_stored_anyway_never_breaks_the_page(client, seed_card):
    Card.objects.filter(pk=seed_card.pk).update(plain_words="Broken {{sim.c9.nope}} here.")
    card = Card.objects.get(pk=seed_card.pk)
    card.save()  # re-render, bypassing the admin's validation
    CardNumber.objects.create(card=card, order=99, label="Bad", live="nope", stated="1")
    response = client.get(SEED_CARD_URL, {"answer": "shown"})
    assert response.status_code == 200
    assert 'title="Computed live: sim.c9.nope">—</span>' in response.content.decode()


def test_live_panel_costs_at_most_one_query(client, seed_card):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(SEED_CARD_URL, {"answer": "shown"}).status_code == 200
        return len(queries)

    count()  # warm caches
    with_panel = count()
    seed_card.numbers.all().delete()
    Card.objects.filter(pk=seed_card.pk).update(scenario=None)
    without_panel = count()
    assert with_panel <= without_panel + 1


COURSE = "/learn/llm-inference-performance"


@pytest.mark.parametrize(
    ("url", "label", "stated", "live"),
    [
        # Issue 20: the live column showed 0.58, 2.4 and 5.1 beside these.
        (f"{COURSE}/capstone/step-4/", "List price ($ per 1,000 calls)", "0.585", "0.585"),
        (f"{COURSE}/speculative-decoding/step-1/", "α 0.8, k 4, speed-up (×)", "2.40", "2.40"),
        (f"{COURSE}/lora-on-fireworks/step-2/", "38 minutes of serving ($)", "5.07", "5.07"),
    ],
)
def test_the_live_column_prints_as_many_digits_as_the_card(client, lessons, url, label, stated, live):
    body = client.get(url, {"answer": "shown"}).content.decode()
    assert f'<th scope="row">{label}</th><td>{stated}</td><td class="live-value">' in body
    assert f'title="Change the settings it was worked out from">{live}</a></td>' in body


def test_a_panel_row_citing_a_run_the_tables_lack_is_refused(seed_card):
    row = CardNumber(card=seed_card, label="Total", live="measured.practice-run.c9_agg_tok_s", stated="1")
    with pytest.raises(ValidationError, match="'c9_agg_tok_s' is not a field"):
        row.full_clean()
    CardNumber(
        card=seed_card, label="Total", live="measured.practice-run.c8_agg_tok_s", stated="275.1"
    ).full_clean()
