"""The model gateway, with the official OpenAI and Anthropic SDKs as the agent's clients and
local stand-ins as the providers: calls are recorded with tokens and cost, streams pass
through untouched, and anything not allowed is refused with a clear JSON error."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from model_standins import INPUT_TOKENS, OPENROUTER_COST, OUTPUT_TOKENS, WORDS, ModelStandIn

from ancha.results.run_folder import TrialFolder
from ancha.runner.gateway import GatewayTrial, ModelGateway, model_environment
from ancha.runner.gateway.prices import PRICES_AS_OF, cost_usd, price_of


def calls(trial: GatewayTrial) -> list[dict[str, object]]:
    assert trial.folder is not None
    trial.flush()
    return trial.folder.read_model_calls()


def test_openai_sdk_call__recorded_with_provider_model_tokens_and_cost(trial: GatewayTrial,
                                                                       standin: ModelStandIn) -> None:
    env = trial.environment()
    client = openai.OpenAI(api_key="sk-test", base_url=env["OPENAI_BASE_URL"])
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content == "".join(WORDS)
    assert standin.requests[-1]["path"] == "/v1/chat/completions"
    assert standin.requests[-1]["headers"]["authorization"] == "Bearer sk-test"
    [call] = calls(trial)
    expected = cost_usd("gpt-4o-mini", INPUT_TOKENS, OUTPUT_TOKENS)
    assert call["provider"] == "openai" and call["model"] == "gpt-4o-mini"
    assert (call["input_tokens"], call["output_tokens"]) == (INPUT_TOKENS, OUTPUT_TOKENS)
    assert call["cost_usd"] == expected and call["cost_source"] == "price_table"
    assert call["status"] == 200 and call["stream"] is False
    assert isinstance(call["latency_ms"], float)
    assert trial.cost() == {"usd": expected, "calls": 1, "input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS}


def test_openai_sdk_stream__usage_read_from_the_include_usage_chunk(trial: GatewayTrial) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=trial.environment()["OPENAI_BASE_URL"])
    stream = client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}],
                                            stream=True, stream_options={"include_usage": True})
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "".join(WORDS)
    [call] = calls(trial)
    assert call["stream"] is True and call["model"] == "gpt-4.1"
    assert (call["input_tokens"], call["output_tokens"]) == (INPUT_TOKENS, OUTPUT_TOKENS)
    assert call["cost_usd"] == cost_usd("gpt-4.1", INPUT_TOKENS, OUTPUT_TOKENS)


def test_anthropic_sdk_stream__usage_read_from_message_start_and_message_delta(trial: GatewayTrial) -> None:
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=trial.environment()["ANTHROPIC_BASE_URL"])
    with client.messages.stream(model="claude-sonnet-4-5-20250929", max_tokens=100,
                                messages=[{"role": "user", "content": "hi"}]) as stream:
        text = "".join(stream.text_stream)
    assert text == "".join(WORDS)
    answer = client.messages.create(model="claude-3-5-haiku-latest", max_tokens=100,
                                    messages=[{"role": "user", "content": "hi"}])
    assert answer.usage.output_tokens == OUTPUT_TOKENS
    streamed, plain = calls(trial)
    assert streamed["provider"] == "anthropic" and streamed["stream"] is True
    assert (streamed["input_tokens"], streamed["output_tokens"]) == (INPUT_TOKENS, OUTPUT_TOKENS)
    assert streamed["cost_usd"] == cost_usd("claude-sonnet-4-5", INPUT_TOKENS, OUTPUT_TOKENS) == 0.0105
    assert plain["cost_usd"] == cost_usd("claude-3-5-haiku", INPUT_TOKENS, OUTPUT_TOKENS) == 0.0028


STREAMS = {
    "openai": ("OPENAI_BASE_URL", "/chat/completions", "/v1/chat/completions",
               {"model": "gpt-4o", "stream": True, "stream_options": {"include_usage": True}, "messages": []}),
    "anthropic": ("ANTHROPIC_BASE_URL", "/v1/messages", "/v1/messages",
                  {"model": "claude-3-5-sonnet-latest", "stream": True, "max_tokens": 9, "messages": []}),
    "openrouter": ("OPENROUTER_BASE_URL", "/chat/completions", "/api/v1/chat/completions",
                   {"model": "anthropic/claude-3.5-sonnet", "stream": True, "messages": []}),
}


@pytest.mark.parametrize("provider", list(STREAMS))
def test_stream__passes_through_byte_identical_with_its_usage_read(provider: str, trial: GatewayTrial,
                                                                   standin: ModelStandIn) -> None:
    variable, path, direct_path, body = STREAMS[provider]
    direct = httpx.post(standin.url + direct_path, json=body)
    through = httpx.post(trial.environment()[variable] + path, json=body)
    assert through.headers["content-type"] == direct.headers["content-type"]
    assert through.content == direct.content and direct.content.count(b"data: ") > 5
    [call] = calls(trial)
    assert call["provider"] == provider and call["stream"] is True
    assert (call["input_tokens"], call["output_tokens"]) == (INPUT_TOKENS, OUTPUT_TOKENS)
    if provider == "openrouter":  # OpenRouter's own figure wins over the price table
        assert call["cost_usd"] == OPENROUTER_COST and call["cost_source"] == "provider"
    else:
        assert call["cost_usd"] == cost_usd(str(body["model"]), INPUT_TOKENS, OUTPUT_TOKENS)
        assert call["cost_source"] == "price_table"


def test_stream__first_chunk_reaches_the_agent_before_the_provider_sends_the_rest(
        trial: GatewayTrial, standin: ModelStandIn) -> None:
    standin.release.clear()
    client = openai.OpenAI(api_key="sk-test", base_url=trial.environment()["OPENROUTER_BASE_URL"])
    stream = client.chat.completions.create(model="hold", messages=[{"role": "user", "content": "hi"}], stream=True)
    first = next(iter(stream))
    assert first.choices[0].delta.content == WORDS[0] and not standin.release.is_set()
    standin.release.set()
    rest = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert rest == "".join(WORDS[1:])


def test_unknown_model__cost_is_null_and_says_why(trial: GatewayTrial) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=trial.environment()["OPENAI_BASE_URL"])
    client.chat.completions.create(model="my-finetune-7b", messages=[{"role": "user", "content": "hi"}])
    [call] = calls(trial)
    assert call["cost_usd"] is None and call["input_tokens"] == INPUT_TOKENS
    assert "my-finetune-7b" in str(call["cost_note"]) and PRICES_AS_OF in str(call["cost_note"])
    assert trial.cost()["usd"] is None and trial.cost()["unpriced_calls"] == 1


def test_host_not_in_model_hosts__refused_with_403(gateway: ModelGateway, tmp_path: Path) -> None:
    only = ModelGateway(["openrouter.ai"], upstreams={"openrouter.ai": "http://127.0.0.1:9"}).start()
    try:
        trial = only.open_trial(TrialFolder(tmp_path))
        client = openai.OpenAI(api_key="sk", base_url=f"{trial.url}/api.openai.com/v1", max_retries=0)
        with pytest.raises(openai.PermissionDeniedError) as refused:
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        assert refused.value.status_code == 403
        assert "api.openai.com is not in agent.execution.modelHosts (allowed: openrouter.ai)" in str(refused.value)
        assert not (tmp_path / "models.jsonl").exists()
    finally:
        only.stop()


def test_unknown_trial_and_foreign_paths__404_in_json(gateway: ModelGateway, trial: GatewayTrial) -> None:
    ended = httpx.post(f"{gateway.url}/t/0123456789abcdef/openrouter.ai/api/v1/chat/completions", json={})
    assert ended.status_code == 404 and ended.json()["error"]["code"] == "unknown_trial"
    assert "no running trial" in ended.json()["error"]["message"]
    stray = httpx.get(f"{gateway.url}/v1/models")
    assert stray.status_code == 404 and "base URLs Ancha sets" in stray.json()["error"]["message"]
    for method in ("GET", "DELETE", "OPTIONS"):  # whatever comes in, never a 500
        answer = httpx.request(method, f"{gateway.url}/t/{trial.key}/example.com/x")
        assert answer.status_code == 403 and answer.json()["type"] == "error"


def test_unreachable_upstream__502_with_the_reason(tmp_path: Path) -> None:
    with ModelGateway(["openrouter.ai"], upstreams={"openrouter.ai": "http://127.0.0.1:9"}) as down:
        trial = down.open_trial(TrialFolder(tmp_path))
        answer = httpx.post(trial.environment()["OPENROUTER_BASE_URL"] + "/chat/completions", json={"model": "x"})
        assert answer.status_code == 502
        error = answer.json()["error"]
        assert error["code"] == "upstream_unreachable" and "ConnectError" in error["message"]
        [call] = calls(trial)
        assert call["status"] == 502 and call["cost_usd"] == 0.0 and "ConnectError" in call["error"]


def test_over_budget__later_calls_get_402(gateway: ModelGateway, tmp_path: Path) -> None:
    trial = gateway.open_trial(TrialFolder(tmp_path), budget_usd=0.001)
    try:
        client = openai.OpenAI(api_key="sk", base_url=trial.environment()["OPENAI_BASE_URL"], max_retries=0)
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        assert trial.over_budget
        with pytest.raises(openai.APIStatusError) as refused:
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        assert refused.value.status_code == 402 and "over agent.budget_usd $0.001" in str(refused.value)
        assert trial.cost()["calls"] == 1 and trial.cost()["budget_usd"] == 0.001
    finally:
        gateway.close_trial(trial)


def test_model_environment__each_provider_gets_its_base_url_and_every_domain_a_url() -> None:
    env = model_environment("http://127.0.0.1:5000/t/k", ["openrouter.ai", "api.anthropic.com", "api.mistral.ai"])
    assert env["OPENROUTER_BASE_URL"] == "http://127.0.0.1:5000/t/k/openrouter.ai/api/v1"
    assert env["OPENAI_BASE_URL"] == env["OPENROUTER_BASE_URL"]  # unset otherwise: OpenRouter speaks OpenAI
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:5000/t/k/api.anthropic.com"
    assert json.loads(env["ANCHA_MODEL_URLS"]) == {
        "openrouter.ai": "http://127.0.0.1:5000/t/k/openrouter.ai",
        "api.anthropic.com": "http://127.0.0.1:5000/t/k/api.anthropic.com",
        "api.mistral.ai": "http://127.0.0.1:5000/t/k/api.mistral.ai"}
    both = model_environment("http://gw:1/t/k", ["openrouter.ai", "api.openai.com"])
    assert both["OPENAI_BASE_URL"] == "http://gw:1/t/k/api.openai.com/v1"
    kept = model_environment("http://gw:1/t/k", ["openrouter.ai"], {"OPENAI_BASE_URL": "http://mine"})
    assert "OPENAI_BASE_URL" not in kept


def test_price_table__knows_each_providers_spelling_of_a_model() -> None:
    assert price_of("gpt-4o-mini-2024-07-18") == price_of("openai/gpt-4o-mini") == price_of("gpt-4o-mini")
    assert price_of("gpt-4o-mini") != price_of("gpt-4o")
    assert price_of("claude-sonnet-4-5-20250929") == price_of("anthropic/claude-sonnet-4.5")
    assert price_of("claude-sonnet-4-7") is None and price_of("gpt-4.1-micro") is None
    # Anthropic cache reads cost a tenth of input
    assert cost_usd("claude-sonnet-4-5", 1000, 0, cached_input_tokens=1000) == pytest.approx(0.0003)



def test_odd_paths__answered_never_with_a_500(gateway: ModelGateway, trial: GatewayTrial) -> None:
    for path in (f"/t/{trial.key}/api.openai.com/v1/%ZZ?x=%", f"/t/{trial.key}/api.openai.com//evil.example/x",
                 f"/t/{trial.key}/API.OPENAI.COM/v1/\xff", "/t/", "/t//api.openai.com/v1", "/"):
        with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                         .encode("latin-1"))
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        status = int(answer.split(b" ", 2)[1])
        assert status != 500 and status < 600, (path, answer[:200])


def test_cookies_a_provider_sets__go_to_the_agent_and_never_to_another_trial(
        gateway: ModelGateway, standin: ModelStandIn, tmp_path: Path) -> None:
    first, second = gateway.open_trial(TrialFolder(tmp_path)), gateway.open_trial(TrialFolder(tmp_path))
    try:
        body = {"model": "gpt-4o-mini", "messages": []}
        answer = httpx.post(first.environment()["OPENAI_BASE_URL"] + "/chat/completions", json=body)
        assert answer.cookies["edge"] == "provider-set"
        httpx.post(second.environment()["OPENAI_BASE_URL"] + "/chat/completions", json=body)
        assert "cookie" not in standin.requests[-1]["headers"]
    finally:
        gateway.close_trial(first)
        gateway.close_trial(second)
