"""Named parameter sets: validated by the calculators' declarations, edited in the admin."""

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from felab_sim.engine.calculators import get
from felab_sim.models import ParameterSet
from felab_sim.pages.forms import CalculatorForm

pytestmark = pytest.mark.django_db
ADMIN = "/admin/felab_sim/parameterset/"


def make(slug: str = "l04-m4-max-q4km", calculator: str = "decode-ceiling", **params) -> ParameterSet:
    parameter_set = ParameterSet(slug=slug, calculator=calculator, name=slug, params=params)
    parameter_set.full_clean()
    parameter_set.save()
    return parameter_set


def test_a_set_keeps_only_what_differs_from_the_defaults_and_computes():
    parameter_set = make(bandwidth_gbs="273", model_gb=4.9)
    assert parameter_set.params == {"bandwidth_gbs": 273.0, "model_gb": 4.9}
    assert parameter_set.result().value("ceiling_tok_s") == pytest.approx(55.7, abs=0.05)


@pytest.mark.parametrize(
    ("calculator", "params", "named"),
    [
        ("decode-ceiling", {"bandwidth_gbs": -1}, "bandwidth_gbs"),
        ("decode-ceiling", {"bandwith_gbs": 5}, "bandwith_gbs"),
        ("decode-ceiling", {"bandwidth_gbs": 546}, "bandwidth_gbs is the calculator's default"),
        ("decode-ceiling", {"quant": "q4_k_m"}, "quant is the calculator's default"),
        ("prefill", {"prompt_tokens": 10, "cached_tokens": 20}, "cached_tokens"),
        ("no-such-calculator", {}, "not a calculator"),
    ],
)
def test_bad_sets_are_refused_with_the_reason(calculator, params, named):
    with pytest.raises(ValidationError) as error:
        ParameterSet(slug="x", calculator=calculator, name="x", params=params).full_clean()
    assert named in str(error.value)


def test_a_set_stored_broken_anyway_gives_no_result_rather_than_an_error():
    ParameterSet.objects.create(slug="broken", calculator="prefill", name="b", params={"prompt_tokens": "x"})
    assert ParameterSet.objects.results_by_slug(["broken"]) == {"broken": None}


def test_results_for_many_sets_cost_one_query():
    for index in range(5):
        make(f"l05-set-{index}", "kv-cache", context_tokens=1024 * (index + 1))
    with CaptureQueriesContext(connection) as queries:
        results = ParameterSet.objects.results_by_slug([f"l05-set-{index}" for index in range(5)])
    assert len(queries) == 1
    assert results["l05-set-0"].value("kv_mib_per_conversation") == 128


def test_params_for_the_file_follow_the_declaration_in_whole_numbers():
    parameter_set = make(model_gb=4.9, bandwidth_gbs=273)
    assert list(parameter_set.params_for_file().items()) == [("bandwidth_gbs", 273), ("model_gb", 4.9)]


# --------------------------------------------------------------------------- the admin


def test_the_admin_form_has_one_field_per_declared_parameter(admin_client):
    parameter_set = make()
    body = admin_client.get(f"{ADMIN}{parameter_set.pk}/change/").content.decode()
    for name in ("bandwidth_gbs", "params_b", "active_params_b", "quant", "model_gb", "ram_gb"):
        assert f'name="{name}"' in body
    assert 'value="546"' in body  # the stored value, as a form writes it
    assert "Memory bandwidth from the spec sheet" in body  # the declaration's help


def test_saving_in_the_admin_stores_only_the_changes(admin_client):
    parameter_set = make()
    form = {"name": "M4 Pro", "slug": parameter_set.slug, "description": "", "bandwidth_gbs": "273"}
    # The admin's form arrives filled with every default; the set keeps only what was changed.
    form |= {**CalculatorForm.defaults(get("decode-ceiling")), "bandwidth_gbs": "273", "quant": "q8_0"}
    response = admin_client.post(f"{ADMIN}{parameter_set.pk}/change/", form)
    assert response.status_code == 302
    parameter_set.refresh_from_db()
    assert parameter_set.params == {"bandwidth_gbs": 273.0, "quant": "q8_0"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("bandwidth_gbs", "fast", "Memory bandwidth must be a number at least 0.1"),
        ("ram_gb", "nan", "Memory must be a number"),
        ("ram_gb", "", "Memory must be a number greater than 0 and at most 1,000,000; it is missing"),
        ("active_params_b", "9", "Active parameters must be at most params_b"),
    ],
)
def test_the_admin_names_a_bad_parameter(admin_client, field, value, message):
    parameter_set = make()
    defaults = CalculatorForm.defaults(get("decode-ceiling"))
    form = {**defaults, "name": "x", "slug": parameter_set.slug, "description": "", field: value}
    body = admin_client.post(f"{ADMIN}{parameter_set.pk}/change/", form).content.decode()
    assert message in body
    parameter_set.refresh_from_db()
    assert parameter_set.params == {}


def test_adding_a_set_in_the_admin_then_its_fields_appear(admin_client):
    response = admin_client.post(
        f"{ADMIN}add/", {"name": "Speculation", "slug": "l13-alpha-low", "calculator": "speculative"}
    )
    assert response.status_code == 302
    parameter_set = ParameterSet.objects.get(slug="l13-alpha-low")
    body = admin_client.get(f"{ADMIN}{parameter_set.pk}/change/").content.decode()
    assert 'name="acceptance"' in body and 'name="draft_tokens"' in body


def test_instructors_may_edit_parameter_sets(instructor, client):
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.get(name="Instructors")
    group.permissions.add(*Permission.objects.filter(codename__endswith="_parameterset"))
    client.force_login(instructor)
    assert client.get(f"{ADMIN}add/").status_code == 200
