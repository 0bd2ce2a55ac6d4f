"""Check bodies as the checks reference writes them: ``github.permission``'s ``is`` beside the
kind (``{ repo, user }, then is``) or inside it, each sibling field checked by the kind it is
written beside (a problem names that kind); ``datadog.downtime`` needs ``monitor``,
``remaining_gte`` and ``duration_lte``; ``"DELETE *"`` is a trace pattern."""

from __future__ import annotations

import json
from pathlib import Path

from scene_files import messages, problems_of, scene_of

from ancha.checks.trace import evaluate_trace
from ancha.scene.model import TraceCheck
from ancha.world.kernel.trace import Trace

WORLD = """\
world:
  github:
    users: [{ ref: github_ben, login: ben }]
    repos:
      - { ref: github_orders, name: acme/orders, permissions: { $github_ben: write } }
  datadog:
    monitors:
      - { ref: datadog_orders, name: orders, query: "avg(last_5m):avg:orders.latency{*} > 2" }
checks:
"""


def _checks(body: str) -> str:
    return WORLD + body


def test_github_permission__is_beside_the_kind_or_inside_it(tmp_path: Path) -> None:
    scene = scene_of(
        tmp_path,
        _checks(
            "  - { id: beside, state: { github.permission: { repo: $github_orders, user: $github_ben }, is: write } }\n"
            "  - { id: inside, state: { github.permission: { repo: $github_orders, user: $github_ben, is: write } } }\n"
            "  - id: milestone\n"
            "    before: [{ called: '*' }, { github.permission: { repo: $github_orders, user: $github_ben }, is: admin }]\n"
        ),
    )
    beside, inside, milestone = scene.checks
    expected = {"github.permission": {"repo": "github_orders", "user": "github_ben", "is": "write"}}
    assert beside.state == inside.state == expected
    assert milestone.before is not None and milestone.before[1].state == {
        "github.permission": {"repo": "github_orders", "user": "github_ben", "is": "admin"}
    }


def test_sibling_fields__a_problem_names_the_kind_they_are_beside(tmp_path: Path) -> None:
    found = problems_of(
        tmp_path,
        _checks(
            "  - { id: a, state: { github.permission: { repo: $github_orders, user: $github_ben }, is: OK } }\n"
            "  - { id: b, state: { datadog.monitor: $datadog_orders, is: write } }\n"
            "  - { id: c, state: { github.permission: { repo: $github_orders, user: $github_ben } } }\n"
            "  - { id: d, state: { github.permission: { repo: $github_orders, user: $github_ben, is: read }, is: read } }\n"
            "  - { id: e, state: { github.pull: { pull: $github_orders, merged: true }, is: OK } }\n"
        ),
    )
    assert messages(found) == [
        "checks[0].state.is: for github.permission, expected one of read, write, admin, none, got 'OK'",
        "checks[1].state.is: for datadog.monitor, expected one of OK, Alert, got 'write'",
        "checks[2].state: github.permission needs is: read, write, admin or none beside it",
        "checks[3].state.github.permission.is: github.permission takes is once: beside github.permission or "
        "inside it, not both",
        "checks[4].state.is: only applies with github.permission, datadog.monitor",
    ]


def test_datadog_downtime__monitor_remaining_gte_and_duration_lte_are_required(tmp_path: Path) -> None:
    found = problems_of(
        tmp_path,
        _checks(
            "  - { id: a, state: { datadog.downtime: { monitor: $datadog_orders } } }\n"
            "  - { id: b, state: { datadog.downtime: { monitor: $datadog_orders, remaining_gte: 1m } } }\n"
            "  - { id: c, state: { datadog.downtime: { remaining_gte: 1m, duration_lte: 10m } } }\n"
        ),
    )
    assert messages(found) == [
        "checks[0].state.datadog.downtime.remaining_gte: missing required field",
        "checks[0].state.datadog.downtime.duration_lte: missing required field",
        "checks[1].state.datadog.downtime.duration_lte: missing required field",
        "checks[2].state.datadog.downtime.monitor: missing required field",
    ]
    scene = scene_of(
        tmp_path / "ok",
        _checks(
            "  - id: muted\n"
            "    state: { datadog.downtime: { monitor: $datadog_orders, remaining_gte: 1m, duration_lte: 10m } }\n"
            "  - id: safe\n"
            "    state: { datadog.downtime: { monitor: $datadog_orders, remaining_gte: 1m, duration_lte: 10m,\n"
            "                                 reject_active_unsafe: true } }\n"
        ),
    )
    assert [c.state for c in scene.checks] == [
        {
            "datadog.downtime": {
                "monitor": "datadog_orders",
                "remaining_gte": 60.0,
                "duration_lte": 600.0,
                "reject_active_unsafe": False,
            }
        },
        {
            "datadog.downtime": {
                "monitor": "datadog_orders",
                "remaining_gte": 60.0,
                "duration_lte": 600.0,
                "reject_active_unsafe": True,
            }
        },
    ]


def test_trace_pattern__a_method_and_a_path_of_star(tmp_path: Path) -> None:
    scene = scene_of(
        tmp_path,
        _checks(
            "  - { id: no_deletes, trace: { not_called: ['DELETE *', 'DELETE /*'] } }\n"
            "  - { id: anything, trace: { called: '* *' } }\n"
            "  - { id: first, before: [{ called: 'GET *' }, { called: 'DELETE *' }] }\n"
        ),
    )
    no_deletes = scene.checks[0].trace
    assert no_deletes is not None and no_deletes.not_called == ["DELETE *", "DELETE /*"]
    trace = Trace()
    for i, (method, path) in enumerate(
        [("GET", "/repos/acme/orders"), ("DELETE", "/repos/acme/orders/labels/p1")]
    ):
        trace.append(
            at=1767600000.0 + i,
            actor="agent",
            tool="github",
            method=method,
            path=path,
            query="",
            status=204,
            request=b"",
            response=json.dumps({}).encode(),
            worked=True,
            coverage_gap=False,
        )
    assert not evaluate_trace(TraceCheck(not_called=["DELETE *"]), trace).passed
    assert evaluate_trace(TraceCheck(called=["DELETE *"]), trace).evidence == [2]
    assert evaluate_trace(TraceCheck(not_called=["PUT *"]), trace).passed
