"""Browser tests share one Chromium per test process while they follow one another
(tests/browser/conftest.py). A test elsewhere that runs next in the same process must meet it
closed: Playwright's open event loop would refuse that test's asyncio.run()."""

import os
import subprocess

import pytest

from tests.support.site import PY, ROOT

pytestmark = pytest.mark.browser

BROWSER_TEST = (
    "tests/browser/test_tap_targets_browser.py::test_the_sign_up_checkbox_is_a_44_px_target_on_a_phone"
)
ASYNCIO_TESTS = "tests/practice/test_slots.py"  # five tests, each calling asyncio.run()


def test_a_test_that_runs_asyncio_after_a_browser_test_in_the_same_process_passes(tmp_path):
    # One plain pytest process with a database of its own: not this run's workers, options or
    # database (on PostgreSQL, a test database of the same name as another lane's).
    env = {
        name: value for name, value in os.environ.items() if not name.startswith(("PYTEST_", "DATABASE_URL"))
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    result = subprocess.run(
        [PY, "-m", "pytest", "-p", "no:cacheprovider", "-q", BROWSER_TEST, ASYNCIO_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "6 passed" in result.stdout
