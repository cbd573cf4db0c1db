"""A model's shape as calculator parameters: a preset, a pasted config.json, or typed-in sizes.

The calculators that size a KV cache declare these parameters and read the shape through
:func:`shape_of`, so a preset, the same config pasted by a student and the sizes typed in go
through one code path (felab_sim/engine/model_shapes.py). Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from .model_presets import BY_NAME
from .model_shapes import FULL, ModelConfigError, ModelShape, kv_heads_per_gpu, read_config
from .params import Param, ParamError, ParamValue

TYPED = "typed"
MODEL = Param(
    "model",
    "choice",
    TYPED,
    "A published model's shape (its config.json); a pasted config below wins over it.",
    choices={TYPED: "the sizes typed in below", **{name: name for name in BY_NAME}},
)
# Long enough for any published config.json felab reads (DeepSeek-V3's is about 1,700 characters
# pretty-printed), short enough that a page's address holding it stays within what servers take.
CONFIG_CHARS = 12_000
MODEL_CONFIG = Param(
    "model_config",
    "text",
    None,
    "A Hugging Face config.json pasted whole; it sets the layers, heads and attention kinds.",
    label="config.json",
    optional=True,
    max_chars=CONFIG_CHARS,
)
TENSOR_PARALLEL = Param(
    "tensor_parallel",
    "int",
    1,
    "GPUs one copy of the model is split across; each keeps KV heads ÷ GPUs (at least one).",
    "GPUs",
    label="tensor parallel",
    low=1,
    high=1024,
)


@lru_cache(maxsize=64)
def _read(config_text: str) -> ModelShape:
    # A chart computes one page's settings dozens of times: the config is read once.
    return read_config(config_text)


def typed_shape(layers: int, kv_heads: int, head_dim: int) -> ModelShape:
    """A model that attends fully on every layer, sized by hand (only its KV fields are real)."""
    return ModelShape(
        family="typed in",
        layers=layers,
        hidden_size=kv_heads * head_dim,
        attention_heads=kv_heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=0,
        vocab_size=0,
        tied_embeddings=True,
        layer_attention=(FULL,) * layers,
    )


def shape_of(p: Mapping[str, ParamValue]) -> ModelShape:
    """The shape the settings name: a pasted config, else a preset, else the typed-in sizes.

    ``ParamError`` naming ``model_config`` when the config cannot be read, with the field at
    fault first in the message ("num_key_value_heads: missing").
    """
    config = p["model_config"]
    if config:
        try:
            return _read(str(config))
        except ModelConfigError as error:
            raise ParamError(MODEL_CONFIG.name, f"model_config cannot be read: {error}") from None
    if p["model"] != TYPED:
        return BY_NAME[str(p["model"])].shape
    return typed_shape(int(p["layers"]), int(p["kv_heads"]), int(p["head_dim"]))


def check_tensor_parallel(shape: ModelShape, tensor_parallel: int) -> None:
    """Refuses a split vLLM refuses: KV heads that do not divide evenly across the GPUs."""
    if shape.mla is not None:
        return  # every GPU keeps the whole latent; any split is fine
    try:
        kv_heads_per_gpu(shape, tensor_parallel)
    except ValueError as error:
        raise ParamError(TENSOR_PARALLEL.name, f"tensor_parallel: {error}") from None


def model_name(p: Mapping[str, ParamValue]) -> str:
    """What the settings' shape is, in words: the config's family, the preset, or "typed in"."""
    if p["model_config"]:
        return f"pasted config.json ({shape_of(p).family})"
    return "typed-in sizes" if p["model"] == TYPED else str(p["model"])
