"""The scheduler's order, the clock's pause and jumps, and the timekeeper's rules, driven
in-process (no event loop: ``Timekeeper.settle`` does what the server's ticker does)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.clock import SimClock
from ancha.world.kernel.scheduler import Scheduler


def test_scheduler__earliest_first_and_ties_in_scheduling_order():
    scheduler = Scheduler()
    ran: list[str] = []
    for at, label in ((30.0, "c"), (10.0, "a1"), (10.0, "a2"), (20.0, "b")):
        scheduler.schedule(at, lambda label=label: ran.append(label), label)
    assert len(scheduler) == 4 and scheduler.next_at() == 10.0
    while (item := scheduler.pop_due(25.0)) is not None:
        item.callback()
    assert ran == ["a1", "a2", "b"] and len(scheduler) == 1 and scheduler.next_at() == 30.0


def test_scheduler__cancelled_items_never_run_and_do_not_count():
    scheduler = Scheduler()
    first = scheduler.schedule(5.0, lambda: None, "first")
    scheduler.schedule(6.0, lambda: None, "second")
    scheduler.cancel(first)
    assert len(scheduler) == 1 and scheduler.next_at() == 6.0
    assert scheduler.labels() == [(6.0, "second")]


def test_scheduler__tells_its_owner_when_something_is_scheduled():
    scheduler = Scheduler()
    woken: list[int] = []
    scheduler.on_change = lambda: woken.append(1)
    scheduler.schedule(1.0, lambda: None)
    assert woken == [1]


def test_clock__paused_moves_only_by_jumps_and_never_backwards():
    clock = SimClock(datetime(2026, 1, 5, 9, tzinfo=UTC), speed=1000)
    clock.pause()
    before = clock.now()
    time.sleep(0.01)
    assert clock.now() - before < 0.001, "paused: only the one-tick steps between readings"
    clock.advance_to(clock.start + 600)
    assert clock.now() == clock.start + 600
    clock.advance_to(clock.start + 60)
    assert clock.peek() >= clock.start + 600
    clock.resume()
    time.sleep(0.01)
    assert clock.now() > clock.start + 600 + 5, "flowing again at speed from where it stood"


def test_clock__readings_are_strictly_increasing():
    clock = SimClock(datetime(2026, 1, 5, 9, tzinfo=UTC), speed=0.0)
    readings = [clock.now() for _ in range(1000)]
    assert all(b > a for a, b in zip(readings, readings[1:], strict=False))


SCENE = {
    "name": "timekeeping",
    "clock": {"start": "2026-03-02T09:00:00Z", "limit": 3600},
    "world": {"slack": {"users": [{"ref": "slack_laura", "name": "laura"}],
                        "channels": [{"ref": "support", "name": "support", "members": ["slack_bot", "slack_laura"]}]}},
}


def _env(**agent: object) -> Environment:
    return Environment("env_time", Scene.model_validate(SCENE), 1, dict(agent))


def test_timekeeper__a_waiting_agent_jumps_through_due_items_in_order_then_goes_idle():
    env = _env(idle=30)
    ran: list[float] = []
    for offset in (300.0, 120.0, 900.0):
        env.schedule(env.clock.start + offset, lambda: ran.append(env.record("tick").at - env.clock.start), "x")
    assert env.pending() == 3 and env.status_dict()["pending"] == 3
    env.waiting_external = True
    assert env.clock.paused and env.agent_waiting
    env.timekeeper.settle()
    assert [round(t, 3) for t in ran] == [120.0, 300.0, 900.0]
    assert env.status == "idle" and env.pending() == 0
    assert round(env.clock.peek() - env.clock.start, 3) == 930.0, "idle counted from the last activity"


def test_timekeeper__items_past_the_limit_do_not_run_and_the_trial_times_out():
    env = _env()
    ran: list[str] = []
    env.schedule(env.clock.start + 4000, lambda: ran.append("late"), "late")
    env.waiting_external = True
    env.timekeeper.settle()
    assert ran == [] and env.status == "timed_out"
    assert env.clock.peek() == env.deadline


def test_timekeeper__a_working_agent_is_not_ended_for_quiet():
    env = _env(idle=0.001)
    time.sleep(0.01)
    env.timekeeper.settle()
    assert env.status == "running" and not env.agent_waiting and not env.clock.paused


def test_timekeeper__a_failing_item_is_recorded_and_the_rest_still_run():
    env = _env()
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("boom")

    env.schedule(env.clock.start + 10, broken, "broken")
    env.schedule(env.clock.start + 20, lambda: ran.append("after"), "after")
    env.waiting_external = True
    env.timekeeper.settle()
    assert ran == ["after"]
    errors = env.records.of_kind("engine_error")
    assert [(r.data["label"], r.data["error"]) for r in errors] == [("broken", "RuntimeError: boom")]


def test_agent_settings__idle_as_seconds_or_duration():
    assert _env().idle == 10.0
    assert _env(idle="1m30s").idle == 90.0
    assert _env(idle=2).idle == 2.0
