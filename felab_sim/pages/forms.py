from dataclasses import replace

from django import forms
from django.forms.utils import flatatt
from django.http import QueryDict

from ..engine.core.calculator import Calculator
from ..engine.core.params import Param, ParamError, ParamValue, heading
from ..engine.course import chain_settings
from ..engine.serving.engine_params import (
    ENGINE_PARAMS,
    HARDWARE_PARAMS,
    MODEL_CONFIG,
    MODEL_PARAMS,
    SETTINGS_PARAMS,
    WORKLOAD_PARAMS,
    engine_inputs,
)
from ..engine.serving.planner import PLANNER_PARAMS
from ..engine.sweep.limits import BROWSER_LIMITS, ENGINE_WEB_LIMITS, check_web_limits
from ..engine.sweep.sweep_params import SWEEP_PARAMS, SweepParams, sweep_param
from ..live import flat_text

DEFAULTS = SweepParams()


def repeated_parameter(query: QueryDict) -> ParamError | None:
    """The first parameter a query string gives more than once: every simulator page and JSON
    endpoint refuses it (a 400 naming it) rather than pick one of the values."""
    for key, values in query.lists():
        if len(values) > 1:
            return ParamError(key[:60], f"{key[:60]} is given {len(values)} times; give it once")
    return None


class SweepForm(forms.Form):
    """The simulator's parameters as a GET form, its fields generated from SWEEP_PARAMS;
    SweepParams has the last word on every value."""

    def __init__(self, data: dict[str, str] | None = None, repeated: ParamError | None = None) -> None:
        super().__init__(data)
        self.repeated = repeated
        # Ranges are left to SweepParams, so the page and sweep.json word every refusal alike.
        self.fields.update(
            {param.name: param_field(param, unit_in_help=False, check_range=False) for param in SWEEP_PARAMS}
        )

    @classmethod
    def defaults(cls) -> dict[str, str]:
        return flat_text(DEFAULTS)

    def clean(self) -> dict:
        data = super().clean()
        if self.repeated is not None:
            self.add_error(
                self.repeated.param if self.repeated.param in self.fields else None, self.repeated.message
            )
        if self.errors:
            return data
        try:
            params = SweepParams.from_flat(data)
            check_web_limits(params)
        except ParamError as error:
            field = error.param if error.param in self.fields else None
            self.add_error(field, worded(self, error))
            return data
        # Handed on in cleaned_data: the view reads the validated SweepParams from there.
        data["params"] = params
        return data


class RealSweepForm(forms.Form):
    """What a student chooses for a real sweep from /sim/, its fields generated from the sweep's
    declarations; the server's rules are the running practice server's own. A short default
    (1, 8 and 16) and the browser's caps, since real runs take real time."""

    FIELDS = ("levels", "max_tokens", "slo_ms")
    LEVELS = "1,8,16"

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", "run-%s")  # beside the simulator's form on one page
        super().__init__(*args, **kwargs)
        for name in self.FIELDS:
            param = sweep_param(name)
            field = param_field(param, unit_in_help=False, check_range=False)
            field.initial = field_text(param.default)
            self.fields[name] = field
        limits = BROWSER_LIMITS
        self.fields["levels"].initial = self.LEVELS
        self.fields[
            "levels"
        ].help_text = f"Up to C = {limits.max_level} and {limits.max_requests} requests in all."
        self.fields["max_tokens"].widget.attrs["max"] = limits.max_tokens
        self.fields["slo_ms"].help_text = ""

    @classmethod
    def given(cls, data: dict[str, str]) -> dict[str, str]:
        """The settings a posted form gives (an empty field keeps the default)."""
        return {name: data[name] for name in cls.FIELDS if data.get(name)}


# --------------------------------------------------------------------------- calculators
# Fields generated from a calculator's parameter declarations (docs/architecture.md,
# "Parameters: declared once"): the calculator pages and the admin's parameter sets share them.

_ON_OFF = [("off", "off"), ("on", "on")]


def led_by(label: str, error: ParamError) -> str:
    """A ParamError's message as a page shows it: led by the field's label, once.

    The message names the parameter ("slots must be ...") for the JSON and the command line; on
    a page the label stands in for the name, so the list of errors reads "Slots must be ...".
    """
    if error.message.startswith(error.param + " "):
        return label + error.message[len(error.param) :]
    if error.message.startswith(error.param + ": "):  # "workload: ..." would read "Workload: workload: ..."
        return label + error.message[len(error.param) :]
    return f"{label}: {error.message}"


def refuse_repeated_and_unknown(form: forms.Form, repeated: ParamError | None, not_a: str) -> None:
    """A setting given twice is refused on its field; the first name that is no field of the form
    is refused as "'NAME' is not NOT_A"."""
    if repeated is not None:
        form.add_error(repeated.param if repeated.param in form.fields else None, repeated.message)
    unknown = [name for name in form.data if name not in form.fields]
    if unknown:
        form.add_error(None, f"{unknown[0][:60]!r} is not {not_a}")


def worded(form: forms.BaseForm, error: ParamError) -> str:
    """``led_by`` with the form's label for the parameter; a message about no field stays as it is."""
    field = form.fields.get(error.param)
    return error.message if field is None else led_by(str(field.label), error)


class DeclaredField(forms.Field):
    """A field checked by its Param, so the page, the admin and the JSON agree on every rule."""

    def __init__(self, param: Param, **kwargs) -> None:
        self.param = param
        super().__init__(required=False, **kwargs)

    def to_python(self, value):
        text = "" if value is None else str(value).strip()
        try:
            return self.param.parse(text)  # refuses text longer than MAX_TEXT too
        except ParamError as error:
            raise forms.ValidationError(led_by(str(self.label), error)) from None


def _help(param: Param, unit_in_help: bool) -> str:
    unit = f" ({param.unit})" if param.unit and unit_in_help else ""
    most = f" At most {param.max_chars:,} characters." if param.is_long_text else ""
    return param.help + unit + most


def param_field(param: Param, *, unit_in_help: bool = True, check_range: bool = True) -> forms.Field:
    """A form field for a declared parameter; the widget carries its range for the browser, and
    the field checks it too unless ``check_range`` leaves that to the code the form feeds."""
    label = heading(param.label)
    parsed = param if check_range else replace(param, low=None, high=None)
    if param.is_long_text:
        attrs = {"rows": "6", "spellcheck": "false", "autocomplete": "off", "maxlength": str(param.max_chars)}
        widget = forms.Textarea(attrs=attrs)
        return DeclaredField(parsed, label=label, help_text=_help(param, unit_in_help), widget=widget)
    if param.kind == "text":
        widget = forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"})
        return DeclaredField(parsed, label=label, help_text=_help(param, unit_in_help), widget=widget)
    if param.kind in ("choice", "bool"):
        choices = list(param.choices.items()) if param.kind == "choice" else _ON_OFF
        return DeclaredField(
            parsed, label=label, help_text=_help(param, unit_in_help), widget=forms.Select(choices=choices)
        )
    attrs: dict[str, object] = {"step": "1" if param.kind == "int" else "any", "inputmode": "decimal"}
    if param.low is not None:
        attrs["min"] = param.low
    if param.high is not None:
        attrs["max"] = param.high
    if param.optional:
        attrs["placeholder"] = "empty"
    return DeclaredField(
        parsed, label=label, help_text=_help(param, unit_in_help), widget=forms.NumberInput(attrs=attrs)
    )


LONG_CHOICE = 12  # characters: "Llama-3.1-70B" is cut off in half of a 375 px phone's width


def plain_field_rows(form: forms.BaseForm) -> list[dict[str, object]]:
    """Each field's parts for felab_sim/form_fields.html to write as plain HTML: rendering
    Django's widget templates cost more than the rest of a calculator page or /sim/ together
    (bench/bench_calc.py)."""
    rows = []
    for bound in form:
        widget = bound.field.widget
        value = bound.value()
        choices = list(widget.choices) if isinstance(widget, forms.Select) else None
        rows.append(
            {
                "name": bound.name,
                "id": bound.auto_id,
                "label": bound.label,
                "help": bound.help_text,
                "value": "" if value is None else str(value),
                "choices": choices,
                # A select whose longest option a phone's half-width column would cut off.
                "long_choice": bool(choices) and max(len(str(text)) for _, text in choices) > LONG_CHOICE,
                "type": getattr(widget, "input_type", "text"),
                "textarea": isinstance(widget, forms.Textarea),
                # The declaration's range, step and input mode, escaped here as one string.
                "attrs": flatatt(widget.attrs),
                "errors": bound.errors,
            }
        )
    return rows


def field_text(value: ParamValue) -> str:
    """A parameter value as a form or a query string writes it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return ""
    if isinstance(value, float):
        # Whole numbers without ".0"; others in full (":g" would cut them to 6 digits).
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def param_fields(calculator: Calculator) -> dict[str, forms.Field]:
    return {param.name: param_field(param) for param in calculator.params}


def check_across(form: forms.BaseForm, calculator: Calculator, values: dict[str, ParamValue]) -> bool:
    """The calculator's rules across parameters, as an error on the field to change."""
    if calculator.check is None:
        return True
    try:
        calculator.check(values)
    except ParamError as error:
        form.add_error(error.param if error.param in form.fields else None, worded(form, error))
        return False
    return True


class CalculatorForm(forms.Form):
    """A calculator's parameters as a GET form, its fields generated from the declaration."""

    def __init__(
        self, calculator: Calculator, data: dict[str, str], repeated: ParamError | None = None
    ) -> None:
        super().__init__(data)
        self.calculator = calculator
        self.repeated = repeated
        self.fields.update(param_fields(calculator))

    @classmethod
    def defaults(cls, calculator: Calculator) -> dict[str, str]:
        return {param.name: field_text(param.default) for param in calculator.params}

    def clean(self) -> dict:
        data = super().clean()
        if self.repeated is not None:
            self.add_error(None, self.repeated.message)
        unknown = [name for name in self.data if name not in self.fields]
        if unknown:
            self.add_error(None, f"{unknown[0][:60]!r} is not a parameter of {self.calculator.name}")
        if not self.errors:
            check_across(self, self.calculator, self.values())
        return data

    def values(self) -> dict[str, ParamValue]:
        """The checked parameter values (call after is_valid())."""
        return {param.name: self.cleaned_data[param.name] for param in self.calculator.params}


# --------------------------------------------------------------------------- the engine page
# /sim/engine/'s fields, generated from the engine's declarations (engine/serving/engine_params.py).


class EngineForm(forms.Form):
    """The continuous-batching engine's settings and workload as a GET form, plus a pasted
    config.json; hands on the checked values in ``cleaned_data["values"]``."""

    GROUPS = (
        ("Model", MODEL_PARAMS),
        ("Hardware (one GPU)", HARDWARE_PARAMS),
        ("Engine settings (vLLM's names)", SETTINGS_PARAMS),
        ("Workload", WORKLOAD_PARAMS),
        ("The planner's curve and your targets", PLANNER_PARAMS),
    )

    def __init__(self, data: dict[str, str] | None = None, repeated: ParamError | None = None) -> None:
        super().__init__(data)
        self.repeated = repeated
        self.fields.update({param.name: param_field(param) for param in ENGINE_PARAMS + PLANNER_PARAMS})
        self.fields[MODEL_CONFIG] = forms.CharField(
            required=False,
            strip=False,
            label="Config.json",
            help_text=(
                "A Hugging Face model's config.json, pasted whole; choose “my config.json” as the model. "
                f"At most {ENGINE_WEB_LIMITS.max_config_chars:,} characters."
            ),
            widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "autocomplete": "off"}),
        )

    @classmethod
    def defaults(cls) -> dict[str, str]:
        return {param.name: field_text(param.default) for param in ENGINE_PARAMS + PLANNER_PARAMS}

    def clean(self) -> dict:
        data = super().clean()
        refuse_repeated_and_unknown(self, self.repeated, "a setting of the engine")
        if self.errors:
            return data
        values = {param.name: data[param.name] for param in ENGINE_PARAMS}
        try:
            ENGINE_WEB_LIMITS.check(values)
            ENGINE_WEB_LIMITS.check_config(data[MODEL_CONFIG])
            engine_inputs(values, data[MODEL_CONFIG])  # the rules across settings
        except ParamError as error:
            self.add_error(self.field_for(error), worded(self, error))
            return data
        data["values"] = values
        data["planner"] = {param.name: data[param.name] for param in PLANNER_PARAMS}
        return data

    def field_for(self, error: ParamError) -> str | None:
        """The field a refusal belongs to: a request too big for the pool is the workload's."""
        if error.param == "trace":
            return "input_tokens"
        return error.param if error.param in self.fields else None

    def field_groups(self) -> list[tuple[str, list[dict[str, object]]]]:
        rows = {row["name"]: row for row in plain_field_rows(self)}
        return [(title, [rows[param.name] for param in params]) for title, params in self.GROUPS]


# --------------------------------------------------------------------------- the chain page
# /sim/chain/'s fields, generated from the chain's declarations (engine/course/chain_settings.py).


class ChainForm(forms.Form):
    """The chain's settings as a GET form; hands on the checked values in ``cleaned_data["values"]``."""

    GROUPS = (
        ("Model and precision", ("model", "precision", "kv_dtype", "tensor_parallel", "model_config")),
        ("Hardware (one GPU)", ("hardware", "memory_gb", "bandwidth_gbs", "peak_tflops")),
        ("Engine", ("memory_utilization", "overhead_gb", "max_num_seqs")),
        (
            "Traffic",
            ("peak_users", "prompt_tokens", "reply_tokens", "slo_ms", "headroom", "tickets_per_month"),
        ),
        ("Prices", ("gpu_hour_usd", "hours", "input_usd_per_m", "output_usd_per_m")),
    )

    def __init__(self, data: dict[str, str], repeated: ParamError | None = None) -> None:
        super().__init__(data)
        self.repeated = repeated
        self.fields.update({param.name: param_field(param) for param in chain_settings.PARAMS})

    @classmethod
    def defaults(cls) -> dict[str, str]:
        return {param.name: field_text(param.default) for param in chain_settings.PARAMS}

    def clean(self) -> dict:
        data = super().clean()
        refuse_repeated_and_unknown(self, self.repeated, "a setting of the chain")
        if self.errors:
            return data
        values = {param.name: data[param.name] for param in chain_settings.PARAMS}
        try:
            chain_settings.validate(values)
        except ParamError as error:
            self.add_error(error.param if error.param in self.fields else None, worded(self, error))
            return data
        data["values"] = values
        return data

    def first_error(self) -> tuple[str | None, str]:
        """The first refusal, as the JSON names it: the field and its message."""
        for name, errors in self.errors.items():
            return (None if name == "__all__" else name), str(errors[0])
        return None, "invalid settings"

    def field_groups(self) -> list[tuple[str, list[dict[str, object]]]]:
        rows = {row["name"]: row for row in plain_field_rows(self)}
        return [(title, [rows[name] for name in names]) for title, names in self.GROUPS]
