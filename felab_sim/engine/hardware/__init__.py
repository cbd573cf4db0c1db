"""GPUs and what a step costs on them: the hardware presets and prices, a model's cost on one GPU
(``model_cost``), a step's load (``step_load``) and the step's price from its FLOPs and bytes
(``step_cost``), the calibration measured on real GPUs (``calibration``, the files in
``../measured/``), a decode step timed (``decode_step``), what a chosen model's step reads
(``model_reads``) and the settings the ceiling calculators share (``decode_params``). Imports only
``core`` and ``models``.
"""
