"""Browser tests share one Chromium per test process while they follow one another
(tests/browser/conftest.py). A test elsewhere that runs next in the same process must meet it
closed: Playwright's open event loop would refuse that test's asyncio.run()."""

import subprocess

from tests.support.site import PY, ROOT


def test_a_test_that_runs_asyncio_after_a_browser_test_in_the_same_process_passes():
    result = subprocess.run(
        [
            PY,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "tests/browser/test_tap_targets_browser.py::test_the_sign_up_checkbox_is_a_44_px_target_on_a_phone",
            "tests/practice/test_slots.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "passed" in result.stdout and "failed" not in result.stdout
