import pytest

from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import SweepParams

URL = "/sim/sweep.json"
LEVEL_KEYS = {"conc", "requests", "agg_tok_s", "user_tok_s", "ttft_p50_ms", "ttft_p95_ms", "goodput_rps"}
# The endpoint is rate-limited, and without Redis its limit counts in the database.
pytestmark = pytest.mark.django_db


def test_defaults_give_design_md_shape_and_the_models_numbers(client):
    response = client.get(URL)
    assert response.status_code == 200
    data = response.json()
    assert set(data) == {"params", "levels", "slo_ms", "capacity"}
    assert [level["conc"] for level in data["levels"]] == [1, 2, 4, 8, 16, 32]
    assert all(set(level) == LEVEL_KEYS for level in data["levels"])
    assert data["capacity"] == 8 and data["slo_ms"] == 500
    assert data == run_sweep(SweepParams()).as_dict()


def test_parameters_use_the_flat_names(client):
    query = {
        "levels": "1,8,16",
        "slots": "16",
        "step_ms": "20",
        "growth": "0.05",
        "prefill_tok_s": "3000",
        "max_tokens": "64",
        "slo_ms": "400",
        "request_overhead_ms": "0",
        "token_overhead_ms": "0",
    }
    data = client.get(URL, query).json()
    assert data["params"]["slots"] == 16 and data["params"]["max_tokens"] == 64
    assert [level["conc"] for level in data["levels"]] == [1, 8, 16]
    assert data["capacity"] == 16


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"slots": ""}, "slots"),
        ({"slots": "-1"}, "slots"),
        ({"slots": "0"}, "slots"),
        ({"slots": "100000"}, "slots"),
        ({"slots": "eight"}, "slots"),
        ({"step_ms": "nan"}, "step_ms"),
        ({"step_ms": "inf"}, "step_ms"),
        ({"step_ms": "-inf"}, "step_ms"),
        ({"step_ms": "0"}, "step_ms"),
        ({"growth": "1.5"}, "growth"),
        ({"max_tokens": "1e9"}, "max_tokens"),
        ({"max_tokens": "0"}, "max_tokens"),
        ({"slo_ms": "NaN"}, "slo_ms"),
        ({"request_overhead_ms": "-4"}, "request_overhead_ms"),
        ({"token_overhead_ms": "1e400"}, "token_overhead_ms"),
        ({"levels": ",".join(str(n) for n in range(1, 14))}, "levels"),
        ({"levels": ""}, "levels"),
        ({"levels": "1,x"}, "levels"),
        ({"levels": "0"}, "levels"),
        ({"levels": "1,2048"}, "levels"),
        ({"colour": "blue"}, "colour"),
        ({"slots": "9" * 5000}, "slots"),
    ],
)
def test_bad_input_is_a_400_naming_the_parameter(client, query, param):
    response = client.get(URL, query)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == param
    assert param in error["message"]


def test_a_parameter_given_twice_is_refused(client):
    response = client.get(URL + "?slots=8&slots=16")
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "slots"


def test_sweeps_too_big_for_the_web_are_refused_with_the_cap(client):
    response = client.get(URL, {"levels": "512,768,1024", "slots": "1024", "max_tokens": "4096"})
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "web cap is 2,000,000" in message and "manage.py sweep" in message


def test_post_is_not_allowed(client):
    assert client.post(URL).status_code == 405


def test_too_many_requests_get_a_429_with_retry_after(client, settings):

    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "sweep": (3, 60)}
    statuses = [client.get(URL, {"levels": "1"}).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = client.get(URL, {"levels": "1"})
    assert 1 <= int(response["Retry-After"]) <= 60
    assert "at most 3 per 60 s" in response.json()["error"]["message"]
    other = client.get(URL, {"levels": "1"}, REMOTE_ADDR="10.0.0.9")
    assert other.status_code == 200  # the limit is per address
