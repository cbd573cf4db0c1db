"""The run queue that /sim/ shows every visitor, and its "Run it for real" section.

Runs start and end between content changes, so /sim/ keeps what it shows of the queue only while
no run is written (pagecache.content_cache.kept with felab_sim.models.RUNS), and reads it again
after each write. ``{% real_sweep_runs %}`` is the section's per-visitor part in one tag, as the
header's visitor_nav is: the queue and the measured runs kept while the runs hold, and between
them the visitor's own part, a Log in link or the Start form with this page's CSRF token.
"""

from dataclasses import dataclass
from typing import Any

from django import template
from django.db.models import Q
from django.template.loader import get_template
from django.utils.safestring import SafeString

from pagecache.templatetags.content_fragments import kept_part
from serving.templatetags.fixed_urls import fixed_url

from ..models import RUNS, Run
from ..pages.forms import RealSweepForm

register = template.Library()


@dataclass(frozen=True)
class RunQueue:
    running: Run | None
    waiting: int
    recent: list[Run]  # the last sweeps measured


RECENT_RUNS = 5


def _queue_rows():
    # The runs waiting or measuring, and the last sweeps measured, in one query.
    recent = Run.objects.sweeps().finished().order_by("-queued_at", "-pk").values("pk")[:RECENT_RUNS]
    return Run.objects.filter(Q(state__in=[Run.State.QUEUED, Run.State.RUNNING]) | Q(pk__in=recent)).order_by(
        "-queued_at", "-pk"
    )


@register.simple_tag
def run_queue() -> RunQueue:
    """One query: the runs waiting or measuring, and the last sweeps measured (newest first)."""
    rows = list(_queue_rows())
    running = next((run for run in rows if run.state == Run.State.RUNNING), None)
    waiting = sum(1 for run in rows if run.state == Run.State.QUEUED)
    recent = [run for run in rows if run.state == Run.State.DONE and run.kind == Run.Kind.SWEEP]
    return RunQueue(running, waiting, recent[:RECENT_RUNS])


def _queue_parts(query: str, overlay_pk: Any) -> tuple[str, str]:
    """The queue's status and the measured runs' list, from one read of the queue."""
    queue = run_queue()
    status = get_template("felab_sim/run_status.html").render({"queue": queue})
    runs = get_template("felab_sim/run_list.html").render(
        {"queue": queue, "query": query, "overlay_pk": overlay_pk}
    )
    return status, runs


def _log_in_link() -> str:
    return f'<p><a href="{fixed_url("login")}?next={fixed_url("sim")}">Log in</a> to run a real sweep.</p>'


@register.simple_tag(takes_context=True)
def real_sweep_runs(context: template.Context) -> SafeString:
    """/sim/'s queue, the visitor's Start form (or a Log in link), and the measured runs."""
    query, overlay_pk = context.get("query", ""), context.get("overlay_pk")
    status, runs = kept_part(
        context, ("run-queue", query, overlay_pk), lambda: _queue_parts(query, overlay_pk), RUNS
    )
    if context["user"].is_authenticated:
        visitors = get_template("felab_sim/run_form.html").render(
            {
                "run_form": RealSweepForm(),
                "csrf_token": context["csrf_token"],
                "request": context.get("request"),
            }
        )
    else:
        visitors = kept_part(context, ("run-log-in",), _log_in_link)
    return SafeString(status + visitors + runs)
