"""The model gateway's fixtures, shared by its test modules: a stand-in upstream speaking the
providers' protocols, a gateway in front of it for the three hosts, and one trial's opening."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from model_standins import HOSTS, ModelStandIn  # noqa: E402

from ancha.results.run_folder import TrialFolder  # noqa: E402
from ancha.runner.gateway import GatewayTrial, ModelGateway  # noqa: E402


@pytest.fixture(scope="module")
def standin() -> Iterator[ModelStandIn]:
    with ModelStandIn() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(standin: ModelStandIn) -> Iterator[ModelGateway]:
    with ModelGateway(HOSTS, upstreams={host: standin.url for host in HOSTS}) as gw:
        yield gw


@pytest.fixture
def trial(gateway: ModelGateway, tmp_path: Path) -> Iterator[GatewayTrial]:
    opened = gateway.open_trial(TrialFolder(tmp_path).create())
    yield opened
    gateway.close_trial(opened)
