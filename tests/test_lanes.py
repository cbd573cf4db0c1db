"""Lanes come from what a test starts, so that tests added anywhere get theirs unmarked."""

import subprocess
import sys

from tests.support.lanes import _code_starts_a_process


def _runs_python():
    return subprocess.run([sys.executable, "-c", "pass"], check=True)


def _calls_a_helper_that_runs_python():
    return _runs_python()


def _pure():
    return sum(range(3))


def test_code_that_starts_a_process_directly_or_through_a_helper_is_seen():
    assert _code_starts_a_process(_runs_python)
    assert _code_starts_a_process(_calls_a_helper_that_runs_python)
    assert not _code_starts_a_process(_pure)


def test_fixtures_that_start_servers_put_their_tests_in_the_process_lane(pytestconfig):
    from tests.practice.conftest import server
    from tests.sim.conftest import practice_server

    for fixture in (server, practice_server):
        assert _code_starts_a_process(getattr(fixture, "__wrapped__", fixture)), fixture


def test_a_test_that_starts_nothing_is_in_no_lane(request):
    assert not {mark.name for mark in request.node.iter_markers()} & {"browser", "process", "cluster"}


def test_a_helper_imported_from_another_test_module_is_seen():
    # tests/test_redis_outage.py starts its own redis-server through tests/limits.py's own_redis.
    from tests import test_redis_outage

    test = test_redis_outage.test_a_log_out_while_redis_is_unreachable_stays_a_log_out_when_it_answers_again
    assert _code_starts_a_process(test)
