"""felab_sim's second engine: continuous batching over a paged KV cache, as vLLM V1 schedules.

``kv_pool`` sizes the cache from memory, ``step_time`` prices one step on the hardware,
``scheduler`` decides each step's batch, and ``simulate`` runs a trace through them and sums it
up (docs/benchmarks.md, "Predicted from measurements", has where its numbers come from, how
far they predict the measured runs and what the model leaves out). Standard library only, besides felab_sim.engine's model shapes and hardware
presets.
"""
