"""The model gateway distrusts the numbers a provider sends back: a usage it cannot take at
face value (too large, not finite, negative, not an integer, not JSON at all) is counted at
the model's worst-case price and recorded as not trusted, in every protocol the gateway
reads (OpenAI, OpenRouter and Anthropic, streamed and not), so the call always counts, the
budget always applies, and ``models.jsonl`` and ``checks.json`` stay valid JSON."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from model_standins import USAGE_HEADER, ModelStandIn
from rich.console import Console
from test_run_cli import SCENE

from ancha.config.loading import load_config
from ancha.results.run_folder import TrialFolder
from ancha.runner.gateway import GatewayTrial, ModelGateway
from ancha.runner.gateway.prices import CALL_USD_CEILING, price_of, worst_case_usd
from ancha.runner.run import run_scenes
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses ``Infinity``, ``-Infinity`` and ``NaN``, as every other JSON reader does."""
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def strict_calls(trial: GatewayTrial) -> list[dict[str, Any]]:
    assert trial.folder is not None
    trial.flush()
    return [strict_json(line) for line in (trial.folder.path / "models.jsonl").read_text().splitlines()]


# (base URL variable, path, request body, the usage's names for input and output tokens)
PROTOCOLS: dict[str, tuple[str, str, dict[str, Any], str, str]] = {
    "openai": ("OPENAI_BASE_URL", "/chat/completions", {"model": "gpt-4o", "messages": []},
               "prompt_tokens", "completion_tokens"),
    "openai-stream": ("OPENAI_BASE_URL", "/chat/completions",
                      {"model": "gpt-4o", "messages": [], "stream": True, "stream_options": {"include_usage": True}},
                      "prompt_tokens", "completion_tokens"),
    "openrouter": ("OPENROUTER_BASE_URL", "/chat/completions", {"model": "openai/gpt-4o-mini", "messages": []},
                   "prompt_tokens", "completion_tokens"),
    "openrouter-stream": ("OPENROUTER_BASE_URL", "/chat/completions",
                          {"model": "openai/gpt-4o-mini", "messages": [], "stream": True},
                          "prompt_tokens", "completion_tokens"),
    "anthropic": ("ANTHROPIC_BASE_URL", "/v1/messages",
                  {"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": []}, "input_tokens", "output_tokens"),
    "anthropic-stream": ("ANTHROPIC_BASE_URL", "/v1/messages",
                         {"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": [], "stream": True},
                         "input_tokens", "output_tokens"),
}

# The usage text a hostile or broken provider sends, written as it would be on the wire;
# IN and OUT stand for the protocol's names of the input and output token counts.
HOSTILE: dict[str, str] = {
    "tokens_10**400": '{"IN": 1' + "0" * 400 + ', "OUT": 5}',
    "tokens_past_pythons_digit_limit": '{"IN": 1' + "0" * 5000 + ', "OUT": 5}',
    "tokens_1e309": '{"IN": 1e309, "OUT": 5}',
    "tokens_nan": '{"IN": NaN, "OUT": 5}',
    "tokens_infinity": '{"IN": 10, "OUT": Infinity}',
    "tokens_negative": '{"IN": -1000000, "OUT": 5}',
    "tokens_fraction": '{"IN": 1000.5, "OUT": 5}',
    "tokens_a_string": '{"IN": "1000", "OUT": 5}',
    "tokens_a_bool": '{"IN": 10, "OUT": true}',
    "tokens_past_the_cap": '{"IN": 1000000000000, "OUT": 5}',
    "cached_tokens_1e309": '{"IN": 10, "OUT": 5, "prompt_tokens_details": {"cached_tokens": 1e309}, '
                           '"input_tokens_details": {"cached_tokens": 1e309}, "cache_read_input_tokens": 1e309}',
    "cache_writes_10**400": '{"IN": 10, "OUT": 5, "cache_creation_input_tokens": 1' + "0" * 400 + '}',
    "cost_1e309": '{"IN": 10, "OUT": 5, "cost": 1e309}',
    "cost_nan": '{"IN": 10, "OUT": 5, "cost": NaN}',
    "cost_negative": '{"IN": 10, "OUT": 5, "cost": -50}',
    "cost_a_string": '{"IN": 10, "OUT": 5, "cost": "0.01"}',
    "cost_past_the_ceiling": '{"IN": 10, "OUT": 5, "cost": 1e300}',
    "usage_a_list": "[1000, 5]",
    "usage_a_number": "1e309",
    "usage_not_json": '{"IN": 1000, "OUT":',
    "usage_nested_past_the_parsers_depth": "[" * 100_000 + "]" * 100_000,
}


def hostile_call(trial: GatewayTrial, protocol: str, usage: str) -> httpx.Response:
    variable, path, body, names_in, names_out = PROTOCOLS[protocol]
    raw = usage.replace('"IN"', json.dumps(names_in)).replace('"OUT"', json.dumps(names_out))
    return httpx.post(trial.environment()[variable] + path, json=body, headers={USAGE_HEADER: raw}, timeout=30)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("hostile", list(HOSTILE))
def test_hostile_usage__call_counted_at_the_models_worst_case_and_recorded_as_untrusted(
        trial: GatewayTrial, protocol: str, hostile: str) -> None:
    answer = hostile_call(trial, protocol, HOSTILE[hostile])
    assert answer.status_code == 200  # the agent gets the provider's answer as it came
    [call] = strict_calls(trial)
    model = str(PROTOCOLS[protocol][2]["model"])
    worst = worst_case_usd(model)
    assert worst is not None and 0 < worst < CALL_USD_CEILING
    assert call["cost_usd"] == worst and call["cost_source"] == "worst_case", call
    assert isinstance(call["usage_untrusted"], str) and len(call["usage_untrusted"]) < 300
    assert call["input_tokens"] is None and call["output_tokens"] is None
    cost = strict_json(json.dumps(trial.cost()))
    assert cost["calls"] == 1 and cost["usd"] == worst


def test_hostile_usage__the_reason_names_the_number_and_never_echoes_it(trial: GatewayTrial) -> None:
    hostile_call(trial, "openai", HOSTILE["tokens_10**400"])
    hostile_call(trial, "anthropic-stream", HOSTILE["cost_1e309"])
    first, second = strict_calls(trial)
    assert "usage.prompt_tokens" in first["usage_untrusted"] and "401 digits" in first["usage_untrusted"]
    assert "usage.cost" in second["usage_untrusted"] and "inf" in second["usage_untrusted"]


def test_hostile_usage__an_unpriced_model_counts_at_the_per_call_ceiling(trial: GatewayTrial) -> None:
    body = {"model": "my-finetune-7b", "messages": []}
    httpx.post(trial.environment()["OPENAI_BASE_URL"] + "/chat/completions", json=body,
               headers={USAGE_HEADER: '{"prompt_tokens": 1e309, "completion_tokens": 5}'})
    [call] = strict_calls(trial)
    assert call["cost_usd"] == CALL_USD_CEILING and call["cost_source"] == "ceiling"
    assert trial.cost()["usd"] == CALL_USD_CEILING and "unpriced_calls" not in trial.cost()


def test_hostile_usage__the_budget_still_stops_the_trial(gateway: ModelGateway, tmp_path: Path) -> None:
    trial = gateway.open_trial(TrialFolder(tmp_path).create(), budget_usd=0.1)
    try:
        hostile_call(trial, "openai-stream", HOSTILE["tokens_10**400"])
        assert trial.over_budget
        refused = hostile_call(trial, "openai", HOSTILE["tokens_10**400"])
        assert refused.status_code == 402 and refused.json()["error"]["code"] == "over_budget"
        assert strict_json(json.dumps(trial.cost()))["calls"] == 1
    finally:
        gateway.close_trial(trial)


def test_sane_usage__still_trusted_as_sent(trial: GatewayTrial) -> None:
    price = price_of("gpt-4o")
    assert price is not None
    hostile_call(trial, "openai", f'{{"IN": {price.context}, "OUT": {price.max_output}, '
                                  '"prompt_tokens_details": {"cached_tokens": null}}')
    hostile_call(trial, "anthropic", '{"IN": 7, "OUT": 3, "cache_read_input_tokens": null, '
                                     '"cache_creation_input_tokens": null}')
    first, second = strict_calls(trial)
    assert (first["input_tokens"], first["output_tokens"]) == (price.context, price.max_output)
    assert first["cost_source"] == "price_table" and "usage_untrusted" not in first
    assert first["cost_usd"] == worst_case_usd("gpt-4o")
    assert (second["input_tokens"], second["output_tokens"]) == (7, 3) and "usage_untrusted" not in second


AGENT = textwrap.dedent("""
    import json, os, urllib.request

    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                                 data=json.dumps({"model": "gpt-4o", "messages": []}).encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer sk",
                                          "x-standin-usage": '{"prompt_tokens": 10, "completion_tokens": 5, '
                                                             '"cost": 1e309}'})
    print(urllib.request.urlopen(req).status, flush=True)
    slack, token = os.environ["ANCHA_SLACK_URL"], os.environ["ANCHA_SLACK_TOKEN"]
    auth = {"Authorization": "Bearer " + token}
    channel = json.load(urllib.request.urlopen(urllib.request.Request(slack + "/api/conversations.list",
                                                                      headers=auth)))["channels"][0]["id"]
    urllib.request.urlopen(urllib.request.Request(slack + "/api/chat.postMessage", headers={
        **auth, "content-type": "application/json"}, data=json.dumps({"channel": channel, "text": "hello"}).encode()))
""")


def test_ancha_run__a_hostile_cost_leaves_checks_summary_and_models_valid_json(tmp_path: Path,
                                                                              standin: ModelStandIn) -> None:
    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(SCENE.format(name="hello", limit="10m", speed=1))
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\n  budget_usd: 1000\n"
                                         "  execution:\n    modelHosts: [api.openai.com]\ntrials: 1\n")
    config = load_config(None, tmp_path, catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    out = io.StringIO()
    result = asyncio.run(run_scenes(config, scenes, console=Console(file=out, width=200), progress=False,
                                    model_upstreams={"api.openai.com": standin.url}))
    folder = result.run_dir / "hello" / "1"
    checks = strict_json((folder / "checks.json").read_text())
    summary = strict_json((result.run_dir / "summary.json").read_text())
    [call] = [strict_json(line) for line in (folder / "models.jsonl").read_text().splitlines()]
    assert checks["verdict"] == "passed", out.getvalue()
    assert "usage.cost" in call["usage_untrusted"] and call["cost_usd"] == worst_case_usd("gpt-4o")
    assert checks["cost"]["usd"] == worst_case_usd("gpt-4o") and checks["cost"]["calls"] == 1
    assert summary["scenes"][0]["cost"]["usd"] == worst_case_usd("gpt-4o")


def test_usage_reader__a_usage_too_long_to_read_is_untrusted_not_forgotten() -> None:
    from ancha.runner.gateway.usage import MAX_JSON_BODY, MAX_SSE_LINE, UsageReader

    stream = UsageReader("text/event-stream")
    stream.feed(b'data: {"model":"gpt-4o","choices":[]}\n\n')
    padding = b" " * (MAX_SSE_LINE + 1)
    stream.feed(b'data: {"choices":[],' + padding)  # a line that arrives in parts, too long to keep
    stream.feed(b'"usage":{"prompt_tokens":10,"completion_tokens":5}}\n\n')
    assert "over" in str(stream.finish().untrusted)
    body = UsageReader("application/json")
    body.feed(b'{"usage":{"prompt_tokens":10},"pad":"' + b"x" * MAX_JSON_BODY + b'"}')
    assert "too large" in str(body.finish().untrusted)
    plain = UsageReader("application/octet-stream")  # a file's bytes hold no usage
    plain.feed(b"x" * (MAX_JSON_BODY + 1))
    assert plain.finish().untrusted is None
