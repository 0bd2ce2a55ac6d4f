"""Evaluations: run a dataset through a version (the current one unless named), or record
reported results of one; read, list and compare them. Rates are fractions 0..1 (see
agentos.evaluations)."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from sqlalchemy import select
from starlette.responses import Response

from agentos import crud, datasets
from agentos import evaluations as evals
from agentos.api.bodies import EvaluationCreate
from agentos.api.services import Services, respond, services, workspace
from agentos.deployments import version_snapshot
from agentos.errors import Unprocessable
from agentos.models import Evaluation
from agentos.scorers import validate_scorers

router = APIRouter()


@router.post("/api/workflows/{id_or_name}/evaluations", status_code=201)
def create_evaluation(
    id_or_name: str, body: EvaluationCreate, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    """`{name, dataset: [{input, item?, expected?}...], scorers?, wait?}` runs the version once
    per item (and scores each item's final state with the scorers); `dataset` may instead name
    a stored dataset, `"name"` (its latest version) or `{"name", "version"}` (agentos.datasets);
    `{name, results: [{item, status, checks: [{name, passed}], cost_usd?, duration_ms?}]}`
    records an evaluation made elsewhere (an ancha run) as completed at once. The version is
    `version` (a candidate need not be current), else the current one."""
    if (body.dataset is None) == (body.results is None):
        raise Unprocessable("Invalid evaluation: give either 'dataset' or 'results'")
    with svc.db.read() as session:
        found = crud.find_workflow(session, ws, id_or_name)
        workflow = version_snapshot(session, found.name, crud.snapshot(found), body.version)
    if body.results is not None:
        if body.scorers is not None:
            raise Unprocessable("Invalid evaluation: 'scorers' score the runs of a 'dataset'; reported results"
                                " carry no final state to score")
        items = evals.validate_results(body.results)
        evaluation = evals.new_evaluation(workflow, body.name, "reported", len(items), None)
        evals.complete(evaluation, items)
        with svc.db.write() as session:
            session.add(evaluation)
        return respond(evaluation.to_dict(), 201)
    stored = None
    if isinstance(body.dataset, str | dict):
        with svc.db.read() as session:
            stored = datasets.for_evaluation(session, ws, body.dataset)
        dataset = stored.entries()
    else:
        dataset = evals.validate_dataset(body.dataset)
    scorers = None if body.scorers is None else validate_scorers(body.scorers, dataset)
    evaluation = evals.new_evaluation(workflow, body.name, "dataset", len(dataset), svc.instance.id)
    if stored is not None:
        evaluation.dataset_name, evaluation.dataset_version = stored.dataset.name, stored.version
    with svc.db.write() as session:
        session.add(evaluation)
    if not body.wait:
        running = evaluation.to_dict()
        svc.runner.pool.submit(evals.run_dataset, svc.db, svc.runner, workflow, evaluation, dataset, scorers)
        return respond(running, 201)
    evals.run_dataset(svc.db, svc.runner, workflow, evaluation, dataset, scorers)
    return respond(evaluation.to_dict(), 201)


@router.get("/api/workflows/{id_or_name}/evaluations")
def list_evaluations(id_or_name: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    """Newest first."""
    with svc.db.read() as session:
        workflow = crud.find_workflow(session, ws, id_or_name)
        rows = session.scalars(
            select(Evaluation)
            .where(Evaluation.workspace_id == ws, Evaluation.workflow_id == workflow.id)
            .order_by(Evaluation.created_at.desc())
        )
        return respond([e.to_dict() for e in rows])


@router.get("/api/evaluations/{evaluation_id}")
def get_evaluation(evaluation_id: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        return respond(evals.find_evaluation(session, ws, evaluation_id).to_dict())


@router.get("/api/evaluations/{base_id}/compare/{candidate_id}")
def compare_evaluations(
    base_id: str, candidate_id: str, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    with svc.db.read() as session:
        base = evals.find_evaluation(session, ws, base_id)
        candidate = evals.find_evaluation(session, ws, candidate_id)
        return respond(evals.compare(base, candidate))
