"""Models: a config.json read (``model_config``) into a shape (``model_shapes``), its weights' and
KV cache's bytes (``model_weights``, ``model_kv_cache``), the published models' presets, the
precisions their weights are stored and run at, and a model as calculator parameters
(``model_params``). Imports only ``core``.
"""
