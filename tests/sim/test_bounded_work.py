"""Every simulation a request drives stops itself after a fixed amount of work, counted inside its
loop, and every refusal is a 400 naming the setting to change; pasted configs and engine logs obey
the typed fields' bounds; the endpoints that compute have the simulator's rate limit and permit."""

import contextlib
import fcntl
import json
import math

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.core.params import Param, ParamError
from felab_sim.engine.course.chain_settings import PARAMS as CHAIN_PARAMS
from felab_sim.engine.serving.engine_params import (
    ENGINE_PARAMS,
    engine_inputs,
    parse_engine_values,
    run_engine,
    sweep_engine,
)
from felab_sim.engine.serving.simulate import SAMPLE_WORK_UNITS, WorkBudgetExceeded
from felab_sim.engine.sweep.limits import ENGINE_WEB_LIMITS, WEB_LIMITS
from felab_sim.engine.sweep.simulator import SweepTooBig, run_sweep
from felab_sim.engine.sweep.sweep_params import SWEEP_PARAMS, SweepParams
from tests.support.engine_runs import ON_A_4090

pytestmark = pytest.mark.django_db

LLAMA = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}


def config(**changes: object) -> str:
    return json.dumps({**LLAMA, **changes})


@pytest.fixture
def unlimited(settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "sweep": (0, 60)}  # the tests are no abuse


def refused(response) -> dict:
    assert response.status_code == 400, response.content[:300]
    return response.json()["error"]


# ----------------------------------------------------------------- the engine's loop stops itself


def test_a_slow_typed_in_gpu_is_refused_naming_its_bandwidth(client):
    error = refused(
        client.get(
            "/sim/engine.json",
            {"hardware": "custom", "bandwidth_gbs": "0.01", "memory_gb": "80", "peak_tflops": "1"},
        )
    )
    assert error["param"] == "bandwidth_gbs" and "simulated time" in error["message"]


def test_arrivals_days_apart_are_refused_naming_the_rate(client):
    for rate in ("1e-300", "0.001"):
        error = refused(client.get("/sim/engine.json", {**ON_A_4090, "rate": rate}))
        assert error["param"] == "rate" and "waiting for arrivals" in error["message"]


def test_the_engine_counts_its_timeseries_samples_against_the_budget():
    # Three steps of a 16 GB model at 1 GB/s: about 50 s of simulated time, 500 samples.
    values = parse_engine_values(
        {
            "hardware": "custom",
            "memory_gb": "80",
            "bandwidth_gbs": "1",
            "peak_tflops": "100",
            "requests": "1",
            "output_tokens": "2",
        }
    )
    inputs = engine_inputs(values)
    with pytest.raises(WorkBudgetExceeded) as caught:
        run_engine(inputs, sample_interval=0.1, work_budget=200)
    assert caught.value.cause == "time"
    result = run_engine(inputs, sample_interval=0.1)
    assert result.work + SAMPLE_WORK_UNITS * len(result.timeseries) > 200


PREEMPTED = {
    **ON_A_4090,
    "block_size": "1",
    "input_tokens": "12000",
    "output_tokens": "800",
    "requests": "3",
    "workload": "concurrency",
    "concurrency": "3",
    "hardware": "custom",
    "memory_gb": "23",
    "bandwidth_gbs": "1000",
    "peak_tflops": "100",
}


def test_a_preempted_request_looking_up_its_cached_prompt_each_step_is_counted():
    # Three 12,000-token prompts in one-token blocks fill the pool; one is preempted, and while it
    # waits every step looks its 12,000 cached blocks up again (9 s of CPU at 2,000 output tokens,
    # uncounted, within the steps' budget).
    values = parse_engine_values(PREEMPTED)
    inputs = engine_inputs(values)
    result = run_engine(inputs, sample_interval=0.1, work_budget=math.inf)
    assert result.preemptions >= 1
    steps_and_samples = result.work + SAMPLE_WORK_UNITS * len(result.timeseries)
    with pytest.raises(WorkBudgetExceeded):
        run_engine(inputs, sample_interval=0.1, work_budget=steps_and_samples + 1)
    refused(Client().get("/sim/engine.json", {**PREEMPTED, "output_tokens": "2000"}))


def test_the_continuous_batching_calculator_caps_its_sweep(client):
    for query in (
        "prompt_tokens=32768&trace=on&output_tokens=2000",
        "prompt_tokens=32768&trace=on&output_tokens=2000&max_num_seqs=1024",
    ):
        error = refused(client.get(f"/sim/calc/continuous-batching.json?{query}"))
        assert error["param"] == "output_tokens"
        assert f"{ENGINE_WEB_LIMITS.run_work:,.0f} units" in error["message"]


def test_the_sweep_counts_its_events_in_the_loop():
    params = SweepParams.from_flat({"levels": "1,8,32"})
    exact = WEB_LIMITS.events(params)  # each request's arrival, tokens and release
    assert run_sweep(params, max_events=exact).levels
    with pytest.raises(SweepTooBig) as caught:
        run_sweep(params, max_events=exact - 1)
    assert caught.value.param == "levels"


@pytest.mark.parametrize("name", ["gpt-oss-120b", "DeepSeek-V3"], ids=["gpt-oss-120b", "DeepSeek-V3"])
def test_a_model_the_gpu_cannot_hold_is_a_400_on_the_page_as_in_the_json(client, name):
    message = refused(client.get("/sim/calc/continuous-batching.json", {"model": name}))["message"]
    page = client.get("/sim/calc/continuous-batching/", {"model": name})
    assert page.status_code == 400
    assert message.split(": ", 1)[1][:60].replace("'", "&#x27;") in page.content.decode()


# ------------------------------------------------------------- pastes obey the typed fields' bounds


@pytest.mark.parametrize("layers", [10**7, 10**12, 10**1299], ids=["1e7", "1e12", "1300 digits"])
@pytest.mark.parametrize("url", ["/sim/calc/kv-cache.json", "/sim/calc/roofline.json", "/sim/chain.json"])
def test_a_pasted_configs_layers_obey_the_typed_fields_range(client, url, layers):
    error = refused(client.get(url, {"model_config": config(num_hidden_layers=layers)}))
    assert error["param"] == "model_config"
    assert "num_hidden_layers: must be at most 1,000" in error["message"]


def test_the_engine_holds_a_pasted_config_to_the_same_bounds(client):
    error = refused(
        client.get("/sim/engine.json", {"model": "config", "model_config": config(num_hidden_layers=10**7)})
    )
    assert error["param"] == "model_config" and "num_hidden_layers" in error["message"]
    page = client.get("/sim/engine/", {"model": "config", "model_config": config(kv_lora_rank=10**9)})
    assert page.status_code == 400 and "kv_lora_rank: must be at most 1,000,000" in page.content.decode()


@pytest.mark.parametrize(
    "text",
    [
        '{"model_type": "llama", "num_hidden_layers": ' + "9" * 5000 + "}",
        '{"model_type": "llama", "x": ' + "[" * 5000 + "]" * 5000 + "}",
    ],
    ids=["5000 digits", "nested 5000 deep"],
)
def test_a_config_json_cannot_read_is_a_400(client, text):
    error = refused(client.get("/sim/calc/kv-cache.json", {"model_config": text[:12_000]}))
    assert error["param"] == "model_config"


@pytest.mark.parametrize(
    "log",
    [
        "INFO GPU KV cache size: " + "9" * 3000 + " tokens",
        "max_total_num_tokens=" + "9" * 5000,
        "GPU KV cache size: 1,000 tokens\nAvailable KV cache memory: 1.2.3 GiB",
        "Maximum concurrency for 8,192 tokens per request: " + "9" * 400 + ".0x",
    ],
    ids=["3000-digit tokens", "5000-digit sglang", "1.2.3 GiB", "400-digit concurrency"],
)
def test_an_engine_logs_numbers_obey_the_typed_fields_range(client, log):
    error = refused(client.get("/sim/calc/kv-cache.json", {"engine_log": log}))
    assert error["param"] == "engine_log"


# --------------------------------------------------------- every endpoint that computes is limited


@pytest.mark.parametrize(
    "url",
    ["/sim/calc/prefill.json", "/sim/calc/prefill/", "/sim/chain.json", "/sim/chain/", "/sim/engine.json"],
)
def test_every_endpoint_that_computes_has_the_simulators_rate_limit(client, settings, url):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "sweep": (2, 60)}
    assert [client.get(url).status_code for _ in range(3)] == [200, 200, 429]


@pytest.mark.parametrize("url", ["/sim/calc/continuous-batching.json", "/sim/chain.json"])
def test_a_simulation_waits_for_one_of_the_hosts_permits(client, settings, tmp_path, url):
    settings.SIM_PERMITS, settings.SIM_PERMIT_WAIT_S, settings.SIM_PERMITS_DIR = 1, 0.05, tmp_path
    handle = (tmp_path / "permit-0.lock").open("a")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, as by another worker
    try:
        busy = client.get(url, {"output_tokens": "100"} if "batching" in url else {"peak_users": "199"})
        assert busy.status_code == 503 and busy["Retry-After"] == "1"
    finally:
        handle.close()


# ---------------------------------------------------------------- random values over every knob


def values_of(param: Param) -> st.SearchStrategy:
    """Any value the declaration accepts, edges drawn often, as a query string sends it."""
    if param.kind == "choice":
        drawn = st.sampled_from(list(param.choices))
    elif param.kind == "bool":
        drawn = st.sampled_from(["on", "off"])
    elif param.kind == "int":
        low = int(param.low if param.low is not None else -(10**6)) + (1 if param.low_open else 0)
        high = int(param.high if param.high is not None else 10**6)
        drawn = st.one_of(st.sampled_from([low, high]), st.integers(low, high)).map(str)
    elif param.kind == "float":
        low = param.low if param.low is not None else -1e6
        high = param.high if param.high is not None else 1e6
        edges = [high, low * 1.0000001 + 1e-9 if param.low_open else low]
        drawn = st.one_of(
            st.sampled_from(edges), st.floats(low, high, exclude_min=param.low_open, allow_nan=False)
        ).map(repr)
    elif param.name == "engine_log":
        drawn = engine_logs()
    elif param.is_long_text:
        drawn = pasted_configs()
    else:
        drawn = st.just(str(param.default))
    return st.one_of(st.just(""), drawn) if param.optional else drawn


NUMBERS = st.one_of(
    st.integers(-3, 10**4), st.integers(10**4, 10**15), st.just(10**1200), st.floats(allow_nan=False)
)
FIELDS = [
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "sliding_window",
    "kv_lora_rank",
    "n_routed_experts",
    "num_local_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "first_k_dense_replace",
    "max_window_layers",
]


@st.composite
def pasted_configs(draw) -> str:
    family = draw(st.sampled_from(["llama", "qwen2", "gpt_oss", "deepseek_v3", "mixtral", "gemma3_text"]))
    base = {
        **LLAMA,
        "model_type": family,
        "sliding_window": 4096,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "n_routed_experts": 8,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 2048,
    }
    changed = draw(st.dictionaries(st.sampled_from(FIELDS), NUMBERS, max_size=4))
    return json.dumps({**base, **changed})


@st.composite
def engine_logs(draw) -> str:
    tokens = draw(st.one_of(st.integers(0, 10**9), st.just(10**3000)))
    memory = draw(st.sampled_from(["26.43", "0", "1.2.3", "9" * 400]))
    concurrency = draw(st.sampled_from(["26.43", "0.5", "9" * 400]))
    return (
        f"INFO GPU KV cache size: {tokens:,} tokens\n"
        f"INFO Maximum concurrency for 8,192 tokens per request: {concurrency}x\n"
        f"INFO Available KV cache memory: {memory} GiB"
    )


def queries(params: tuple[Param, ...]) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={param.name: values_of(param) for param in params})


FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def answered(response, declared: set[str]) -> None:
    assert response.status_code in (200, 400), (response.status_code, response.content[:300])
    if response.status_code == 400 and response["Content-Type"] == "application/json":
        error = response.json()["error"]
        assert error["param"] in declared and error["message"], error


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_any_declared_values_are_a_result_or_a_400(client, unlimited, name):
    calculator = CALCULATORS[name]
    declared = {param.name for param in calculator.params}

    @FUZZ
    @given(query=queries(calculator.params))
    def check(query):
        answered(client.get(f"/sim/calc/{name}.json", query), declared)

    check()


@FUZZ
@given(query=queries(CHAIN_PARAMS))
def test_any_chain_settings_are_a_result_or_a_400(client, unlimited, query):
    answered(client.get("/sim/chain.json", query), {param.name for param in CHAIN_PARAMS})


@FUZZ
@given(query=queries(SWEEP_PARAMS))
def test_any_sweep_settings_are_a_result_or_a_400(client, unlimited, query):
    answered(client.get("/sim/sweep.json", query), {param.name for param in SWEEP_PARAMS})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=queries(ENGINE_PARAMS), pasted=pasted_configs())
def test_any_engine_settings_stay_within_the_counted_work(query, pasted):
    """The engine page's run and sweep at any declared settings: a result whose counted work
    (steps and samples) is within the web's cap, or a refusal naming a setting."""
    model_config = pasted if query.get("model") == "config" else ""
    try:
        values = parse_engine_values(query)
        ENGINE_WEB_LIMITS.check(values)
        inputs = engine_inputs(values, model_config)
        result = run_engine(inputs, ENGINE_WEB_LIMITS.sample_interval, ENGINE_WEB_LIMITS.run_work)
    except ParamError as error:
        assert error.param in {param.name for param in ENGINE_PARAMS} | {"model_config", "trace"}
        return
    assert result.work + SAMPLE_WORK_UNITS * len(result.timeseries) <= ENGINE_WEB_LIMITS.run_work
    with contextlib.suppress(WorkBudgetExceeded):  # the page leaves the sweep off
        sweep_engine(inputs, ENGINE_WEB_LIMITS.sweep_work)


@FUZZ
@given(query=queries(ENGINE_PARAMS), pasted=pasted_configs())
def test_any_engine_page_settings_are_a_result_or_a_400(client, unlimited, query, pasted):
    if query.get("model") == "config":
        query = {**query, "model_config": pasted}
    answered(
        client.get("/sim/engine.json", query), {param.name for param in ENGINE_PARAMS} | {"model_config"}
    )
    assert client.get("/sim/engine/", query).status_code in (200, 400)


@pytest.mark.django_db
def test_a_vanishing_memory_utilization_is_refused_naming_it(client):
    # 5e-324 of the GPU once overflowed working out how much memory would fit the model.
    response = client.get(
        "/sim/engine.json",
        {"model": "Llama-3.1-70B", "hardware": "rtx-4090", "gpu_memory_utilization": "5e-324"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "gpu_memory_utilization"
