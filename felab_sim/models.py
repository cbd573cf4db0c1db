from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from .live import cached_sweep
from .model import ParamError, SweepParams, SweepResult, check_web_limits

DEFAULTS = SweepParams()


class Scenario(models.Model):
    """A named parameter set of the practice server's model, which cards can cite."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    levels = models.CharField(
        max_length=200,
        default=",".join(str(level) for level in DEFAULTS.levels),
        help_text="Concurrency levels, comma-separated, e.g. 1,2,4,8,16,32 (1 to 12 levels, each 1 to 1024).",
    )
    slots = models.PositiveIntegerField(default=DEFAULTS.server.slots, help_text="Requests served at once.")
    step_ms = models.FloatField(
        "step (ms)", default=DEFAULTS.server.step_ms, help_text="One decode step alone."
    )
    growth = models.FloatField(
        default=DEFAULTS.server.growth, help_text="Step growth per extra active request."
    )
    prefill_tok_s = models.FloatField("prefill (tok/s)", default=DEFAULTS.server.prefill_tok_s)
    max_tokens = models.PositiveIntegerField(default=DEFAULTS.max_tokens)
    slo_ms = models.FloatField("SLO (ms)", default=DEFAULTS.slo_ms, help_text="TTFT p95 target for capacity.")
    request_overhead_ms = models.FloatField(default=DEFAULTS.request_overhead_ms)
    token_overhead_ms = models.FloatField(default=DEFAULTS.token_overhead_ms)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            check_web_limits(self.sweep_params())
        except ParamError as error:
            field = error.param if error.param in SweepParams.FLAT_KEYS else None
            raise ValidationError({field: error.message} if field else error.message) from error

    def natural_key(self) -> tuple[str]:
        return (self.slug,)

    def sweep_params(self) -> SweepParams:
        return SweepParams.from_flat({key: getattr(self, key) for key in SweepParams.FLAT_KEYS})

    def result(self) -> SweepResult:
        return cached_sweep(self.sweep_params())
