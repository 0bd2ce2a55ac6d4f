"""Evaluations: a dataset run through a workflow version, or results reported from outside.

Rates on an evaluation are fractions from 0 to 1 (the dashboard's are percents):
`check_pass_rate` is checks passed over checks evaluated across the evaluation's items
(a failed run evaluates no checks), `success_rate` is items that succeeded over items.
"""

from __future__ import annotations

import json
import logging
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from agentos.db import Database
from agentos.engine.runner import Runner, WorkflowSnapshot
from agentos.errors import NotFound, Unprocessable
from agentos.ids import new_id
from agentos.models import Evaluation
from agentos.scorers import Grader, score_item, summarize
from agentos.timestamps import utcnow

log = logging.getLogger("agentos.evaluations")

MAX_ITEMS = 10_000
PARALLEL_ITEMS = 8


def find_evaluation(session: Session, workspace_id: str, evaluation_id: str) -> Evaluation:
    evaluation = session.scalar(
        select(Evaluation).where(Evaluation.workspace_id == workspace_id, Evaluation.id == evaluation_id)
    )
    if evaluation is None:
        raise NotFound(f"Evaluation '{evaluation_id}' not found")
    return evaluation


def validate_dataset(dataset: Any, what: str = "evaluation", field: str = "dataset") -> list[dict[str, Any]]:
    """Dataset items as {item, input, expected?} (`item` defaults to the input as JSON), or 422
    naming every problem; `what` and `field` name the body being checked (a stored dataset's
    items use these rules too, see agentos.datasets)."""
    if not isinstance(dataset, list) or not dataset:
        raise Unprocessable(f"Invalid {what}: '{field}' must be a non-empty list of {{\"input\": {{...}}}}")
    if len(dataset) > MAX_ITEMS:
        raise Unprocessable(f"Invalid {what}: at most {MAX_ITEMS} dataset items")
    problems = []
    for i, entry in enumerate(dataset, start=1):
        if not isinstance(entry, dict):
            problems.append(f"item {i}: must be an object with 'input'")
            continue
        problems.extend(f"item {i}: {p}" for p in _unknown_fields(entry, DATASET_FIELDS))
        if "input" not in entry:
            problems.append(f"item {i}: 'input' is required (an object)")
        elif not isinstance(entry["input"], dict):
            problems.append(f"item {i}: 'input' must be an object")
        if "item" in entry and not isinstance(entry["item"], str):
            problems.append(f"item {i}: 'item' must be a string")
    if problems:
        raise Unprocessable(f"Invalid {what}: " + "; ".join(problems))
    return [
        {"item": e.get("item") or _label(e["input"]), "input": e["input"]}
        | ({"expected": e["expected"]} if "expected" in e else {})
        for e in dataset
    ]


DATASET_FIELDS = ("input", "item", "expected")
RESULT_FIELDS = ("item", "status", "checks", "cost_usd", "duration_ms")
RESULT_CHECK_FIELDS = ("name", "passed")


def _unknown_fields(entry: dict[str, Any], known: tuple[str, ...], where: str = "") -> list[str]:
    """"unknown field 'x'" for each key not in ``known`` (a typo is refused, never dropped)."""
    return [f"{where}unknown field {key!r} (the fields are {', '.join(known)})"
            for key in entry if key not in known]


def validate_results(results: Any) -> list[dict[str, Any]]:
    if not isinstance(results, list) or not results:
        raise Unprocessable("Invalid evaluation: 'results' must be a non-empty list")
    if len(results) > MAX_ITEMS:
        raise Unprocessable(f"Invalid evaluation: at most {MAX_ITEMS} results")
    problems: list[str] = []
    items: list[dict[str, Any]] = []
    for i, entry in enumerate(results, start=1):
        where = f"result {i}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object")
            continue
        problems.extend(f"{where}: {p}" for p in _unknown_fields(entry, RESULT_FIELDS))
        if not isinstance(entry.get("item"), str) or not entry["item"]:
            problems.append(f"{where}: 'item' is required (a string)")
        if entry.get("status") not in ("success", "failed"):
            problems.append(f"{where}: 'status' must be 'success' or 'failed'")
        checks = entry.get("checks", [])
        if not isinstance(checks, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("passed"), bool)
            for c in checks
        ):
            problems.append(f"{where}: 'checks' must be a list of {{\"name\": str, \"passed\": bool}}")
            checks = []
        for n, check in enumerate(checks, start=1):
            problems.extend(f"{where}: {p}" for p in _unknown_fields(check, RESULT_CHECK_FIELDS, f"check {n}: "))
        cost = entry.get("cost_usd")
        if cost is not None and not _is_number(cost):
            problems.append(f"{where}: 'cost_usd' must be a number")
        duration = entry.get("duration_ms")
        if duration is not None and not _is_number(duration):
            problems.append(f"{where}: 'duration_ms' must be a number")
        items.append(
            {
                "index": i - 1,
                "item": entry.get("item"),
                "status": entry.get("status"),
                "run_id": None,
                "checks": [{"name": c["name"], "passed": c["passed"]} for c in checks],
                "cost_usd": cost,
                "duration_ms": duration,
                "error": None,
            }
        )
    if problems:
        raise Unprocessable("Invalid evaluation: " + "; ".join(problems))
    return items


def new_evaluation(
    workflow: WorkflowSnapshot, name: Any, source: str, items_total: int, owner_id: str | None
) -> Evaluation:
    if not isinstance(name, str) or not name.strip():
        raise Unprocessable("Invalid evaluation: 'name' is required")
    return Evaluation(
        id=new_id(),
        workspace_id=workflow.workspace_id,
        workflow_id=workflow.id,
        workflow_version=workflow.version,
        name=name,
        source=source,
        status="running",
        error=None,
        items_total=items_total,
        runs_succeeded=0,
        checks_passed=0,
        checks_total=0,
        cost_usd=0.0,
        per_check=[],
        items=[],
        owner_id=owner_id,
        created_at=utcnow(),
        completed_at=None,
        scores=None,
    )


def complete(
    evaluation: Evaluation, items: list[dict[str, Any]], scorers: list[dict[str, Any]] | None = None
) -> None:
    """Fill in the summary from per-item results and mark the evaluation completed; with
    scorers, `scores` too (and what grading models cost counts in `cost_usd`)."""
    per_check: dict[str, list[int]] = {}
    for item in items:
        for check in item["checks"]:
            tally = per_check.setdefault(check["name"], [0, 0])
            tally[0] += 1 if check["passed"] else 0
            tally[1] += 1
    evaluation.items = items
    evaluation.runs_succeeded = sum(1 for item in items if item["status"] == "success")
    evaluation.checks_passed = sum(t[0] for t in per_check.values())
    evaluation.checks_total = sum(t[1] for t in per_check.values())
    evaluation.cost_usd = round(
        sum(item.get("cost_usd") or 0.0 for item in items)
        + sum(s.get("cost_usd", 0.0) for item in items for s in item.get("scores", [])),
        8,
    )
    if scorers:
        evaluation.scores = summarize(scorers, items)
    evaluation.per_check = [
        {"name": name, "passed": p, "total": t, "pass_rate": round(p / t, 6)} for name, (p, t) in per_check.items()
    ]
    evaluation.status = "completed"
    evaluation.completed_at = utcnow()


def run_dataset(
    db: Database,
    runner: Runner,
    workflow: WorkflowSnapshot,
    evaluation: Evaluation,
    dataset: list[dict[str, Any]],
    scorers: list[dict[str, Any]] | None = None,
) -> Evaluation:
    """Run the workflow once per item (a few at a time), score each item's final state with
    the scorers (``agentos.scorers``), and complete the evaluation."""
    grader: Grader | None = None

    def one(index: int) -> dict[str, Any]:
        entry = dataset[index]
        run = runner.start(workflow, entry["input"], wait=True, evaluation_id=evaluation.id)
        evals = run["evals"] or {"results": []}
        scored = {"scores": score_item(scorers, run["state"] or {}, entry, grader)} if scorers else {}
        return {
            "index": index,
            "item": entry["item"],
            "status": run["status"],
            "run_id": run["id"],
            "checks": [{"name": r["name"], "passed": bool(r["passed"])} for r in evals["results"]],
            "cost_usd": run["cost_usd"],
            "duration_ms": run["duration_ms"],
            "error": run["error"],
        } | scored

    try:
        if scorers and any(s["type"] == "rubric" for s in scorers):
            grader = Grader(db, runner.providers, workflow.workspace_id)
        with ThreadPoolExecutor(max_workers=min(PARALLEL_ITEMS, len(dataset))) as pool:
            items = list(pool.map(one, range(len(dataset))))
        complete(evaluation, items, scorers)
    except Exception as exc:
        log.exception("evaluation %s failed", evaluation.id)
        evaluation.status, evaluation.error, evaluation.completed_at = "failed", str(exc), utcnow()
    with db.write() as session:
        session.execute(
            update(Evaluation)
            .where(Evaluation.id == evaluation.id)
            .values(
                status=evaluation.status,
                error=evaluation.error,
                items=evaluation.items,
                runs_succeeded=evaluation.runs_succeeded,
                checks_passed=evaluation.checks_passed,
                checks_total=evaluation.checks_total,
                cost_usd=evaluation.cost_usd,
                per_check=evaluation.per_check,
                scores=evaluation.scores,
                completed_at=evaluation.completed_at,
            )
        )
    return evaluation


def compare(base: Evaluation, candidate: Evaluation) -> dict[str, Any]:
    """Item by item (matched on `item`, in order among equal ones): checks that regressed
    (passed in `base`, not in `candidate`) and improved (the reverse). Both must be
    evaluations of one workflow: across two, "0 regressions" would mean nothing."""
    if base.workflow_id != candidate.workflow_id:
        raise Unprocessable(f"Cannot compare evaluation {candidate.id} with {base.id}: they evaluate two different"
                            f" workflows ({candidate.workflow_id} and {base.workflow_id}); compare evaluations of"
                            " one workflow, for example two versions of it")
    pending: dict[str, list[dict[str, Any]]] = {}
    for item in candidate.items:
        pending.setdefault(item["item"], []).append(item)
    rows = []
    only_in_base = []
    regressions = improvements = 0
    for old in base.items:
        matches = pending.get(old["item"])
        if not matches:
            only_in_base.append(old["item"])
            continue
        new = matches.pop(0)
        before, after = _outcomes(old), _outcomes(new)
        regressed = [n for n, ok in before.items() if ok and after.get(n, _absent(new)) is False]
        improved = [n for n, ok in after.items() if ok and before.get(n, _absent(old)) is False]
        regressions += len(regressed)
        improvements += len(improved)
        rows.append(
            {
                "item": old["item"],
                "base_status": old["status"],
                "candidate_status": new["status"],
                "regressed": regressed,
                "improved": improved,
            }
        )
    only_in_candidate = [item["item"] for rest in pending.values() for item in rest]
    base_rates = {c["name"]: c["pass_rate"] for c in base.per_check}
    cand_rates = {c["name"]: c["pass_rate"] for c in candidate.per_check}
    return {
        "base": _summary(base),
        "candidate": _summary(candidate),
        "check_pass_rate_delta": _delta(base.check_pass_rate, candidate.check_pass_rate),
        "success_rate_delta": _delta(base.success_rate, candidate.success_rate),
        "regressions": regressions,
        "improvements": improvements,
        "per_check": [
            {
                "name": name,
                "base_pass_rate": base_rates.get(name),
                "candidate_pass_rate": cand_rates.get(name),
                "delta": _delta(base_rates.get(name), cand_rates.get(name)),
            }
            for name in dict.fromkeys([*base_rates, *cand_rates])
        ],
        "items": rows,
        "only_in_base": only_in_base,
        "only_in_candidate": only_in_candidate,
    }


def _outcomes(item: dict[str, Any]) -> dict[str, bool]:
    return {c["name"]: bool(c["passed"]) for c in item["checks"]}


def _absent(item: dict[str, Any]) -> bool | None:
    # A check missing from an item whose run failed did not pass; from a successful one, it
    # was not part of that version, which is neither a regression nor an improvement.
    return False if item["status"] == "failed" else None


def _summary(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "id": evaluation.id,
        "name": evaluation.name,
        "workflow_id": evaluation.workflow_id,
        "workflow_version": evaluation.workflow_version,
        "check_pass_rate": evaluation.check_pass_rate,
        "success_rate": evaluation.success_rate,
    }


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(b - a, 6)


def _label(input: dict[str, Any]) -> str:
    return json.dumps(input, sort_keys=True, separators=(",", ":"))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)

