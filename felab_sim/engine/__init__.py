"""felab_sim's engine: everything that computes, in plain Python with no Django.

Its packages, each importing only those on the lines above it (tests/sim/test_engine_layers.py):

    core                  parameters, numbers, chart data, the calculator's frame
    models                config.json shapes, model presets, precisions, a model as parameters
    hardware              GPUs, prices, calibration, the step cost
    serving, sweep        the continuous-batching engine; the practice server's sweep
    calculators           one module a calculator
    problems, course      practice problems; what the pages and cards draw from the calculators

It imports nothing else of felab_sim (docs/architecture.md, "The engine boundary").
"""
