import pytest

pytestmark = pytest.mark.django_db

URL = "/sim/"
PLOTLY = "plotly-basic-4.1.1.min.js"


def test_default_page_draws_the_practice_server(client):
    response = client.get(URL)
    body = response.content.decode()
    assert response.status_code == 200
    assert "Capacity is C = 8" in body and "requests queue for one of the 8 slots" in body
    assert 'id="sim-figure"' in body and 'data-figure="sim-figure"' in body
    assert PLOTLY in body  # loaded by js/plots.js, only on pages that plot
    assert "course 275.1" in body  # the published run beside the model


def test_the_url_holds_the_parameters(client):
    body = client.get(URL, {"slots": "16"}).content.decode()
    assert "Capacity is C = 16" in body
    assert 'name="slots" value="16"' in body


def test_htmx_gets_only_the_results_partial(client):
    response = client.get(URL, {"slots": "16"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="sim-results"')
    assert "<form" not in body and "Capacity is C = 16" in body
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"slots": "-3"}, "slots must be an integer from 1 to 1024"),
        ({"step_ms": "nan"}, "Enter a number"),
        ({"growth": "2"}, "growth must be a number at least 0 and at most 1"),
        ({"levels": "1,2,3,4,5,6,7,8,9,10,11,12,13"}, "levels must be 1 to 12"),
        ({"levels": "512,768,1024", "slots": "1024", "max_tokens": "4096"}, "web cap"),
    ],
)
def test_bad_settings_show_what_to_fix_with_a_400(client, query, message):
    for headers in ({}, {"HX-Request": "true"}):
        response = client.get(URL, query, headers=headers)
        assert response.status_code == 400
        assert message in response.content.decode()
        assert "Nothing simulated" in response.content.decode()


def test_no_level_meeting_the_slo_is_explained(client):
    body = client.get(URL, {"slo_ms": "5"}).content.decode()
    assert "No level meets the SLO" in body


def test_pages_without_plots_do_not_load_plotly(client, db):
    assert PLOTLY not in client.get("/").content.decode()


@pytest.mark.parametrize("run", ["²", "١٢", "x", "99999999999999999999999", ""])
def test_a_run_id_that_is_not_a_plain_number_draws_no_overlay(client, run):
    # "²".isdigit() is True but int("²") raises: this was a 500.
    response = client.get(URL, {"run": run})
    assert response.status_code == 200 and "Capacity is C = 8" in response.content.decode()
