"""``manage.py practice_server``: flags checked with the model's rules, then a real server."""

from __future__ import annotations

import socket

import pytest
from django.core.management import CommandError, call_command
from openai import OpenAI

from felab_sim.practice import MODEL_ID
from tests.practice.conftest import practice_server_command


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--slots", "0"], "--slots"),
        (["--slots", "5000"], "--slots"),
        (["--step-ms", "0"], "--step-ms"),
        (["--step-ms", "nan"], "--step-ms"),
        (["--growth", "-0.1"], "--growth"),
        (["--growth", "2"], "--growth"),
        (["--prefill-tok-s", "0"], "--prefill-tok-s"),
        (["--port", "0"], "--port"),
        (["--port", "70000"], "--port"),
    ],
)
def test_bad_values_name_their_flag(flags, named):
    with pytest.raises(CommandError, match=f"^{named}"):
        call_command("practice_server", *flags)


def test_a_flag_that_is_not_a_number_names_itself():
    with pytest.raises(CommandError, match="--slots"):
        call_command("practice_server", "--slots", "many")


def test_a_port_in_use_is_a_one_line_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError, match=f"cannot listen on 127.0.0.1:{port}"):
            call_command("practice_server", "--port", str(port))


def test_the_command_serves_until_ctrl_c():
    with practice_server_command("--slots", "3", "--step-ms", "2") as server:
        assert server.health["slots"] == 3
        assert server.health["params"]["step_ms"] == 2.0

        client = OpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key="x", max_retries=0)
        stream = client.chat.completions.create(
            model=MODEL_ID, messages=[{"role": "user", "content": "hi"}], max_tokens=3, stream=True
        )
        assert [c.choices[0].finish_reason for c in stream] == [None, None, None, "length"]
    assert server.returncode == 0, server.output
    assert f"Practice server on http://127.0.0.1:{server.port}/v1 (slots=3, step_ms=2" in server.output
    assert "Traceback" not in server.output
