"""The continuous-batching engine, as vLLM V1 schedules: the KV pool sized from memory
(``kv_pool``), a step priced on the hardware (``step_time``), each step's batch (``scheduler``), a
trace run through them (``simulate``), the servers' own costs (``servers``), the planner's curve
(``planner``), and the measured runs it is judged against (``anchors``, ``serving_runs``,
``serving_validation``, ``validation``; docs/benchmarks.md, "Predicted from measurements").
Imports only ``core``, ``models`` and ``hardware``.
"""
