from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.urls import reverse
from django.utils import timezone

from pagecache.content_cache import ContentQuerySet, SharedToken, TokenQuerySet

from .engine.calculators import CALCULATORS
from .engine.core.calculator import Calculator, Result
from .engine.core.params import MAX_TEXT, Param, ParamError, ParamValue
from .engine.sweep.limits import check_web_limits
from .engine.sweep.prefix_cache_run import PREFIX_ORDERS, PrefixCacheSetup
from .engine.sweep.sweep_params import SWEEP_PARAMS, SweepParams
from .live import cached_calculation, cached_sweep


def sweep_column(param: Param) -> models.Field:
    """The Scenario column for one declared sweep parameter: its label, default and help come
    from the declaration, so changing one there is a migration ``makemigrations --check`` asks
    for. The range is left to ``Scenario.clean`` (SweepParams checks it, with the one message)."""
    described = {"verbose_name": param.label, "default": param.default, "help_text": param.help}
    if param.kind == "text":
        return models.CharField(max_length=MAX_TEXT, **described)
    if param.kind == "int":
        never_negative = param.low is not None and param.low >= 0
        return (
            models.PositiveIntegerField(**described) if never_negative else models.IntegerField(**described)
        )
    if param.kind == "float":
        return models.FloatField(**described)
    raise TypeError(f"{param.name}: no Scenario column for a {param.kind} parameter")


def _sweep_columns() -> type[models.Model]:
    """An abstract model with one column per declared sweep parameter (SWEEP_PARAMS)."""
    attrs: dict[str, object] = {
        "__module__": __name__,
        "Meta": type("Meta", (), {"abstract": True}),
        **{param.name: sweep_column(param) for param in SWEEP_PARAMS},
    }
    return type("SweepColumns", (models.Model,), attrs)


SweepColumns = _sweep_columns()


class Scenario(SweepColumns):
    """A named parameter set of the practice server's model, which cards can cite.

    Its sweep columns are generated from SWEEP_PARAMS (SweepColumns); only the naming is here.
    """

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)

    objects = ContentQuerySet.as_manager()

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


class ParameterSetQuerySet(ContentQuerySet["ParameterSet"]):
    def calculators_by_slug(self, slugs: Iterable[str]) -> dict[str, str]:
        """Each named set's calculator, in one query (how citations are checked)."""
        return dict(self.filter(slug__in=set(slugs)).values_list("slug", "calculator"))

    def results_by_slug(self, slugs: Iterable[str]) -> dict[str, Result | None]:
        """Each named set's computed result, in one query whatever the number of citations."""
        return {
            parameter_set.slug: parameter_set.result() for parameter_set in self.filter(slug__in=set(slugs))
        }


class ParameterSet(models.Model):
    """A named set of one calculator's parameters, which cards cite as {{calc.SLUG.OUTPUT}}.

    ``params`` holds only the values that differ from the calculator's defaults, so a default
    improved later reaches every set that did not choose its own. See docs/architecture.md.
    """

    slug = models.SlugField(
        max_length=60, unique=True, help_text="Start with the lesson, e.g. l04-m4-max-llama8b-q4km."
    )
    # Checked in clean() against the registry, not as field choices: adding a calculator
    # needs no migration.
    calculator = models.CharField(max_length=40, help_text="The calculator's name, e.g. decode-ceiling.")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    params = models.JSONField(
        default=dict, blank=True, help_text="Only the parameters that differ from the calculator's defaults."
    )

    objects = ParameterSetQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return f"{self.name} ({self.calculator})"

    def natural_key(self) -> tuple[str]:
        return (self.slug,)

    def clean(self) -> None:
        calculator = CALCULATORS.get(self.calculator)
        if calculator is None:
            raise ValidationError({"calculator": f"'{self.calculator}' is not a calculator"})
        if not isinstance(self.params, dict):
            raise ValidationError({"params": "the parameters must be a mapping of names to values"})
        try:
            values = calculator.validate(self.params)
        except ParamError as error:
            raise ValidationError({"params": error.message}) from error
        changed = calculator.changed(values)
        if same := [name for name in self.params if name not in changed]:
            # Stored sets keep only changes, so a default written out would vanish on export.
            raise ValidationError({"params": f"{same[0]} is the calculator's default; leave it out"})
        self.params = changed

    def values(self) -> dict[str, ParamValue]:
        """Every parameter, defaults filled in (raises ParamError if the stored ones are bad)."""
        return CALCULATORS[self.calculator].validate(self.params)

    def result(self) -> Result | None:
        """The calculator's outputs for this set; None if the set no longer validates."""
        try:
            return cached_calculation(self.calculator, tuple(sorted(self.params.items())))
        except (KeyError, ParamError, TypeError, AttributeError):
            return None

    def params_for_file(self) -> dict[str, ParamValue]:
        """The stored values in the calculator's declaration order (a database may reorder JSON
        keys), whole numbers without ".0", so export writes what a person would."""
        calculator = CALCULATORS.get(self.calculator)
        order = [param.name for param in calculator.params] if calculator else []
        names = sorted(self.params, key=lambda name: order.index(name) if name in order else len(order))
        return {name: _plain(self.params[name]) for name in names}

    def query_string(self) -> str:
        """The set's changed parameters as a calculator page's query string."""
        params = self.params if isinstance(self.params, dict) else {}
        return urlencode({name: _query_text(value) for name, value in params.items()})

    def page_url(self) -> str:
        """The calculator's page with this set's settings filled in."""
        query = self.query_string()
        return reverse("calc_page", args=[self.calculator]) + (f"?{query}" if query else "")


def changed_query(calculator: Calculator, values: Mapping[str, ParamValue]) -> str:
    """A calculator page's query string for these values: only the ones that differ from the
    defaults, as a parameter set keeps them."""
    changed = calculator.changed(dict(values))
    return urlencode({name: _query_text(value) for name, value in changed.items()})


def calculator_page_url(result: Result) -> str:
    """The calculator's page at a result's settings, so the page computes that same result."""
    query = changed_query(CALCULATORS[result.calculator], result.params)
    return reverse("calc_page", args=[result.calculator]) + (f"?{query}" if query else "")


def _plain(value: ParamValue) -> ParamValue:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _query_text(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return "" if value is None else str(_plain(value))


# Redrawn on every write to a run (each save and delete by signal, felab_sim/apps.py; each bulk
# write by RunQuerySet), so /sim/'s run queue is kept while it holds (templatetags/run_queue.py).
RUNS = SharedToken("runs")


class RunQuerySet(TokenQuerySet["Run"]):
    token = RUNS

    def running(self) -> RunQuerySet:
        return self.filter(state=Run.State.RUNNING)

    def queued(self) -> RunQuerySet:
        return self.filter(state=Run.State.QUEUED)

    def active(self) -> RunQuerySet:
        return self.filter(state__in=[Run.State.QUEUED, Run.State.RUNNING])

    def finished(self) -> RunQuerySet:
        return self.filter(state=Run.State.DONE)

    def sweeps(self) -> RunQuerySet:
        return self.filter(kind=Run.Kind.SWEEP)

    def prefix_cache_runs(self) -> RunQuerySet:
        return self.filter(kind=Run.Kind.PREFIX_CACHE)

    def in_turn(self) -> list[Run]:
        """The queued runs in the order they will run: first come, first served, except that
        whoever had the last run goes after everyone already waiting (no one runs twice in a row
        while others wait)."""
        last = self.model.objects.exclude(state=Run.State.QUEUED).order_by("-started_at").first()
        last_user_id = last.started_by_id if last else None
        waiting = list(self.queued().select_related("started_by").order_by("queued_at", "pk"))
        return sorted(
            waiting, key=lambda run: run.started_by_id is not None and run.started_by_id == last_user_id
        )

    def next_in_turn(self) -> Run | None:
        turn = self.in_turn()
        return turn[0] if turn else None


class Run(models.Model):
    """A real run measured over HTTP against an OpenAI-compatible server, kept for plotting:
    lesson 03's concurrency sweep (its levels), or lesson 06's prefix-cache run (its orders).

    It waits for its turn, and its task (felab_sim.runs.measure_run) measures it then; one
    measures the practice server at a time for the whole site, whatever its kind (two runs
    measuring one server at once would each time the other's requests), and each user has at
    most one waiting or running. Both rules are constraints, so the database enforces them
    between any number of workers.
    """

    class Kind(models.TextChoices):
        SWEEP = "sweep", "sweep"
        PREFIX_CACHE = "prefix-cache", "prefix-cache run"

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.SWEEP)
    server_url = models.URLField(max_length=300)
    params = models.JSONField(
        help_text="A sweep's flat parameters, as in sweep.json; a prefix-cache run's "
        "prefix_chars, suffix_chars, requests and max_tokens (both orders use them)."
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    error = models.TextField(blank=True)
    capacity = models.PositiveIntegerField(null=True, blank=True)
    # A run is its starter's record, like their ratings: deleting the account deletes it.
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(
        default=timezone.now, help_text="When it took its turn on the practice server."
    )
    heartbeat_at = models.DateTimeField(default=timezone.now)
    worker = models.CharField(
        max_length=64, blank=True, help_text="The task worker process measuring it (felab_sim.processes)."
    )
    task_id = models.CharField(
        max_length=64,
        blank=True,
        help_text="Its task in django-tasks, the one that measures it when its turn comes.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-queued_at"]
        constraints = [
            # One run measures the practice server at a time, whichever worker process takes it.
            models.UniqueConstraint(
                fields=["state"], condition=models.Q(state="running"), name="one_run_measuring_at_a_time"
            ),
            # A user waits with one run at a time, so no one can fill the line.
            models.UniqueConstraint(
                fields=["started_by"],
                condition=models.Q(state__in=["queued", "running"]),
                name="one_active_run_per_user",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display().capitalize()} {self.pk} of {self.server_url} ({self.state})"

    def get_absolute_url(self) -> str:
        """A sweep's own page; a prefix-cache run is watched and drawn on its calculator's page,
        set to the run's settings so the model's curves are the ones it measured."""
        if self.is_prefix_cache:
            query = urlencode({**self.calculator_settings(), "run": self.pk})
            return f"{reverse('calc_page', args=['prefix-cache'])}?{query}#practice-run"
        return reverse("run", args=[self.pk])

    @property
    def is_prefix_cache(self) -> bool:
        return self.kind == self.Kind.PREFIX_CACHE

    @property
    def is_running(self) -> bool:
        return self.state == self.State.RUNNING

    @property
    def is_queued(self) -> bool:
        return self.state == self.State.QUEUED

    @property
    def is_active(self) -> bool:
        return self.state in (self.State.QUEUED, self.State.RUNNING)

    def expected_seconds(self) -> float:
        """How long the run should take against the practice server, by the model: a sweep's
        wall time, or a prefix-cache run's prefills and replies."""
        if self.is_prefix_cache:
            return sum(setup.expected_seconds() for setup in self.prefix_setups())
        return sum(level.wall_s for level in cached_sweep(self.sweep_params()).levels)

    def wait_estimate(self) -> tuple[int, float] | None:
        """For a queued run: its place in the queue (1 = next) and the seconds until it starts."""
        if not self.is_queued:
            return None
        ahead: list[Run] = []
        for run in Run.objects.in_turn():
            if run.pk == self.pk:
                break
            ahead.append(run)
        seconds = sum(run.expected_seconds() for run in ahead)
        running = Run.objects.running().first()
        if running is not None:
            elapsed = (timezone.now() - running.started_at).total_seconds()
            seconds += max(0.0, running.expected_seconds() - elapsed)
        return len(ahead) + 1, seconds

    def take_turn(self, worker: str) -> bool:
        """Start measuring, by ``worker``, if this run is next in turn and no run measures the
        practice server; whether it did. The database decides between two workers trying at once
        (one_run_measuring_at_a_time), so the check and the claim need no lock of their own."""
        next_run = Run.objects.next_in_turn()
        if next_run is None or next_run.pk != self.pk:
            return False
        now = timezone.now()
        try:
            with transaction.atomic():
                taken = (
                    Run.objects.queued()
                    .filter(pk=self.pk)
                    .update(state=self.State.RUNNING, started_at=now, heartbeat_at=now, worker=worker)
                )
        except IntegrityError:  # another run is measuring
            return False
        if taken:
            self.refresh_from_db()
        return bool(taken)

    def sweep_params(self) -> SweepParams:
        return SweepParams.from_flat(self.params)

    def prefix_setups(self) -> tuple[PrefixCacheSetup, ...]:
        """A prefix-cache run's two halves: the same settings, shared part first, then last."""
        return tuple(PrefixCacheSetup(**self.params, order=order) for order in PREFIX_ORDERS)

    def calculator_settings(self) -> dict[str, int]:
        """A prefix-cache run's settings that the prefix-cache calculator also has."""
        return {name: self.params[name] for name in ("prefix_chars", "suffix_chars")}

    def as_export(self) -> dict[str, Any]:
        """The run as its starter's data export has it (quiz.learners.Learner.export): what they
        asked for and what it measured. Which worker process and task measured it is the site's
        bookkeeping, not theirs."""
        return {
            "id": self.pk,
            "kind": self.kind,
            "server_url": self.server_url,
            "params": self.params,
            "state": self.state,
            "error": self.error,
            "capacity": self.capacity,
            "queued_at": self.queued_at.isoformat(),
            "started_at": self.started_at.isoformat() if not self.is_queued else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "levels": [{**level.as_dict(), "done": level.done} for level in self.levels.all()],
            "orders": [order.as_export() for order in self.orders.all()],
        }

    def measured_rows(self) -> list[dict[str, float]]:
        """The finished levels with the JSON level keys, for tables and charts."""
        return [level.as_dict() for level in self.levels.all() if level.is_finished]


class RunPart(models.Model):
    """A part of a run that sends a number of requests: how many, and how many have finished."""

    requests = models.PositiveIntegerField()
    done = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.requests) if self.requests else 0


class RunLevel(RunPart):
    """One concurrency level of a run: its progress while running, its metrics when done."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="levels")
    conc = models.PositiveIntegerField()
    agg_tok_s = models.FloatField(null=True, blank=True)
    user_tok_s = models.FloatField(null=True, blank=True)
    ttft_p50_ms = models.FloatField(null=True, blank=True)
    ttft_p95_ms = models.FloatField(null=True, blank=True)
    goodput_rps = models.FloatField(null=True, blank=True)

    METRICS = ("agg_tok_s", "user_tok_s", "ttft_p50_ms", "ttft_p95_ms", "goodput_rps")

    class Meta:
        ordering = ["run", "conc"]
        constraints = [models.UniqueConstraint(fields=["run", "conc"], name="one_row_per_level")]

    def __str__(self) -> str:
        return f"C = {self.conc}: {self.done}/{self.requests}"

    @property
    def is_finished(self) -> bool:
        return self.agg_tok_s is not None

    def as_dict(self) -> dict[str, float]:
        return {
            "conc": self.conc,
            "requests": self.requests,
            **{name: getattr(self, name) for name in self.METRICS},
        }


class PrefixCacheRunOrder(RunPart):
    """One order of a prefix-cache run (shared part first, or variable part first): its
    progress while running, and what it measured when done (felab_sim.engine.sweep.prefix_cache_run.PrefixCacheRun)."""

    ORDER_LABELS = {"shared-first": "shared part first", "variable-first": "variable part first"}

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="orders")
    order = models.CharField(max_length=20, choices=list(ORDER_LABELS.items()))
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(
        null=True, blank=True, help_text="On a repeat (the median), as the server reported it."
    )
    ttft_cold_ms = models.FloatField(null=True, blank=True, help_text="The first request's.")
    ttft_warm_ms = models.FloatField(null=True, blank=True, help_text="The median of the repeats'.")
    measured_requests = models.JSONField(
        default=list,
        blank=True,
        help_text="Each request in the order sent: ttft_ms, prompt_tokens, cached_tokens.",
    )

    class Meta:
        ordering = ["run", "order"]  # shared-first, then variable-first
        constraints = [models.UniqueConstraint(fields=["run", "order"], name="one_row_per_prefix_order")]

    def __str__(self) -> str:
        return f"{self.order}: {self.done}/{self.requests}"

    @property
    def label(self) -> str:
        return self.ORDER_LABELS.get(self.order, self.order)

    @property
    def is_finished(self) -> bool:
        return self.ttft_cold_ms is not None

    def as_export(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "requests": self.requests,
            "done": self.done,
            "outputs": self.outputs(),
            "measured_requests": self.measured_requests,
        }

    def outputs(self) -> dict[str, float | None]:
        """What it measured under the prefix-cache calculator's output keys (None: not reported)."""
        prompt, cached = self.prompt_tokens, self.cached_tokens
        counted = prompt is not None and cached is not None
        warm = self.ttft_warm_ms
        return {
            "prompt_tokens": prompt,
            "cached_tokens": cached,
            "uncached_tokens": prompt - cached if counted else None,
            "cached_pct": 100.0 * cached / prompt if counted and prompt else None,
            "ttft_cold_ms": self.ttft_cold_ms,
            "ttft_warm_ms": warm,
            "speedup": self.ttft_cold_ms / warm if self.ttft_cold_ms is not None and warm else None,
        }
