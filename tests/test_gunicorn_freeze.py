"""config/gunicorn.conf.py's pre_fork: what the arbiter holds is frozen out of the garbage
collector's reach before a worker is forked (bench/bench_gc_pauses.py)."""

import gc
import runpy
from pathlib import Path

GUNICORN_CONF = Path(__file__).resolve().parent.parent / "config" / "gunicorn.conf.py"


def test_the_arbiters_objects_are_frozen_before_each_fork():
    hooks = runpy.run_path(str(GUNICORN_CONF))
    gc.unfreeze()
    try:
        hooks["pre_fork"](server=None, worker=None)

        assert gc.get_freeze_count() > 10_000  # the modules and objects this process holds
        assert len(gc.get_objects(generation=2)) < gc.get_freeze_count() / 10  # none left to walk
    finally:
        gc.unfreeze()
