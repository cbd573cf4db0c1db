"""FELAB_ONE_HOST: the only app host keeps sessions in its file cache, and a log out still
reaches every one of its workers (docs/deploy.md)."""

from pathlib import Path

import httpx

from tests.support.site import running_site, scratch_database

PASSWORD = "a-long-enough-passphrase-42"


def signed_in(client: httpx.Client) -> bool:
    return "Log out" in client.get("/progress/", follow_redirects=True).text


def test_a_log_out_on_the_one_host_signs_the_session_out_on_each_of_its_workers():
    extra = {"REDIS_URL": "", "FELAB_ONE_HOST": "1"}
    with running_site(scratch_database("sqlite"), workers=3, extra_env=extra) as site:
        student = httpx.Client(base_url=site.url, timeout=30)
        student.get("/accounts/signup/")
        signed_up = student.post(
            "/accounts/signup/",
            data={"username": "jordan", "password1": PASSWORD, "password2": PASSWORD},
            headers={"X-CSRFToken": student.cookies["csrftoken"]},
        )
        assert signed_up.status_code == 302
        # A second browser holding the same cookie, whose pages land on any of the workers.
        other = httpx.Client(base_url=site.url, timeout=30, cookies=student.cookies)
        assert all(signed_in(other) for _ in range(9))
        sessions = Path(site.env["FELAB_CACHE_DIR"]) / "sessions"
        assert any(sessions.glob("*.djcache")), "the session was read from the database, not the file cache"

        logged_out = student.post("/accounts/logout/", headers={"X-CSRFToken": student.cookies["csrftoken"]})
        assert logged_out.status_code == 302
        assert not any(signed_in(other) for _ in range(9))
