"""The sweep's parameters are declared once (SWEEP_PARAMS) and every consumer follows.

A parameter added to, renamed in or dropped from the declarations must show up in the /sim/ form,
both commands' flags, the Scenario columns, the admin's change page, the lesson content's
scenarios, SweepParams itself and the practice server's /health; each test below fails otherwise.
"""

from __future__ import annotations

import dataclasses

import pytest

from felab_sim.admin import ScenarioAdmin
from felab_sim.cards.content_files import SCENARIO_FIELDS
from felab_sim.engine.sweep.sweep_params import SERVER_PARAMS, SWEEP_PARAMS, ServerParams, SweepParams
from felab_sim.management.commands import practice_server, sweep
from felab_sim.models import Scenario
from felab_sim.pages.forms import RealSweepForm, SweepForm
from felab_sim.practice import PracticeApp

DECLARED = [param.name for param in SWEEP_PARAMS]
SERVER = [param.name for param in SERVER_PARAMS]


def flags_of(command_module) -> dict[str, str]:
    """A command's flags: destination name -> help text."""
    parser = command_module.Command().create_parser("manage.py", command_module.__name__.rsplit(".", 1)[1])
    return {action.dest: action.help or "" for action in parser._actions if action.option_strings}


def test_the_model_takes_exactly_the_declared_parameters():
    own = [f.name for f in dataclasses.fields(SweepParams) if f.name != "server"]
    server = [f.name for f in dataclasses.fields(ServerParams)]
    assert sorted(own + server) == sorted(DECLARED)
    assert list(SweepParams.FLAT_KEYS) == DECLARED
    assert list(SweepParams().as_flat()) == DECLARED
    assert server == SERVER


def test_the_declared_defaults_are_the_models():
    flat = SweepParams().as_flat()
    for param in SWEEP_PARAMS:
        parsed = SweepParams.from_flat({param.name: param.default}).as_flat()[param.name]
        assert flat[param.name] == parsed, param.name


def test_the_sim_form_has_one_field_per_declaration():
    form = SweepForm()
    assert list(form.fields) == DECLARED
    for param in SWEEP_PARAMS:
        assert form.fields[param.name].help_text == param.help


def test_the_real_sweep_form_is_made_of_declarations():
    form = RealSweepForm()
    assert set(form.fields) <= set(DECLARED)
    for name, field in form.fields.items():
        assert field.label.lower() == dict((p.name, p.label) for p in SWEEP_PARAMS)[name].lower()


def test_the_sweep_command_has_a_flag_per_declaration():
    flags = flags_of(sweep)
    for param in SWEEP_PARAMS:
        assert param.name in flags, param.flag
        assert param.help.replace("%", "%%") in flags[param.name]


def test_the_practice_server_has_a_flag_per_server_declaration():
    flags = flags_of(practice_server)
    declared = {name for name in flags if name in DECLARED}
    assert declared == set(SERVER)
    for param in SERVER_PARAMS:
        assert param.help.replace("%", "%%") in flags[param.name]


def test_the_practice_server_reports_its_declared_rules():
    assert list(PracticeApp(ServerParams()).status()["params"]) == SERVER


def test_scenario_has_one_column_per_declaration_described_by_it():
    for param in SWEEP_PARAMS:
        column = Scenario._meta.get_field(param.name)
        assert column.default == param.default, param.name
        assert column.help_text == param.help, param.name
        assert column.verbose_name == param.label, param.name


def test_the_content_files_carry_every_declared_parameter():
    assert [name for name in SCENARIO_FIELDS if name in DECLARED] == DECLARED


def test_the_scenario_admin_shows_every_declared_parameter():
    shown = [name for _title, options in ScenarioAdmin.fieldsets for name in options["fields"]]
    assert sorted(name for name in shown if name not in ("name", "slug", "description")) == sorted(DECLARED)


@pytest.mark.django_db
def test_the_scenario_change_page_has_an_input_per_declaration(admin_client):
    scenario = Scenario.objects.create(slug="s", name="S")
    html = admin_client.get(f"/admin/felab_sim/scenario/{scenario.pk}/change/").content.decode()
    for param in SWEEP_PARAMS:
        assert f'name="{param.name}"' in html, param.name
        assert param.help in html, param.name
