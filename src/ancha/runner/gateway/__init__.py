"""The model gateway (``app``), its price table (``prices``), what it reads of an answer
(``usage``) and the trials it records (``trials``). The container runner uses
``ModelGateway.host``/``port`` and ``GatewayTrial.environment()``."""

from __future__ import annotations

from ancha.runner.gateway.app import ModelGateway
from ancha.runner.gateway.trials import GatewayTrial, ModelCall, model_environment

__all__ = ["GatewayTrial", "ModelCall", "ModelGateway", "model_environment"]
