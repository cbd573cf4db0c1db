"""/readyz: each dependency's state for load balancers; /healthz stays a plain liveness check."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from tests.limits import forget_redis_outages, own_redis, point_the_site_at


@pytest.mark.django_db
def test_ready_reports_database_cache_and_queue(client):
    response = client.get("/readyz")
    assert response.status_code == 200 and response["Cache-Control"].startswith("max-age=0")
    body = response.json()
    assert body["status"] == "ready"
    assert {name: check["ok"] for name, check in body["checks"].items()} == {
        "database": True,
        "cache": True,
        "queue": True,
        "mail": True,
    }
    assert body["checks"]["mail"]["last_send"] is None  # none sent yet
    assert body["checks"]["queue"]["waiting"] == 0 and body["checks"]["cache"]["backend"] == "LocMemCache"


@pytest.mark.django_db
def test_without_redis_the_host_stays_in_service_and_says_what_is_down(
    client, settings, tmp_path, monkeypatch
):
    forget_redis_outages(monkeypatch)
    with own_redis() as server:
        point_the_site_at(settings, server.url)
        assert client.get("/readyz").json()["checks"]["cache"] == {
            "ok": True,
            "backend": "redis",
            "ms": pytest.approx(0, abs=1000),
        }
        server.kill()
        response = client.get("/readyz")
    # Every host shares Redis: taking hosts out for it would take the site down, while it
    # carries on from the database.
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded" and body["checks"]["database"]["ok"] is True
    cache = body["checks"]["cache"]
    assert cache["ok"] is False and "ConnectionError" in cache["error"]
    assert client.get("/healthz").content == b"ok"


@pytest.mark.django_db
def test_a_queue_no_worker_takes_from_is_reported(client):
    long_ago = timezone.now() - timedelta(minutes=11)
    task = DBTaskResult.objects.create(
        args_kwargs={"args": [], "kwargs": {}},
        task_path="felab_sim.runs.measure_run",
        backend_name="default",
        run_after=long_ago,
        exception_class_path="",
        traceback="",
    )
    DBTaskResult.objects.filter(pk=task.pk).update(enqueued_at=long_ago)
    response = client.get("/readyz")
    queue = response.json()["checks"]["queue"]
    assert response.status_code == 200 and response.json()["status"] == "degraded"
    assert queue["ok"] is False and queue["waiting"] == 1 and queue["oldest_wait_s"] >= 660
    assert "worker" in queue["error"]


@pytest.mark.django_db(transaction=True)
def test_a_host_that_cannot_reach_its_database_is_not_ready(client, monkeypatch):
    connection.close()
    # A database the host cannot open: a file in a folder that does not exist, or on
    # PostgreSQL a database that does not exist.
    monkeypatch.setitem(connection.settings_dict, "NAME", "/nonexistent-felab-folder/felab")
    try:
        response = client.get("/readyz")
    finally:
        connection.close()
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "not ready" and body["checks"]["database"]["ok"] is False
    assert client.get("/healthz").status_code == 200
