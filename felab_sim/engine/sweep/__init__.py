"""Lesson 03's practice server and its sweep: the server's rules and the sweep's settings
(``sweep_params``), the prompts, the server's prefix cache, the simulator and its metrics, the
load generator that measures real servers (``loadgen``) and lesson 06's prefix-cache run through
it (``prefix_cache_run``), the limits on what the web may ask (``limits``), and the course's
published runs (``course_run``, ``measurements``). Imports only ``core``, ``models`` and
``hardware``.
"""
