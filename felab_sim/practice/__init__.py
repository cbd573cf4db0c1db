"""Lesson 03's practice server: an OpenAI-compatible streaming server timed by the simulator's rules.

Free of Django, so the server, its tests and the benchmark import it without settings.
"""

from .app import PracticeApp
from .slots import Slots
from .wire import MAX_BODY_BYTES, MODEL_ID

__all__ = ["MAX_BODY_BYTES", "MODEL_ID", "PracticeApp", "Slots"]
