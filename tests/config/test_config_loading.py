from __future__ import annotations

from pathlib import Path

from ancha.config import AnchaConfig, ConfigOverrides, load_config
from ancha.world.registry import config_catalog


def test_no_file__defaults(tmp_path: Path) -> None:
    config = load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert config.agent is None
    assert config.scenes == ["scenes/**/scene.yaml"]
    assert config.trials == 5
    assert config.parallel == 2
    assert config.min_pass_rate == 1.0
    assert config.server.url is None
    assert config.judge.model is None
    assert config.root == tmp_path.resolve()
    assert config.source is None


def test_agent_defaults(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: node agent.mjs\n")
    agent = load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog()).agent
    assert agent is not None
    assert (agent.command, agent.cwd, agent.env, agent.pass_env) == ("node agent.mjs", None, {}, [])
    assert (agent.input, agent.slack_transport) == ("command", "feed")
    assert (agent.url, agent.start, agent.ready_url, agent.setup_url) == (None, None, None, None)
    assert (agent.idle, agent.startup_timeout) == (10.0, 30.0)
    execution = agent.execution
    assert (execution.mode, execution.image, execution.preparation) == ("host", None, None)
    assert (execution.files, execution.env, execution.model_hosts) == (["."], [], [])
    assert (execution.cpus, execution.memory_mb, execution.pids) == (1.0, 512, 128)


def test_endpoint_agent__parallel_defaults_to_one(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("agent:\n  url: http://127.0.0.1:9000/events\n")
    assert load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog()).parallel == 1


def test_reference_example__loads(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text(
        "agent:\n  command: node agent.mjs\n  pass_env: [OPENAI_API_KEY]\n  idle: 1m30s\n"
        "  execution:\n    mode: container\n    image: my-agent:local\n    files: [agent.mjs, src]\n"
        "    modelHosts: [openrouter.ai]\n    env: [OPENROUTER_API_KEY]\n    memoryMb: 1024\n"
        "scenes: [scenes/**/scene.yaml]\ntrials: 5\nparallel: 2\nmin_pass_rate: 0.8\n"
        "server: {url: 'http://localhost:8000'}\njudge: {model: openai/gpt-4o-mini}\n")
    config = load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert config.agent is not None
    assert config.agent.idle == 90.0
    assert config.agent.execution.model_hosts == ["openrouter.ai"]
    assert config.agent.execution.memory_mb == 1024
    assert (config.min_pass_rate, config.server.url, config.judge.model) == (
        0.8, "http://localhost:8000", "openai/gpt-4o-mini")


def test_config_flag__paths_stay_relative_to_cwd(tmp_path: Path) -> None:
    elsewhere = tmp_path / "conf"
    elsewhere.mkdir()
    (elsewhere / "x.yaml").write_text("trials: 3\n")
    project = tmp_path / "project"
    project.mkdir()
    config = load_config(elsewhere / "x.yaml", project, ConfigOverrides(), catalog=config_catalog())
    assert config.trials == 3
    assert config.root == project.resolve()
    assert config.source == (elsewhere / "x.yaml").resolve()


def test_empty_file__defaults(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("# nothing yet\n")
    assert load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog()).trials == 5


def test_agent_override__creates_agent(tmp_path: Path) -> None:
    config = load_config(None, tmp_path, ConfigOverrides(agent_command="python -m bot"), catalog=config_catalog())
    assert config.agent is not None and config.agent.command == "python -m bot"


def test_agent_override__replaces_command(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: old\n  pass_env: [A]\n")
    config = load_config(None, tmp_path, ConfigOverrides(agent_command="new"), catalog=config_catalog())
    assert config.agent is not None
    assert (config.agent.command, config.agent.pass_env) == ("new", ["A"])


def test_trials_parallel_and_rate_overrides(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("trials: 5\nparallel: 4\nmin_pass_rate: 0.5\n")
    config = load_config(None, tmp_path, ConfigOverrides(trials=1, parallel=3, min_pass_rate=0.9), catalog=config_catalog())
    assert (config.trials, config.parallel, config.min_pass_rate) == (1, 3, 0.9)


def test_pass_env_override__appends(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: x\n  pass_env: [A]\n")
    config = load_config(None, tmp_path, ConfigOverrides(pass_env=["B", "A"], inherit_env=True), catalog=config_catalog())
    assert config.agent is not None and config.agent.pass_env == ["A", "B"]
    assert config.inherit_env is True


def test_container_and_endpoint_agents__valid_config(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: x\n  execution: {mode: container, image: i:1}\n")
    config = load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert config.agent is not None and config.agent.execution.mode == "container"


def test_config_json_round_trip() -> None:
    config = AnchaConfig.model_validate({"agent": {"command": "x", "idle": "2s"}, "trials": 2})
    again = AnchaConfig.model_validate(config.model_dump(mode="json", by_alias=True))
    assert again.agent == config.agent and again.trials == 2
