"""Settings the engine's tests run at: the RTX 4090 run LLMServingSim measured (Llama-3.1-8B at
BF16) with 100 requests of 512 + 256 tokens, which outgrow its 41,008-token KV pool. The pages'
own defaults are the serving scenario (felab_sim/engine/serving/serving_defaults.py); these are named
so that a test about the 4090 says so."""

from urllib.parse import urlencode

ON_A_4090 = {
    "model": "Llama-3.1-8B",
    "hardware": "rtx-4090",
    "precision": "bf16",
    "input_tokens": "512",
    "output_tokens": "256",
}
# The same as the engine command's flags.
ON_A_4090_FLAGS = tuple(
    word for name, value in ON_A_4090.items() for word in (f"--{name.replace('_', '-')}", value)
)
# The same as a page's query string.
ON_A_4090_QUERY = urlencode(ON_A_4090)
