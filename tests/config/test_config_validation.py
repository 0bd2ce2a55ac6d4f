from __future__ import annotations

from pathlib import Path

import pytest

from ancha.config import ConfigInvalid, ConfigOverrides, load_config
from ancha.world.registry import config_catalog


def _problems(tmp_path: Path, text: str, overrides: ConfigOverrides | None = None) -> ConfigInvalid:
    (tmp_path / "ancha.yaml").write_text(text)
    with pytest.raises(ConfigInvalid) as info:
        load_config(None, tmp_path, overrides or ConfigOverrides(), catalog=config_catalog())
    return info.value


def _messages(error: ConfigInvalid) -> list[str]:
    return [f"{p.path}: {p.message}" for p in error.problems]


def _hints(error: ConfigInvalid) -> dict[str, str | None]:
    return {p.path: p.hint for p in error.problems}


def test_reference_invalid_config__exact_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("execution:\n  mode: container\nagent:\n  command: node agent.mjs\n  bogus: 1\ntrials: 0\n")
    with pytest.raises(ConfigInvalid) as info:
        load_config(Path("bad.yaml"), tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert info.value.exit_code == 2
    assert info.value.render() == (
        "error[CONFIG_INVALID]: execution: unknown field\n"
        "  agent.bogus: unknown field\n"
        "  trials: expected a positive integer, got 0\n"
        "hint: execution: did you mean agent.execution? Put it under agent:\n"
        "  agent.bogus: known fields of agent: command, cwd, env, pass_env, input, slack_transport, execution,"
        " url, start, ready_url, setup_url, idle, startup_timeout, log_limit, budget_usd, clock, hostnames, version\n"
        f"  fix the config file: {bad.resolve()}"
    )


def test_every_problem_reported_at_once__five_problems_five_lines(tmp_path: Path) -> None:
    error = _problems(tmp_path, "trials: 0\nparallel: -1\nmin_pass_rate: 1.5\nagent:\n  idle: '10'\n  input: batch\n")
    assert _messages(error) == [
        "trials: expected a positive integer, got 0",
        "parallel: expected a positive integer, got -1",
        "min_pass_rate: expected a number from 0 to 1, got 1.5",
        "agent.idle: expected a duration such as 500ms, 10s or 1m30s, got '10'",
        "agent.input: expected one of command, per_event, got 'batch'",
    ]
    rendered = error.render().splitlines()
    assert rendered[0].startswith("error[CONFIG_INVALID]: trials:")
    assert sum(1 for line in rendered if not line.startswith(("hint:", "  fix"))) == 5


def test_unknown_field__did_you_mean_hint(tmp_path: Path) -> None:
    error = _problems(tmp_path, "trails: 3\n")
    assert _messages(error) == ["trails: unknown field"]
    assert _hints(error)["trails"] == "did you mean trials?"


def test_unknown_nested_field__did_you_mean_full_path(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  comand: x\n")
    assert _hints(error)["agent.comand"] == "did you mean agent.command?"


def test_field_of_nested_section_at_top__put_it_under(tmp_path: Path) -> None:
    error = _problems(tmp_path, "mode: container\n")
    assert _hints(error)["mode"] == "did you mean agent.execution.mode? Put it under agent.execution:"


def test_unknown_top_level_field__lists_known_fields(tmp_path: Path) -> None:
    error = _problems(tmp_path, "zzzz: 1\n")
    assert _hints(error)["zzzz"] == "known fields: agent, scenes, trials, parallel, min_pass_rate, server, judge, ray"


def test_type_errors__read_like_the_reference(tmp_path: Path) -> None:
    error = _problems(tmp_path, (
        "agent:\n  command: x\n  slack_transport: pigeon\n  env: {PORT: 8080}\n  pass_env: [OK, 1BAD]\n"
        "  execution: {cpus: 0, memoryMb: 64, pids: 5000}\nserver: {url: ftp://x}\nscenes: scenes/x.yaml\n"))
    assert _messages(error) == [
        "agent.slack_transport: expected one of feed, http, socket, got 'pigeon'",
        "agent.env.PORT: expected a string, got 8080",
        "agent.pass_env[1]: expected a variable name such as OPENAI_API_KEY, got '1BAD'",
        "agent.execution.cpus: expected a number from 0.1 to 32, got 0",
        "agent.execution.memoryMb: expected an integer from 128 to 65536, got 64",
        "agent.execution.pids: expected an integer from 16 to 4096, got 5000",
        "server.url: expected an http(s) URL, got 'ftp://x'",
        "scenes: expected a list of strings, got 'scenes/x.yaml'",
    ]
    assert _hints(error)["agent.env.PORT"] == 'quote it: "8080"'


def test_yaml_syntax_error__is_a_problem_with_its_line(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  command: [x\ntrials: 2\n")
    assert error.problems[0].message.startswith("not valid YAML")
    assert error.problems[0].line is not None


def test_yaml_syntax_error__names_file_and_line_as_scene_files_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    error = _problems(tmp_path, "agent:\n  command: [x\ntrials: 2\n")
    assert str(error).splitlines()[0].startswith("error[CONFIG_INVALID]: ancha.yaml:3: not valid YAML")


def test_url_with_command__conflict(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  command: x\n  url: http://127.0.0.1/e\n")
    assert "agent.url: conflicts with agent.command" in _messages(error)


def test_start_without_ready_url__required(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  url: http://127.0.0.1/e\n  start: node s.mjs\n")
    assert _messages(error) == ["agent.ready_url: required with agent.start"]


def test_setup_url_with_start__conflict(tmp_path: Path) -> None:
    error = _problems(tmp_path, (
        "agent:\n  url: http://127.0.0.1/e\n  start: s\n  ready_url: http://127.0.0.1/r\n"
        "  setup_url: http://127.0.0.1/s\n"))
    assert _messages(error) == ["agent.setup_url: conflicts with agent.start"]


def test_endpoint_parallel_above_one__needs_start_and_port(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  url: http://127.0.0.1/e\nparallel: 2\n")
    assert _messages(error) == [
        "agent.url: needs {{agent.port}} when parallel is above 1",
        "parallel: above 1 needs agent.start with an endpoint agent",
    ]


def test_endpoint_parallel_with_port_and_start__valid(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text(
        "agent:\n  url: 'http://127.0.0.1:{{agent.port}}/events/{{service}}'\n  start: node s.mjs\n"
        "  ready_url: 'http://127.0.0.1:{{agent.port}}/ready'\nparallel: 2\n")
    config = load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert config.agent is not None and config.agent.kind == "endpoint"
    assert config.parallel == 2


@pytest.mark.parametrize("agent", [
    "agent:\n  command: python3 agent.py\n  env: {T: '{{agent.port}}'}\n",
    "agent:\n  url: http://127.0.0.1:8080/e\n  env: {T: 'port {{ agent.port }}'}\n",
])
def test_agent_port_template__only_for_an_endpoint_agent_ancha_starts(tmp_path: Path, agent: str) -> None:
    error = _problems(tmp_path, agent)
    assert _messages(error) == ["agent.env.T: {{agent.port}} applies only to an endpoint agent that Ancha starts "
                                "(agent.url with agent.start)"]
    assert "a command agent has no port" in str(_hints(error)["agent.env.T"])


def test_endpoint_socket_transport__refused(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  url: http://127.0.0.1/e\n  slack_transport: socket\n")
    assert _messages(error) == ["agent.slack_transport: socket is not available to endpoint agents"]


def test_container_without_image__required(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  command: x\n  execution: {mode: container}\n")
    assert _messages(error) == ["agent.execution.image: required when mode is container"]


def test_container_env_reserved_names__rejected(tmp_path: Path) -> None:
    error = _problems(tmp_path, (
        "agent:\n  command: x\n  execution: {mode: container, image: a:b, env: [PATH, OK, HOME, ANCHA_X]}\n"))
    assert _messages(error) == [
        "agent.execution.env[0]: PATH is a reserved name",
        "agent.execution.env[2]: HOME is a reserved name",
        "agent.execution.env[3]: ANCHA_X is a reserved name",
    ]


def test_unknown_template__hint_lists_available(tmp_path: Path) -> None:
    error = _problems(tmp_path, "agent:\n  command: x\n  env:\n    T: '{{slack.tokn}}'\n    OK: '{{slack.token}}'\n")
    assert _messages(error) == ["agent.env.T: unknown template {{slack.tokn}}"]
    hint = _hints(error)["agent.env.T"] or ""
    assert hint.startswith("available templates: task, trial, env.id, slack.url, slack.token")
    assert "service" not in hint.split(": ", 1)[1].split(", ")


def test_service_template__only_in_agent_url(tmp_path: Path) -> None:
    error = _problems(tmp_path, (
        "agent:\n  url: 'http://127.0.0.1/{{service}}'\n  setup_url: 'http://127.0.0.1/{{service}}'\n"))
    assert _messages(error) == ["agent.setup_url: unknown template {{service}}"]


def test_min_pass_rate_override_out_of_range__config_invalid(tmp_path: Path) -> None:
    error = _problems(tmp_path, "trials: 1\n", ConfigOverrides(min_pass_rate=1.5, trials=0))
    assert _messages(error) == ["-n: expected a positive integer, got 0",
                                "--min-pass-rate: expected a number from 0 to 1, got 1.5"]
    assert error.render().endswith("fix the command-line options")


def test_missing_config_file__error(tmp_path: Path) -> None:
    with pytest.raises(ConfigInvalid) as info:
        load_config(Path("nope.yaml"), tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert info.value.problems[0].path == "--config"
    assert "no such file" in info.value.render()
