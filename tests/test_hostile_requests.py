"""Every URL, thrown wrong methods, oversized and malformed bodies and odd query strings,
by each member of the cast: always an answer below 500."""

import json

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from felab_sim.models import Run

CARD = "/learn/llm-inference-performance/concurrency-sweep/step-1/"
PRACTICE = "/practice/l03-replicas-with-headroom/"
# The first cut's address, redirected to PRACTICE (quiz.practice_views.moved_practice).
MOVED_PRACTICE = "/learn/llm-inference-performance/concurrency-sweep/practice/l03-replicas-with-headroom/"
URLS = [
    "/",
    "/learn/llm-inference-performance/concurrency-sweep/",
    CARD,
    CARD + "?answer=shown",
    CARD + "show/",
    CARD + "rate/",
    CARD + "opened/",
    "/progress/",
    "/progress/export.json",
    "/progress/sharing/",
    "/review/",
    PRACTICE,
    PRACTICE + "?seed=3",
    PRACTICE + "rate/",
    "/practice/",
    "/practice/set/",
    "/practice/set/1/",
    "/practice/set/1/1/",
    MOVED_PRACTICE,
    MOVED_PRACTICE + "?seed=3",
    MOVED_PRACTICE + "rate/",
    "/review/next/",
    "/instructor/",
    "/accounts/signup/",
    "/accounts/login/",
    "/accounts/logout/",
    "/accounts/password/change/",
    "/accounts/password/change/done/",
    "/accounts/password/reset/",
    "/accounts/password/reset/sent/",
    "/accounts/password/reset/MQ/set-password/",
    "/accounts/password/reset/MQ/not-a-token/",
    "/accounts/password/reset/done/",
    "/accounts/email/",
    "/accounts/delete/",
    "/sim/",
    "/sim/sweep.json",
    "/sim/engine/",
    "/sim/engine.json",
    "/sim/chain/",
    "/sim/chain.json",
    "/sim/chain/steps/fit/",
    "/sim/calc/prefill.json",
    "/sim/calc/prefill/",
    "/sim/calc/prefix-cache/runs/",
    "/sim/calc/prefix-cache/?run={prefix_run}",
    "/sim/calc/prefix-cache/?run=" + "9" * 40,
    "/sim/runs/{prefix_run}/",
    "/glossary/",
    "/sim/runs/",
    "/sim/runs/{run}/",
    "/healthz",
    "/readyz",
    "/admin/login/",
    "/admin/",
    "/admin/lessons/card/",
]
METHODS = ["get", "post", "put", "patch", "delete", "head", "options", "trace"]
ODD_QUERIES = ["?%ff%fe", "?answer=" + "x" * 20_000, "?a=1&a=2&a=3", "?=", "?slots=%00", "?levels[]=1"]
BIG = "x" * (3 * 1024 * 1024)  # over Django's 2.5 MB limit on request bodies


def all_patterns(resolver: URLResolver = None, prefix: str = "") -> list[str]:
    resolver = resolver or get_resolver()
    found = []
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if not route.startswith("admin/"):
                found += all_patterns(entry, route)
        elif isinstance(entry, URLPattern):
            found.append(route)
    return found


def test_every_route_is_in_the_hostile_list():
    """A new view must be added above, so it meets the hostile requests too."""
    covered = {url.split("?")[0] for url in URLS}
    for route in all_patterns():
        if route.startswith("admin/"):
            continue
        concrete = "/" + route.replace("<slug:course_slug>", "llm-inference-performance").replace(
            "<slug:lesson_slug>", "concurrency-sweep"
        ).replace("<int:step>", "1").replace("<int:run_id>", "{run}").replace(
            "<slug:name>", "prefill"
        ).replace("<uidb64>/<token>", "MQ/set-password").replace(
            "<slug:template_slug>", "l03-replicas-with-headroom"
        ).replace("<slug:key>", "fit").replace("<int:number>", "1").replace("<int:position>", "1")
        assert concrete in covered, f"{route} is not exercised by the hostile request tests"


@pytest.fixture
def urls(lessons):
    run = Run.objects.create(server_url="http://127.0.0.1:9/v1", params={"levels": [1]}, state="failed")
    prefix_run = Run.objects.create(
        kind="prefix-cache", server_url=run.server_url, state="done",
        params={"prefix_chars": 1300, "suffix_chars": 80, "requests": 3, "max_tokens": 8},
    )  # fmt: skip
    return [url.replace("{run}", str(run.pk)).replace("{prefix_run}", str(prefix_run.pk)) for url in URLS]


@pytest.fixture(params=["anonymous", "student", "instructor"])
def visitor(request, student, instructor) -> Client:
    client = Client()
    if request.param != "anonymous":
        client.force_login(student if request.param == "student" else instructor)
    return client


@pytest.mark.django_db
def test_wrong_methods_never_500(visitor, urls, settings):
    settings.RATE_LIMITS = {name: (0, 60) for name in settings.RATE_LIMITS}
    for url in urls:
        for method in METHODS:
            response = getattr(visitor, method)(url) if method != "trace" else visitor.generic("TRACE", url)
            assert response.status_code < 500, (method, url, response.status_code)


@pytest.mark.django_db
def test_malformed_and_oversized_bodies_never_500(visitor, urls, settings):
    settings.RATE_LIMITS = {name: (0, 60) for name in settings.RATE_LIMITS}
    bodies = [
        ("application/x-www-form-urlencoded", b"rating=%ff%fe&answer=%00&showing=99999999999999999999999"),
        ("application/x-www-form-urlencoded", b"rating=3&rating=4&showing=-1&showing=abc"),
        ("multipart/form-data; boundary=broken", b"--broken\r\nnot a part\r\n"),
        ("application/json", b'{"rating": [1, 2], "answer": {"$ne": 1}}'),
        ("text/plain", b"\x00\xff\xfe garbage"),
        ("application/x-www-form-urlencoded", ("answer=" + BIG).encode()),
    ]
    for url in urls:
        for content_type, body in bodies:
            response = visitor.generic("POST", url, body, content_type=content_type)
            assert response.status_code < 500, (url, content_type[:30], response.status_code)


@pytest.mark.django_db
def test_odd_query_strings_never_500(visitor, urls, settings):
    settings.RATE_LIMITS = {name: (0, 60) for name in settings.RATE_LIMITS}
    for url in urls:
        base = url.split("?")[0]
        for query in ODD_QUERIES:
            response = visitor.get(base + query)
            assert response.status_code < 500, (base + query[:40], response.status_code)


@pytest.mark.django_db
def test_a_too_large_answer_is_a_clear_4xx(client, lessons):
    response = client.post(CARD + "show/", {"answer": BIG})
    assert response.status_code == 400
    assert "malformed or too large" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "param"),
    [
        ("/sim/calc/decode-ceiling.json?bandwidth_gbs=5e-324", "bandwidth_gbs"),
        ("/sim/calc/decode-ceiling.json?params_b=1e-320", "params_b"),
        ("/sim/calc/decode-ceiling.json?active_params_b=5e-324", "active_params_b"),
        ("/sim/calc/roofline.json?bytes_per_weight=5e-324", "bytes_per_weight"),
    ],
)
def test_a_divisor_too_small_to_divide_by_is_a_400_naming_it(client, url, param):
    response = client.get(url)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param


@pytest.mark.django_db
@pytest.mark.parametrize("prefix_chars", [26_667_113, 40_000_000])
def test_the_prefix_cache_page_draws_its_chart_up_to_the_declared_maximum(client, prefix_chars):
    response = client.get(f"/sim/calc/prefix-cache/?prefix_chars={prefix_chars}")
    assert response.status_code == 200
    assert f"{prefix_chars:,}" in response.content.decode()


GPT_OSS = {
    "model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880, "num_attention_heads": 64,
    "num_hidden_layers": 24, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
    "num_local_experts": 32, "experts_per_token": 4, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "tie_word_embeddings": False,
}  # fmt: skip
QWEN_MOE = {
    "model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768,
    "num_attention_heads": 32, "num_hidden_layers": 48, "num_key_value_heads": 4, "head_dim": 128,
    "vocab_size": 151936, "num_experts": 128, "num_experts_per_tok": 8, "tie_word_embeddings": False,
}  # fmt: skip


def _refused_naming(response, param: str) -> None:
    assert response.status_code == 400, (response.status_code, response.content[:200])
    if response["Content-Type"].startswith("application/json"):
        assert response.json()["error"]["param"] == param
    else:
        assert param in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("memory_gb", ["1e-12", "5e-324", "0.01"])
@pytest.mark.parametrize("url", ["/sim/engine.json", "/sim/engine/"])
def test_a_gpu_memory_too_small_to_hold_anything_is_a_400_naming_it(client, url, memory_gb):
    _refused_naming(client.get(url, {"memory_gb": memory_gb}), "memory_gb")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("config", "param"),
    [
        ({**QWEN_MOE, "num_experts_per_tok": 1_000_000}, "num_experts_per_tok"),
        ({**QWEN_MOE, "num_experts_per_tok": 129}, "num_experts_per_tok"),
        ({**GPT_OSS, "experts_per_token": 33}, "experts_per_token"),
        ({**GPT_OSS, "layer_types": [[1]] * 24}, "layer_types"),
        ({**GPT_OSS, "layer_types": [{"a": 1}] * 24}, "layer_types"),
    ],
)
@pytest.mark.parametrize(
    "url",
    [
        "/sim/engine.json?hardware=b200&tensor_parallel=8&data_parallel=8&expert_parallel=on",
        "/sim/calc/kv-cache.json?model=config",
        "/sim/calc/decode-ceiling.json?model=config",
        "/sim/calc/roofline.json?model=config",
    ],
)
def test_a_pasted_config_that_no_model_has_is_a_400_naming_the_field(client, settings, url, config, param):
    settings.RATE_LIMITS = {name: (0, 60) for name in settings.RATE_LIMITS}
    query = {"model_config": json.dumps(config)}
    if url.startswith("/sim/engine"):
        query["model"] = "config"
    response = client.get(url, query)
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert param in error["message"], error


@pytest.mark.django_db
@pytest.mark.parametrize(
    "calibration", ["[" * 5000 + "]" * 5000, '{"kind": "knee", "B": ' + "[" * 3000 + "]" * 3000 + "}"]
)
@pytest.mark.parametrize(
    "page", ["prefill", "continuous-batching", "decode-ceiling", "roofline", "step-time"]
)
def test_a_calibration_nested_too_deeply_is_a_400_naming_it(client, settings, page, calibration):
    settings.RATE_LIMITS = {name: (0, 60) for name in settings.RATE_LIMITS}
    data = {"calibration": calibration} | ({"model": "Llama-3.1-70B"} if page == "prefill" else {})
    response = client.post(f"/sim/calc/{page}/", data)
    assert response.status_code == 400, response.content[:300]
    assert "nested too deeply" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        {"kind": "bandwidth", "op": "read", "gbs": 0.01},
        {"kind": "bandwidth", "op": "read", "gbs": 9.9e29},
        {"kind": "knee", "B": 1, "K": 4096, "N": 14336, "s": 1e-9, "gbs": 0.001},
        [{"kind": "bandwidth", "op": "read", "gbs": 4000}, {"kind": "gemm", "dtype": "bf16", "tflops": 1e-6}],
    ],
)
@pytest.mark.parametrize("page", ["decode-ceiling", "roofline"])
def test_a_calibration_measuring_past_the_typed_fields_bounds_is_a_400_naming_it(client, page, row):
    """The page draws its chart at the measured figures: one no typed figure could say is refused
    up front, on the page and its .json alike, not raised while drawing."""
    calibration = "\n".join(json.dumps(line) for line in (row if isinstance(row, list) else [row]))
    for response in (
        client.post(f"/sim/calc/{page}/", {"calibration": calibration}),
        client.post(f"/sim/calc/{page}.json", {"calibration": calibration}),
    ):
        assert response.status_code in (400, 405), (response.status_code, response.content[:300])
        if response.status_code == 400:
            assert "alibration" in response.content.decode()
            assert "outside its field" in response.content.decode()


@pytest.mark.django_db
def test_a_calibration_within_the_bounds_still_draws_its_chart(client):
    response = client.post(
        "/sim/calc/roofline/", {"calibration": json.dumps({"kind": "bandwidth", "op": "read", "gbs": 4000})}
    )
    assert response.status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("seed", ["²", "١٢", "9" * 5000, "99999999999", " 3 4"])
def test_a_practice_seed_that_is_no_ascii_whole_number_in_range_is_refused(client, lessons, seed):
    assert client.get(PRACTICE, {"seed": seed}).status_code == 400
    assert client.post(PRACTICE, {"seed": seed, "answer": "3"}).status_code == 400


@pytest.mark.django_db
def test_a_practice_seed_with_leading_zeros_is_its_number(client, lessons):
    assert client.get(PRACTICE, {"seed": "0" * 40 + "3"}).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("answer", ["1e308", "1.7e308", "-1e308", "1e200"])
@pytest.mark.parametrize("slug", ["l08-batch-and-cache", "l13-break-even", "l16-lora-share", "l18-loss"])
def test_an_answer_too_large_for_any_problem_is_refused_not_counted(client, lessons, slug, answer):
    response = client.post(f"/practice/{slug}/", {"seed": "132", "answer": answer})
    assert response.status_code < 500
    assert "too large" in response.content.decode()


TINY_CALIBRATIONS = [
    {"kind": "bandwidth", "op": "read", "gbs": 5e-324},
    {"kind": "bandwidth", "op": "read", "gbs": 2.2250738585072014e-308},
    [{"kind": "bandwidth", "op": "read", "gbs": 4000}, {"kind": "gemm", "dtype": "bf16", "tflops": 5e-324}],
    {"kind": "knee", "B": 1, "K": 4096, "N": 14336, "s": 3e-5, "gbs": 1e-320},
    [
        {"kind": "bandwidth", "op": "read", "gbs": 4000},
        {"kind": "overhead", "s": 1e-4, "layers": 1e-320, "kernels_per_layer": 10},
    ],
    [
        {"kind": "bandwidth", "op": "read", "gbs": 4000},
        {"kind": "overhead", "s": 1e-4, "layers": 32, "kernels_per_layer": 5e-324},
    ],
]


@pytest.mark.django_db
@pytest.mark.parametrize("row", TINY_CALIBRATIONS)
@pytest.mark.parametrize("page", ["prefill", "step-time", "continuous-batching"])
def test_a_calibration_with_figures_too_small_to_divide_by_is_a_400_naming_it(client, settings, page, row):
    """Every reader of a calibration holds its figures to the typed fields' bounds, not only the
    ceilings: a subnormal bandwidth, FLOP/s or kernel count is refused, never divided by."""
    settings.RATE_LIMITS = {name: (0, 60) for name in settings.RATE_LIMITS}
    calibration = "\n".join(json.dumps(line) for line in (row if isinstance(row, list) else [row]))
    data = {"calibration": calibration, "hardware": "h200"} | (
        {"model": "Llama-3.1-70B"} if page == "prefill" else {}
    )
    for response in (client.get(f"/sim/calc/{page}.json", data), client.post(f"/sim/calc/{page}/", data)):
        assert response.status_code == 400, (response.status_code, response.content[:300])
        assert "calibration" in response.content.decode()
        assert "outside its field" in response.content.decode()


def _refused_not_counted(client, slug: str, answer: str) -> str:
    from quiz.models import PracticeAttempt

    response = client.post(f"/practice/{slug}/", {"seed": "7", "answer": answer})
    assert response.status_code == 200, (response.status_code, response.content[:300])
    assert not PracticeAttempt.objects.exists()
    return response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "answer",
    ["5 9**2**2", "5 9**9**3", "5 GB**2**2**2**2", "5 GB^99999999999", "5 GB**1e308", "5 GB**0.5**-99"],
)
@pytest.mark.parametrize(
    "slug", ["l05-kv-per-conversation", "l06-speedup", "l04-efficiency", "l00-decode-ceiling"]
)
def test_an_answer_with_a_power_in_its_unit_is_refused_before_it_is_evaluated(client, lessons, slug, answer):
    """The answer's unit is read by a grammar that allows no power past 3, so a power tower
    ("9**9**9" runs for minutes) never reaches pint: refused, not counted, never a 500."""
    assert "is not a unit the site knows" in _refused_not_counted(client, slug, answer)


@pytest.mark.django_db
@pytest.mark.parametrize("answer", ["5e-324", "4.9 × 10^-324", "1e-320", "5·10⁻³²⁴"])
@pytest.mark.parametrize(
    "slug", ["l00-decode-ceiling", "l05-kv-per-conversation", "l06-speedup", "l04-efficiency"]
)
def test_an_answer_too_small_for_any_problem_is_refused_not_counted(client, lessons, slug, answer):
    answer = answer + (" %" if slug == "l04-efficiency" else "")
    assert "too small" in _refused_not_counted(client, slug, answer)


@pytest.mark.django_db
@pytest.mark.parametrize("answer", ["5 GB", "5 B", "40 Gbit"])
@pytest.mark.parametrize("slug", ["l06-speedup", "l04-efficiency"])
def test_a_size_is_refused_where_the_answer_is_no_size(client, lessons, slug, answer):
    """pint counts bytes as no dimension: "5 GB" would read as 5e9 for a plain number."""
    assert "is a size in bytes or bits" in _refused_not_counted(client, slug, answer)
