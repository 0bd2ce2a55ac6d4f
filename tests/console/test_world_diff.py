"""The world diff: seed to end, with what was there before set apart from what was added."""

from __future__ import annotations

from ancha.console.world_diff import diff_worlds, read_world


def test_world_diff__sets_apart_changes_to_seeded_objects() -> None:
    seed = {"okta": {"users": [{"id": "u1", "status": "ACTIVE"}, {"id": "u2", "status": "ACTIVE"}]},
            "slack": {"messages": [{"ts": "1.0", "text": "hi"}]}}
    end = {"okta": {"users": [{"id": "u1", "status": "DEPROVISIONED"}]},
           "slack": {"messages": [{"ts": "1.0", "text": "hi"}, {"ts": "2.0", "text": "done", "actor": "agent"}]}}
    changes, total = diff_worlds(seed, end)
    by_path = {c.path: c for c in changes}
    assert total == 3
    assert by_path["okta.users[id=u1].status"].kind == "changed"
    assert by_path["okta.users[id=u1].status"].before == '"ACTIVE"'
    assert by_path["okta.users[id=u2]"].kind == "removed" and by_path["okta.users[id=u2]"].touched_seed
    added = by_path["slack.messages[ts=2.0]"]
    assert added.kind == "added" and not added.touched_seed and '"actor": "agent"' in (added.after or "")


def test_world_diff__ignores_the_server_address_in_tool_urls() -> None:
    seed = read_world(b'{"github": {"repos": [{"id": 1, "url": "http://127.0.0.1:1234/envs/env_abc/github/repos/x"}]}}')
    end = read_world(b'{"github": {"repos": [{"id": 1, "url": "http://127.0.0.1:999/envs/env_def/github/repos/x"}]}}')
    assert diff_worlds(seed, end) == ([], 0)
