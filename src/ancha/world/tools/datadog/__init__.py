"""Datadog replica: monitors, downtimes, events, logs, metrics and dashboards behind
Datadog's own HTTP API (``datadog-api-client`` works with ``Configuration(host=<url>)``).

Stable interface (the world and scene files rely on it):

- seed ``world.datadog``: monitors, downtimes, dashboards, events, logs / logs_file, metrics
  (``scene_file.py``); ref kinds monitor, dashboard, event, log;
- checks ``datadog.monitor`` (``is`` beside it) and ``datadog.downtime`` (``checks.py``);
- actions ``datadog.monitor``, ``datadog.event``, ``datadog.log``; effects
  ``datadog.monitor``, ``datadog.metric``, ``datadog.log`` (``actions.py``);
- domain events (``events.py``); feed events ``monitor.alert|warn|no_data|recovered``
  with Datadog's webhook body (``delivery.py``);
- credentials ``api_key`` (32 hex), ``app_key`` (40 hex), ``token`` (= api_key),
  ``webhook_token``, ``signing_secret``.
"""
