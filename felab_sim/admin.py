from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from .engine.calculators import CALCULATORS
from .engine.sweep.sweep_params import SERVER_PARAMS, SWEEP_PARAMS
from .live import sim_query
from .models import ParameterSet, Scenario
from .pages.forms import check_across, field_text, param_fields

# The practice server's rules, then the sweep's: every declared sweep parameter, in its order.
_SERVER_NAMES = tuple(param.name for param in SERVER_PARAMS)
_SWEEP_NAMES = tuple(param.name for param in SWEEP_PARAMS if param.name not in _SERVER_NAMES)


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    # A few columns to tell scenarios apart (a stale name fails Django's checks); the change
    # page below has every one.
    list_display = ("name", "slug", "slots", "step_ms", "growth", "levels", "slo_ms", "simulator_link")
    search_fields = ("name", "slug", "description")
    prepopulated_fields = {"slug": ("name",)}
    fieldsets = (
        (None, {"fields": ("name", "slug", "description")}),
        ("The practice server", {"fields": _SERVER_NAMES}),
        ("The sweep", {"fields": _SWEEP_NAMES}),
    )

    @admin.display(description="simulator")
    def simulator_link(self, scenario: Scenario) -> str:
        try:
            query = sim_query(scenario.sweep_params())
        except ValueError:
            return "—"
        return format_html('<a href="/sim/?{}">open</a>', query)


class ParameterSetForm(forms.ModelForm):
    """A parameter set with one field per parameter of its calculator, generated from the declaration.

    ``params`` is not edited as JSON: the generated fields write it, keeping only the values
    that differ from the calculator's defaults.
    """

    calculator = forms.ChoiceField(
        choices=[(name, f"{name}: {calc.title}") for name, calc in CALCULATORS.items()],
        help_text="Its parameters appear once the set is saved.",
    )

    class Meta:
        model = ParameterSet
        fields = ("slug", "calculator", "name", "description")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calculator = CALCULATORS.get(self.instance.calculator) if self.instance.pk else None
        if self.calculator is None:
            return
        stored = self.instance.params if isinstance(self.instance.params, dict) else {}
        for name, field in param_fields(self.calculator).items():
            value = stored.get(name, self.calculator.param(name).default)
            field.initial = field_text(value)
            self.fields[name] = field

    def clean(self):
        data = super().clean()
        if self.calculator is None:
            self.instance.params = {}
            return data
        values = {param.name: data.get(param.name) for param in self.calculator.params}
        if not self.errors and check_across(self, self.calculator, values):
            self.instance.params = self.calculator.changed(values)
        return data


@admin.register(ParameterSet)
class ParameterSetAdmin(admin.ModelAdmin):
    form = ParameterSetForm
    list_display = ("slug", "name", "calculator", "changed_params")
    list_filter = ("calculator",)
    search_fields = ("slug", "name", "description")
    prepopulated_fields = {"slug": ("name",)}

    def get_form(self, request: HttpRequest, obj: ParameterSet | None = None, change: bool = False, **kwargs):
        # The generated fields are added by the form itself; the factory only knows model fields.
        readonly = self.get_readonly_fields(request, obj)
        kwargs["fields"] = [name for name in ParameterSetForm.Meta.fields if name not in readonly]
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: ParameterSet | None = None):
        # The fields below belong to the calculator: change it by adding a new set.
        return ("calculator",) if obj is not None else ()

    def get_fieldsets(self, request: HttpRequest, obj: ParameterSet | None = None):
        main = (None, {"fields": ("name", "slug", "calculator", "description")})
        calculator = CALCULATORS.get(obj.calculator) if obj is not None else None
        if calculator is None:
            note = (
                "Save to choose the parameters: the calculator's own fields appear then, with its defaults."
            )
            return (main, ("Parameters", {"fields": (), "description": note}))
        names = tuple(param.name for param in calculator.params)
        note = "Empty or unchanged fields keep the calculator's defaults; only changed values are stored."
        return (main, (f"Parameters of {calculator.title}", {"fields": names, "description": note}))

    @admin.display(description="parameters changed from the defaults")
    def changed_params(self, parameter_set: ParameterSet) -> str:
        params = parameter_set.params if isinstance(parameter_set.params, dict) else {}
        return ", ".join(f"{name}={field_text(value)}" for name, value in params.items()) or "none"
