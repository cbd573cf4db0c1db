"""Models: a config.json read into a shape (``model_shapes``), the published models' presets,
the precisions their weights are stored and run at, and a model as calculator parameters
(``model_params``). Imports only ``core``.
"""
