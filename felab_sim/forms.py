from django import forms

from .live import flat_text
from .model import MAX_LEVEL, MAX_LEVELS, MAX_MAX_TOKENS, MAX_SLOTS, ParamError, SweepParams, check_web_limits

DEFAULTS = SweepParams()


def _number(
    label: str, help_text: str, minimum: float, maximum: float, step: float | str
) -> forms.FloatField:
    widget = forms.NumberInput(attrs={"min": minimum, "max": maximum, "step": step, "inputmode": "decimal"})
    return forms.FloatField(label=label, help_text=help_text, widget=widget)


class SweepForm(forms.Form):
    """The simulator's parameters as a GET form; SweepParams has the last word on ranges."""

    levels = forms.CharField(
        label="Concurrency levels",
        help_text=f"Comma-separated, up to {MAX_LEVELS}, each 1 to {MAX_LEVEL}.",
        max_length=200,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"}),
    )
    slots = forms.IntegerField(
        label="Slots",
        help_text="Requests the server batches at once; the rest queue.",
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_SLOTS, "step": 1}),
    )
    step_ms = _number("Step time alone (ms)", "One decode step with one request.", 0.1, 10_000, "any")
    growth = _number("Step growth per extra request", "0.06 = each extra request adds 6%.", 0, 1, 0.01)
    max_tokens = forms.IntegerField(
        label="Max tokens",
        help_text="Replies are 60 to 200 tokens, cut here.",
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_MAX_TOKENS, "step": 1}),
    )
    slo_ms = _number("TTFT p95 target, SLO (ms)", "Capacity: the highest C that meets it.", 1, 600_000, "any")
    request_overhead_ms = _number(
        "Overhead per request (ms)", "Time outside the server: HTTP.", 0, 1000, "any"
    )
    token_overhead_ms = _number("Overhead per token (ms)", "Parsing each streamed chunk.", 0, 1000, "any")
    prefill_tok_s = _number("Prefill speed (tok/s)", "How fast the prompt is read.", 1, 10_000_000, "any")

    @classmethod
    def defaults(cls) -> dict[str, str]:
        return flat_text(DEFAULTS)

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        try:
            params = SweepParams.from_flat(data)
            check_web_limits(params)
        except ParamError as error:
            field = error.param if error.param in self.fields else None
            self.add_error(field, error.message)
            return data
        self.params = params
        return data
