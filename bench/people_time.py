"""Simulated-to-real time ratio of a people scene, with an agent that waits on the feed.

    .venv/bin/python bench/people_time.py [--trials 8]

The reference's laura/ben/mike scene (Laura in #support, Ben the engineer in #eng, Mike
deciding severity once he knows the root cause), a 2-hour ``clock.limit``, people who
answer after 2 to 10 simulated minutes (Mike away for 20 of them), and Laura chasing
every 20 minutes. The agent is slack_sdk plus an httpx long-poll on the event feed: it
asks, waits on the feed, and answers every event with another question until the trial
times out at the limit. Trials run one at a time, then all at once (one thread each) on
one in-process server. Prints a markdown table: real seconds per trial, simulated
seconds, the ratio, events the agent handled, wall time. Target: a 2-hour trial in
under 1 s of real time (at once: wall time per trial, as every agent, its clients and the
server share one Python process). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

import httpx
from slack_sdk import WebClient

from ancha.server.embedded import EmbeddedServer

LIMIT_S = 7200.0
TARGET_REAL_S = 1.0


def scene() -> dict[str, Any]:
    def person(name: str, slack: str, listens: list[str], **extra: Any) -> dict[str, Any]:
        return {"name": name, "accounts": {"slack": slack}, "listens": listens, "replies_after": [120, 600], **extra}

    return {
        "name": "bench-people-time",
        "clock": {"start": "2026-03-02T09:00:00Z", "limit": LIMIT_S, "speed": 1},
        "world": {"slack": {
            "users": [{"ref": "slack_laura", "name": "laura"}, {"ref": "slack_ben", "name": "ben"},
                      {"ref": "slack_mike", "name": "mike"}],
            "channels": [
                {"ref": "slack_support", "name": "support", "members": ["slack_bot", "slack_laura", "slack_ben"]},
                {"ref": "slack_eng", "name": "eng", "members": ["slack_bot", "slack_ben", "slack_mike"]},
            ],
            "messages": [{"ref": "slack_question", "channel": "slack_support", "from": "slack_laura",
                          "text": "CSV exports stopped working for us"}],
        }},
        "people": {
            "laura": person("Laura Diaz", "slack_laura", ["slack_support"], facts={
                "workspace": {"text": "We're on acme-prod.", "asked_by": ["workspace"], "match": ["acme-prod"]},
                "beta_on": {"text": "The exports beta is on.", "asked_by": ["beta"], "match": ["beta is on"]}}),
            "ben": person("Ben Okafor", "slack_ben", ["slack_eng"], facts={
                "root_cause": {"text": "The beta writer drops rows.", "asked_by": ["root cause"],
                               "match": ["drops rows"]}}),
            "mike": person("Mike Chen", "slack_mike", ["slack_eng"], away=[{"from": 1800, "to": 3000}], decisions={
                "severity": {"asked_by": ["severity"], "options": ["p1", "p2"], "chooses": "p1",
                             "needs": ["ben.root_cause"], "text": "Let's treat it as {option}.",
                             "pending": "I can't call it until I know the root cause."}}),
        },
        "world_rules": {"events": [
            {"at": 1200 * i, "do": [{"slack.message": {"channel": "slack_support", "from": "slack_laura",
                                                       "text": f"Any news? ({i})", "thread_of": "slack_question"}}]}
            for i in range(1, 6)]},
    }


QUESTIONS = [("support", "Which workspace are you on?"), ("eng", "What is the root cause?"),
             ("eng", "Mike, what severity is this?"), ("support", "Is the exports beta on for you?")]


def run_trial(base: str, trial: int) -> dict[str, float]:
    with httpx.Client(base_url=base, timeout=60) as http:
        context = http.post("/envs", json={"scene": scene(), "trial": trial, "agent": {"idle": 600}}).json()
        slack = context["tools"]["slack"]
        client = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
        channels = {c["name"]: c["id"] for c in client.conversations_list()["channels"]}
        feed, headers = context["events"]["url"], {"authorization": f"Bearer {context['events']['token']}"}
        began = time.perf_counter()
        cursor, handled = "0", 0
        client.chat_postMessage(channel=channels["support"], text=QUESTIONS[0][1])
        while True:
            body = http.get(feed, params={"after": cursor, "wait": "30s"}, headers=headers).json()
            cursor = body["cursor"]
            if not body["events"]:
                break
            for _ in body["events"]:
                handled += 1
                where, text = QUESTIONS[handled % len(QUESTIONS)]
                client.chat_postMessage(channel=channels[where], text=text)
        real = time.perf_counter() - began
        status = http.get(f"/envs/{context['env_id']}").json()
        records = http.get(f"/envs/{context['env_id']}/records").text.count("\n")
        http.delete(f"/envs/{context['env_id']}")
    return {"real_s": real, "sim_s": float(status["clock"]["elapsed_s"]), "events": handled,
            "records": records, "ended": status["status"] == "timed_out"}


def row(label: str, results: list[dict[str, float]], wall: float) -> str:
    """At once, trials share one process (server, agents and their clients): the target is
    then on wall time per trial (throughput), not on each trial's own span."""
    real = statistics.median(r["real_s"] for r in results)
    sim = statistics.median(r["sim_s"] for r in results)
    events = statistics.median(r["events"] for r in results)
    ok = all(r["ended"] for r in results) and min(real, wall / len(results)) < TARGET_REAL_S
    return (f"| {label} | {len(results)} | {real:.3f} | {sim:,.0f} | {sim / real:,.0f}x | {events:.0f} | "
            f"{wall:.2f} | {'met' if ok else 'MISSED'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    args = parser.parse_args()
    with EmbeddedServer() as server:
        run_trial(server.url, 0)  # warm-up
        began = time.perf_counter()
        sequential = [run_trial(server.url, t) for t in range(1, args.trials + 1)]
        sequential_wall = time.perf_counter() - began
        parallel: list[dict[str, float]] = []
        lock = threading.Lock()

        def one(trial: int) -> None:
            result = run_trial(server.url, trial)
            with lock:
                parallel.append(result)

        threads = [threading.Thread(target=one, args=(t,)) for t in range(1, args.trials + 1)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        parallel_wall = time.perf_counter() - began
    print(f"2-hour people scene, agent waiting on the feed; target: under {TARGET_REAL_S:g}s real per trial\n")
    print("| mode | trials | real s / trial (median) | simulated s | ratio | events handled | wall s | target |")
    print("|---|---|---|---|---|---|---|---|")
    print(row("one at a time", sequential, sequential_wall))
    print(row(f"{args.trials} at once", parallel, parallel_wall))


if __name__ == "__main__":
    main()
