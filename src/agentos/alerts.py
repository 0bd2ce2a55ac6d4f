"""Alerts on a check's production pass rate.

A rule watches one check of one workflow over its newest `window` production runs
(when the workflow declares environments, the runs that ran in production on the version
released there; every run otherwise) and compares that check's pass rate with what the released version's
latest completed evaluation showed for it. A one-sided binomial test (the window's passes
out of its evaluated runs, against the evaluation's rate) under `alpha` fires the rule;
it resolves once the window's rate is back at the evaluation's. Only the change of state
notifies, and the change is a conditional UPDATE, so two processes watching the same
database page once.

The evaluation runs off the request path: `AlertWatcher`, a thread of the API process,
looks at the rules whose workflow has a run newer than the one last looked at.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx
from scipy.stats import binomtest
from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from agentos.db import Database
from agentos.deployments import pinned_version
from agentos.ids import new_id
from agentos.models import AlertRule, Run, Workflow
from agentos.periodic import Periodic
from agentos.releases import latest_completed_evaluation
from agentos.timestamps import utcnow

log = logging.getLogger(__name__)

PRODUCTION = "production"
PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"


def create_rule(session: Session, workspace_id: str, workflow: Workflow, check: str, window: int, alpha: float,
                notify: list[dict[str, Any]]) -> AlertRule:
    rule = AlertRule(id=new_id(), workspace_id=workspace_id, workflow_id=workflow.id, check=check, window=window,
                     alpha=alpha, notify=notify, state="resolved", created_at=utcnow())
    session.add(rule)
    session.flush()
    return rule


@dataclass(frozen=True)
class Verdict:
    pass_rate: float
    baseline: float
    p_value: float
    firing: bool
    runs: int


def judge(passed: int, total: int, baseline: float, alpha: float, firing: bool) -> Verdict | None:
    """Fire when the window's rate is below the baseline at p < alpha; while firing, resolve
    once the rate is back at the baseline. None without evaluated runs."""
    if total == 0:
        return None
    rate = passed / total
    p_value = float(binomtest(passed, total, baseline, alternative="less").pvalue)
    now_firing = rate < baseline if firing else p_value < alpha
    return Verdict(pass_rate=rate, baseline=baseline, p_value=p_value, firing=now_firing, runs=total)


@dataclass(frozen=True)
class Change:
    """A rule that changed state, with what its notifications say."""

    rule: dict[str, Any]
    workflow: str
    verdict: Verdict


def evaluate_rule(session: Session, rule: AlertRule) -> Change | None:
    """Judge the rule on its window; the change of state it made, if any."""
    workflow = session.get(Workflow, rule.workflow_id)
    if workflow is None:
        return None
    version = pinned_version(session, workflow.id, PRODUCTION)
    if workflow.environments and version is None:
        return None
    baseline_version = version if version is not None else workflow.version
    evaluation = latest_completed_evaluation(session, workflow, baseline_version)
    baseline = next((float(c["pass_rate"]) for c in (evaluation.per_check if evaluation else [])
                     if c.get("name") == rule.check), None)
    query = select(Run.id, Run.evals).where(*_production_runs(workflow.id))
    if workflow.environments:
        query = query.where(Run.environment == PRODUCTION, Run.workflow_version == version)
    runs = session.execute(query.order_by(*_NEWEST).limit(rule.window)).tuples().all()
    if not runs or runs[0][0] == rule.last_run_id:
        return None
    rule.last_run_id = runs[0][0]
    if baseline is None:
        return None
    results = [r for _, evals in runs for r in (evals or {}).get("results", [])
               if isinstance(r, dict) and r.get("name") == rule.check]
    verdict = judge(sum(1 for r in results if r.get("passed")), len(results), baseline, rule.alpha,
                    rule.state == "firing")
    if verdict is None:
        return None
    rule.pass_rate, rule.baseline, rule.p_value = verdict.pass_rate, verdict.baseline, verdict.p_value
    session.flush()
    before, after = ("resolved", "firing") if verdict.firing else ("firing", "resolved")
    result: CursorResult[Any] = session.execute(  # type: ignore[assignment]
        update(AlertRule).where(AlertRule.id == rule.id, AlertRule.state == before)
        .values(state=after, changed_at=utcnow())
    )
    changed = result.rowcount
    if not changed:
        return None
    session.refresh(rule)
    return Change(rule=rule.to_dict(), workflow=workflow.name, verdict=verdict)


_NEWEST = (Run.created_at.desc(), Run.id.desc())


def _production_runs(workflow_id: str) -> tuple[Any, ...]:
    """The runs a rule may judge: successful (so scored) runs that are not evaluation items."""
    return Run.workflow_id == workflow_id, Run.status == "success", Run.evaluation_id.is_(None)


def evaluate_workspace_rules(db: Database) -> list[Change]:
    """Judge every rule whose workflow has a run newer than the one it was judged on (read
    first, so a quiet database sees no write); the changes of state (their notifications
    are the caller's)."""
    changes: list[Change] = []
    with db.read() as session:
        ids = []
        for rule_id, workflow_id, last_run_id in session.execute(
                select(AlertRule.id, AlertRule.workflow_id, AlertRule.last_run_id)).tuples():
            newest = session.scalar(select(Run.id).where(*_production_runs(workflow_id)).order_by(*_NEWEST).limit(1))
            if newest is not None and newest != last_run_id:
                ids.append(rule_id)
    for rule_id in ids:
        try:
            with db.write() as session:
                rule = session.get(AlertRule, rule_id)
                change = evaluate_rule(session, rule) if rule is not None else None
        except Exception:
            log.exception("evaluating alert rule %s failed", rule_id)
            continue
        if change is not None:
            changes.append(change)
    return changes


def notify(change: Change, client: httpx.Client) -> None:
    """Send the change to each of the rule's destinations; a failing one does not stop the others."""
    for destination in change.rule["notify"]:
        try:
            url, body = _message(change, destination)
            client.post(url, json=body).raise_for_status()
        except Exception:
            log.exception("alert %s: notifying %s failed", change.rule["id"], destination.get("type"))


def _summary(change: Change) -> str:
    v, rule = change.verdict, change.rule
    if v.firing:
        return (f"{change.workflow}: check {rule['check']!r} passes {v.pass_rate:.0%} of the last {v.runs} production"
                f" runs, below the released version's evaluated {v.baseline:.0%} (p={v.p_value:.2g})")
    return (f"{change.workflow}: check {rule['check']!r} is back at {v.pass_rate:.0%} of the last {v.runs}"
            f" production runs (evaluated {v.baseline:.0%})")


def _message(change: Change, destination: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    rule, v = change.rule, change.verdict
    summary = _summary(change)
    if destination["type"] == "slack":
        return destination["url"], {"text": (":rotating_light: " if v.firing else ":white_check_mark: ") + summary}
    if destination["type"] == "pagerduty":
        event: dict[str, Any] = {"routing_key": destination["routing_key"],
                                 "event_action": "trigger" if v.firing else "resolve",
                                 "dedup_key": f"agentos-alert-{rule['id']}"}
        if v.firing:
            event["payload"] = {"summary": summary[:1024], "source": f"agentos/{change.workflow}",
                                "severity": "critical",
                                "custom_details": {"check": rule["check"], "pass_rate": v.pass_rate,
                                                   "baseline": v.baseline, "p_value": v.p_value, "runs": v.runs}}
        return destination.get("url") or PAGERDUTY_EVENTS_URL, event
    return destination["url"], {"alert": rule["id"], "workflow": change.workflow, "check": rule["check"],
                                "state": rule["state"], "pass_rate": v.pass_rate, "baseline": v.baseline,
                                "p_value": v.p_value, "runs": v.runs, "summary": summary}


class AlertWatcher(Periodic):
    """A thread judging the rules every `interval` seconds and sending the changes."""

    def __init__(self, db: Database, interval: float = 1.0) -> None:
        super().__init__("agentos-alerts", interval, self._judge)
        self._db = db
        self._client = httpx.Client(timeout=10)

    def stop(self) -> None:
        super().stop()
        self._client.close()

    def _judge(self) -> None:
        for change in evaluate_workspace_rules(self._db):
            notify(change, self._client)

