"""felab_sim's engine: everything that computes, in plain Python with no Django.

The sweep (its parameters, prompts, the practice server's prefix cache, the simulator and its
metrics), the calculators (one module each in ``calculators/``), the limits on what the web may
ask, and the load generator that measures real servers. It imports nothing else of felab_sim
(docs/architecture.md, "The engine boundary").
"""
