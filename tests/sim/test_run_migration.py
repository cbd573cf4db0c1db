"""0011 renames SweepRun to Run and SweepRunLevel to RunLevel: the runs of both kinds, their
levels and orders, and the two rules on them come through as they were."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("felab_sim", "0010_sweep_runs_go_with_their_starter")]
RENAMED = [("felab_sim", "0011_sweeprun_is_run")]


def migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


@pytest.mark.django_db(transaction=True)
def test_runs_of_each_kind_keep_their_rows_through_the_rename():
    old = migrate(BEFORE).loader.project_state(BEFORE).apps
    SweepRun = old.get_model("felab_sim", "SweepRun")
    User = old.get_model("auth", "User")
    student = User.objects.create(username="early")
    sweep = SweepRun.objects.create(
        kind="sweep", server_url="http://127.0.0.1:8001/v1", params={"levels": [1, 8]}, state="done",
        capacity=8, started_by=student,
    )  # fmt: skip
    old.get_model("felab_sim", "SweepRunLevel").objects.create(
        run=sweep, conc=8, requests=24, done=24, agg_tok_s=275.1, ttft_p50_ms=31.5
    )
    prefix = SweepRun.objects.create(
        kind="prefix-cache", server_url="http://127.0.0.1:8001/v1", state="queued", started_by=student,
        params={"prefix_chars": 1300, "suffix_chars": 80, "requests": 3, "max_tokens": 48},
    )  # fmt: skip
    old.get_model("felab_sim", "PrefixCacheRunOrder").objects.create(
        run=prefix, order="shared-first", requests=3, done=2, measured_requests=[{"ttft_ms": 12.5}]
    )

    try:
        new = migrate(RENAMED).loader.project_state(RENAMED).apps
        Run = new.get_model("felab_sim", "Run")
        assert list(
            Run.objects.order_by("pk").values_list("pk", "kind", "state", "started_by__username")
        ) == [
            (sweep.pk, "sweep", "done", "early"),
            (prefix.pk, "prefix-cache", "queued", "early"),
        ]
        level = new.get_model("felab_sim", "RunLevel").objects.get()
        assert (level.run_id, level.conc, level.done, level.agg_tok_s) == (sweep.pk, 8, 24, 275.1)
        order = Run.objects.get(pk=prefix.pk).orders.get()
        assert (order.done, order.measured_requests) == (2, [{"ttft_ms": 12.5}])
        assert new.get_model("auth", "User").objects.get(username="early").runs.count() == 2
        # The student's queued run still keeps them from starting a second.
        with pytest.raises(IntegrityError), transaction.atomic():
            Run.objects.create(server_url="http://127.0.0.1:8001/v1", params={}, started_by_id=student.pk)
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
