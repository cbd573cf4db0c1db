"""Hypothesis throws arbitrary values at the simulator's endpoints: always 200 or a clear 400."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.sweep.sweep_params import SweepParams

NAMES = SweepParams.FLAT_KEYS
# Values a hostile or careless client sends: numbers of every size and sign, text, NaN, inf,
# unicode, separators, and very long strings.
VALUES = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " ", "nan", "NaN", "inf", "-inf", "1e309", "0x10", "1_000", "١٢", "8,", ",", "--1"]),
    st.text(max_size=60),
    st.text(alphabet="0123456789,", max_size=80),
)
QUERIES = st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=4)


@pytest.fixture
def unlimited(settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "sweep": (0, 60)}  # the fuzzing is no abuse


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(query=QUERIES)
def test_model_accepts_or_names_the_parameter(query):
    try:
        SweepParams.from_flat(query)
    except ParamError as error:
        assert error.param in query and error.param in error.message


@FUZZ
@given(query=QUERIES)
def test_sweep_json_is_200_or_a_400_naming_the_parameter(client, unlimited, query):
    query = {key: value.replace("\x00", "") for key, value in query.items()}
    response = client.get("/sim/sweep.json", query)
    assert response.status_code in (200, 400), (query, response.status_code)
    if response.status_code == 400:
        error = response.json()["error"]
        assert error["param"] in query and error["param"] in error["message"]


@pytest.mark.django_db
@FUZZ
@given(query=QUERIES)
def test_sim_page_is_200_or_a_400_that_says_what_to_fix(client, unlimited, query):
    query = {key: value.replace("\x00", "") for key, value in query.items()}
    response = client.get("/sim/", query)
    assert response.status_code in (200, 400), (query, response.status_code)
    if response.status_code == 400:
        assert "Nothing simulated: fix these settings." in response.content.decode()
