"""The practice server paced by the continuous-batching engine (``practice_server --engine continuous``).

The fixed-slot practice server (sweep_params.ServerParams) holds 8 slots and a step that grows
6% a user, so lesson 03's curve stops rising at 8. This pacing gives the real asyncio server the
engine's timing instead: up to ``max_num_seqs`` requests run at once (vLLM's setting), a prompt
is prefilled in chunks of ``max_num_batched_tokens`` at the engine's cost of those tokens, and
each decode step lasts what step_time.StepPricer says a step of every running sequence costs,
each reading its KV for its context: the fitted efficiencies and overhead of the GPU
(felab_sim/engine/serving/step_time.py). The curve then keeps rising until the step grows.

What it leaves out of the engine (the simulator has them, this server paces live requests
one at a time): a prompt's prefill is priced alone rather than batched into the running
decodes' step, and the KV pool is not enforced (lesson 03's requests are far smaller than it).
Pure Python, no Django: the practice server imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.params import ParamError, ParamValue
from ..hardware.hardware import hardware_preset
from ..models.model_presets import BY_NAME as MODEL_PRESETS
from .simulate import EngineSettings
from .step_time import StepLoad, StepPricer, calibration_for, model_cost

CONTINUOUS = "continuous"


@dataclass(frozen=True)
class EnginePacing:
    """The practice server's timing from the engine: the interface of ServerParams
    (``slots``, ``decode_step_ms``, ``prefill_ms``, ``as_flat``)."""

    model: str = "Llama-3.1-8B"
    hardware: str = "rtx-4090"
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 2048
    _pricer: StepPricer = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.model not in MODEL_PRESETS:
            names = ", ".join(MODEL_PRESETS)
            raise ParamError("model", f"model must be one of {names} (got {self.model!r})")
        try:
            gpu = hardware_preset(self.hardware)
        except KeyError as error:
            raise ParamError("hardware", f"hardware: {error.args[0]}") from None
        if gpu.bf16_flops is None:
            raise ParamError("hardware", f"hardware: {gpu.vendor_name} has no published dense BF16 peak")
        for name, value, high in (
            ("max_num_seqs", self.max_num_seqs, 4096),
            ("max_num_batched_tokens", self.max_num_batched_tokens, 1_048_576),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ParamError(name, f"{name} must be an integer from 1 to {high:,} (got {value!r})")
        settings = EngineSettings(
            max_num_seqs=self.max_num_seqs, max_num_batched_tokens=self.max_num_batched_tokens
        )
        shape = MODEL_PRESETS[self.model].shape
        cost = model_cost(shape, settings.bytes_per_param, settings.kv_bytes_per_value, settings.parallel)
        pricer = StepPricer(cost, gpu, calibration_for(gpu), settings.parallel)
        object.__setattr__(self, "_pricer", pricer)

    @property
    def slots(self) -> int:
        """Requests that run at once: the rest queue, first come first served, as in vLLM."""
        return self.max_num_seqs

    def _step_ms(self, load: StepLoad) -> float:
        return 1000.0 * self._pricer.step_seconds(load, load.tokens)

    def decode_step_ms(self, active: int, kv_tokens: int = 0) -> float:
        """One decode step of ``active`` running sequences whose contexts total ``kv_tokens``:
        one token each, every sequence reading its own KV."""
        active = max(1, active)
        pairs = float(kv_tokens)  # one query token a sequence, attending its whole context
        return self._step_ms(StepLoad(active, active, kv_tokens, kv_tokens, pairs, pairs, pairs))

    def prefill_ms(self, uncached_tokens: int) -> float:
        """Reading a prompt's uncached tokens in chunks of the step budget, each chunk attending
        to the prompt before it; the last chunk samples the first token."""
        total, done = 0.0, 0
        left = max(1, uncached_tokens)
        while left > 0:
            chunk = min(left, self.max_num_batched_tokens)
            pairs = chunk * (done + (chunk + 1) / 2)
            sampled = 1 if chunk == left else 0
            total += self._step_ms(StepLoad(chunk, sampled, done + chunk, done + chunk, pairs, pairs))
            done += chunk
            left -= chunk
        return total

    def as_flat(self) -> dict[str, ParamValue]:
        """The server's rules as /health reports them."""
        return {
            "engine": CONTINUOUS,
            "model": self.model,
            "hardware": self.hardware,
            "max_num_seqs": self.max_num_seqs,
            "max_num_batched_tokens": self.max_num_batched_tokens,
        }
