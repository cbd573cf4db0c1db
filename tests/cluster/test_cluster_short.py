"""The cluster proof in short (bench/bench_cluster.py has the long one): nginx in front of two
gunicorn hosts, a task worker, PostgreSQL and Redis, all on this machine."""

import pytest

from tests.support.cluster import practice_server, running_cluster
from tests.support.cluster_checks import (
    load_with_a_host_killed,
    slow_clients,
    sweep_outlives_its_host,
    wrong_passwords,
)


@pytest.fixture(scope="module")
def cluster():
    with (
        practice_server(step_ms=2.0) as practice_url,
        running_cluster(
            workers_per_host=2, database_name="felab_cluster_test", practice_url=practice_url
        ) as running,
    ):
        yield running


def test_wrong_passwords_from_one_address_pass_the_limit_once_across_both_hosts(cluster):
    # Without Redis each host counted its own (file cache: 20 through two hosts); behind the
    # proxy without trusted X-Forwarded-For every client shared nginx's address.
    row = wrong_passwords(cluster, attempts=120)
    assert (row.passed, row.refused) == (10, 110)
    assert row.other_address_passed


def test_slow_header_clients_do_not_hold_the_app_workers(cluster):
    # Straight to gunicorn, 10 such clients held all its sync workers: /healthz stayed down.
    row = slow_clients(cluster.url, "nginx", connections=30, hold_s=4.0)
    assert row.probes > 0 and row.failed == 0


def test_a_sweep_keeps_running_when_the_host_that_accepted_it_dies(cluster):
    row = sweep_outlives_its_host(cluster, levels="1", max_tokens=16, accepting_host=0)
    assert row.final_state == "done" and row.levels_done == "12/12"
    cluster.hosts[0].start()


def test_nothing_acknowledged_is_lost_when_a_host_dies_mid_load(cluster):
    row = load_with_a_host_killed(cluster, students=10, ratings=4, victim=1)
    assert row.acknowledged > 0 and row.stored >= row.acknowledged
    assert (row.lost, row.duplicated, row.server_errors) == (0, 0, 0)
