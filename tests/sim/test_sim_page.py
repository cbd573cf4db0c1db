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
        ({"slots": "-3"}, "Slots must be an integer at least 1 and at most 1,024 (got -3)"),
        ({"step_ms": "nan"}, "Step time alone (ms) must be a number (got &#x27;nan&#x27;)"),
        ({"growth": "2"}, "Step growth per extra request must be a number at least 0 and at most 1 (got 2)"),
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
        # Led by the label once: not "Slots (slots): slots must be ...".
        assert f"({next(iter(query))}):" not in response.content.decode()


def test_no_level_meeting_the_slo_is_explained(client):
    body = client.get(URL, {"slo_ms": "5"}).content.decode()
    assert "No level meets the SLO" in body


def test_pages_without_plots_do_not_load_plotly(client, db):
    assert PLOTLY not in client.get("/").content.decode()


def test_numbers_print_by_the_sites_one_rule(client):
    body = client.get(URL, {"levels": "1,8,16,32", "slo_ms": "500"}).content.decode()
    assert "course 3,357" in body  # not 3357.0
    assert "within the 500 ms SLO" in body  # not 500.0 ms
    assert ".0<" not in body and ".0 ms" not in body


def test_the_course_run_is_beside_only_the_settings_it_was_measured_at(client):
    default = client.get(URL).content.decode()
    assert "course 275.1" in default and "run (8 slots, 128 max tokens) at the levels it measured" in default
    assert "(course's run, 8 slots, 128 max tokens)" in default  # the chart's legend
    sixteen = client.get(URL, {"slots": "16"}).content.decode()
    assert "course 275.1" not in sixteen and "(course's run" not in sixteen
    assert "measured at 8 slots, 128 max tokens, so it is not shown" in sixteen


def test_the_course_run_is_drawn_only_at_the_levels_swept():
    from felab_sim.engine.sweep.course_run import published_for
    from felab_sim.engine.sweep.sweep_params import SweepParams
    from felab_sim.live import cached_sweep

    assert [row["conc"] for row in published_for(SweepParams(levels=(1, 8)))] == [1, 8]
    assert published_for(cached_sweep(SweepParams(levels=(1, 8))).params)[-1]["conc"] == 8


def test_every_level_meeting_the_slo_says_capacity_is_at_least_not_a_knee(client):
    body = client.get(URL, {"levels": "1,8"}).content.decode()
    assert "capacity is at least 8. Add higher levels to find the knee." in body
    assert "knee: capacity 8" not in body
    assert "every level within the SLO: capacity is at least 8" in body


@pytest.mark.parametrize("run", ["²", "١٢", "x", "99999999999999999999999", ""])
def test_a_run_id_that_is_not_a_plain_number_draws_no_overlay(client, run):
    # "²".isdigit() is True but int("²") raises: this was a 500.
    response = client.get(URL, {"run": run})
    assert response.status_code == 200 and "Capacity is C = 8" in response.content.decode()


@pytest.mark.parametrize("path", [URL, "/sim/sweep.json"])
def test_a_parameter_given_twice_is_a_400_naming_it_on_the_page_and_in_json(client, path):
    # One rule for both: neither silently takes the last value.
    response = client.get(f"{path}?slots=8&slots=16&levels=1,8")
    assert response.status_code == 400
    assert "slots is given 2 times; give it once" in response.content.decode()
    assert "Capacity is C = 16" not in response.content.decode()
