"""The compare page, ``/ui/compare``: two trials side by side (``compare.py``), the trials one
can be compared with, and the way in from a scene.

``?a=RUN/SCENE/TRIAL&b=RUN/SCENE/TRIAL``: the comparison. ``?a=`` alone: what ``a`` can be
compared with (the scene's other trials in its run, the same trial in the previous run and
in others). ``?scene=NAME``: the scene's newest failed trial beside a passed one. A parameter
that names nothing gets a page that says so (400 for a malformed one, 404 for a trial that
is not there), never an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ancha.console import links
from ancha.console.compare import Alignment, BadTrialRef, TrialRef, agent_facing, align_calls, compare_checks
from ancha.console.runs import ConsoleRuns, RunRow, SceneRow
from ancha.console.trial_data import TrialCache, TrialData
from ancha.console.world_view import WorldView, trial_world_view
from ancha.results.run_folder import TrialFolder
from ancha.results.runs_folder import is_dir

ROWS_SHOWN = 500
"""Aligned call rows on the page, from a little before the first divergence."""
CONTEXT = 20
"""Matching rows shown before the first divergence."""
OTHER_RUNS_LISTED = 20


@dataclass(frozen=True, slots=True)
class Side:
    """One of the two trials, as the page shows it."""

    ref: TrialRef
    data: TrialData
    world: WorldView
    """Its world diff, seed to end (``world_view.py``), or why there is none."""

    @property
    def path(self) -> str:
        return links.trial_path(self.ref.run_id, self.ref.scene, self.ref.trial)

    @property
    def verdict(self) -> str:
        return str(self.data.checks.get("verdict") or "not graded")


@dataclass(frozen=True, slots=True)
class Candidate:
    ref: TrialRef
    verdict: str
    relation: str
    """How it relates to the trial compared: ``this run``, ``previous run``, ``another run``."""


class ComparePages:
    """The compare page over the console's runs, its trial cache and its page renderer."""

    def __init__(self, runs: ConsoleRuns, cache: TrialCache, page: Callable[..., HTMLResponse],
                 where: str | None = None) -> None:
        self.runs = runs
        self.cache = cache
        self.page = page
        self.where = where or str(runs.path)
        """How messages name the runs: the runs folder, or a hosted console's workspace."""

    def compare(self, request: Request) -> Response:
        params = request.query_params
        if "a" not in params and params.get("scene"):
            return self._scene_pair(params["scene"])
        try:
            a = TrialRef.parse(params.get("a") or "", "a") if params.get("a") else None
            b = TrialRef.parse(params["b"], "b") if params.get("b") else None
        except BadTrialRef as exc:
            return self._problem(400, "These are not trials", str(exc))
        if a is None:
            return self._problem(400, "Which trials?", "The compare page needs ?a=RUN/SCENE/TRIAL and "
                                 "?b=RUN/SCENE/TRIAL (or ?scene=NAME); open it from a trial's or a scene's page.")
        a_folder = self._folder(a)
        b_folder = self._folder(b) if b is not None else None
        for ref, folder in ((a, a_folder), (b, b_folder)):
            if ref is not None and folder is None:
                return self._problem(404, "No such trial", f"There is no trial {ref} in {self.where}: "
                                     "its run, scene or trial number is not there (the run may have been removed).")
        assert a_folder is not None
        if b_folder is None:
            return self._choices(a_folder)
        if a_folder.path.resolve() == b_folder.path.resolve():
            return self._problem(400, "The same trial twice", f"?a= and ?b= both name {_ref(a_folder)}: "
                                 "pick another trial for ?b=.", back=links.compare_path(str(_ref(a_folder))))
        return self._comparison(self._side(a_folder), self._side(b_folder))

    # --- the comparison -------------------------------------------------------------

    def _comparison(self, a: Side, b: Side) -> Response:
        alignment = align_calls(agent_facing(a.data.calls), agent_facing(b.data.calls))
        start = max(0, (alignment.first_divergence or 0) - CONTEXT)
        changes = [{(c.path, c.kind, c.after) for c in side.world.changes} for side in (a, b)]
        return self.page("compare.html", a=a, b=b, checks=compare_checks(a.data.checks, b.data.checks),
                         alignment=alignment, rows=list(enumerate(alignment.rows))[start:start + ROWS_SHOWN],
                         hidden=_hidden(alignment, start), same_scene=a.ref.scene == b.ref.scene,
                         shared=changes[0] & changes[1])

    def _side(self, folder: TrialFolder) -> Side:
        """The trial with its world diff, built as the trial page builds it and shared with it
        through the trial's cached data (the seed is rebuilt once)."""
        data = self.cache.load(folder)
        world = data.derived.get("world_view")
        if not isinstance(world, WorldView):
            run = self.runs.run(folder.run_id)
            summary = run.read_summary() if run is not None else None
            scene = next((s for s in (summary or {}).get("scenes") or []
                          if isinstance(s, dict) and s.get("scene") == folder.scene), None)
            world = trial_world_view(folder, scene)
            if world.error is None:
                data.derived["world_view"] = world
        return Side(_ref(folder), data, world)

    # --- ways in --------------------------------------------------------------------

    def _choices(self, folder: TrialFolder) -> Response:
        ref = _ref(folder)
        return self.page("compare_choices.html", ref=ref, verdict=_verdict(folder),
                         candidates=candidates(ref, self.runs.scene_history(ref.scene)))

    def _scene_pair(self, scene: str) -> Response:
        history = self.runs.scene_history(scene)
        if not history:
            return self._problem(404, "No such scene", f"No run in {self.where} ran the scene {scene!r}.")
        pair = passed_and_failed(scene, history)
        if pair is None:
            return self._problem(404, "Nothing to compare", f"The scene {scene} has no failed trial with a passed "
                                 "one to set beside it in any run. Open a trial and use \"compare with…\" to "
                                 "pick two.", back=links.scene_path(scene))
        return RedirectResponse(links.compare_path(str(pair[0]), str(pair[1])), 303)

    def _folder(self, ref: TrialRef) -> TrialFolder | None:
        run = self.runs.run(ref.run_id)
        if run is None:
            return None
        folder = run.trial(ref.scene, ref.trial)
        return folder if is_dir(folder.path) else None

    def _problem(self, status: int, title: str, message: str, back: str | None = None) -> HTMLResponse:
        return self.page("compare_problem.html", status, title=title, message=message, back=back)


def candidates(ref: TrialRef, history: list[tuple[RunRow, SceneRow]]) -> list[Candidate]:
    """What ``ref`` can be compared with: the scene's other trials in its run, then the same
    trial in the previous run that has it, then in other runs (newest first)."""
    found: list[Candidate] = []
    older = False
    for row, scene in history:  # newest first
        if row.run_id == ref.run_id:
            found += [Candidate(TrialRef(row.run_id, ref.scene, t), v, "this run")
                      for t, v in scene.trial_verdicts if t != ref.trial]
            older = True
            continue
        same = next((v for t, v in scene.trial_verdicts if t == ref.trial), None)
        if same is None:
            continue
        previous = older and not any(c.relation == "previous run" for c in found)
        found.append(Candidate(TrialRef(row.run_id, ref.scene, ref.trial), same,
                               "previous run" if previous else "another run"))
    order = {"this run": 0, "previous run": 1, "another run": 2}
    found.sort(key=lambda c: order[c.relation])  # stable: newest first within each
    return found[:sum(1 for c in found if c.relation != "another run") + OTHER_RUNS_LISTED]


def passed_and_failed(scene: str, history: list[tuple[RunRow, SceneRow]]) -> tuple[TrialRef, TrialRef] | None:
    """The scene's newest failed trial and a passed one: in the same run when it has one,
    else the newest passed trial of any run. None when the scene never both passed and failed."""
    def first(verdict: str, rows: list[tuple[RunRow, SceneRow]]) -> TrialRef | None:
        return next((TrialRef(row.run_id, scene, t) for row, s in rows for t, v in s.trial_verdicts if v == verdict),
                    None)

    failed = first("failed", history)
    if failed is None:
        return None
    passed = first("passed", [(r, s) for r, s in history if r.run_id == failed.run_id]) or first("passed", history)
    return (passed, failed) if passed is not None else None


def _hidden(alignment: Alignment, start: int) -> dict[str, Any]:
    shown_end = min(len(alignment.rows), start + ROWS_SHOWN)
    return {"before": start, "after": len(alignment.rows) - shown_end}


def _ref(folder: TrialFolder) -> TrialRef:
    return TrialRef(folder.run_id, folder.scene, folder.trial)


def _verdict(folder: TrialFolder) -> str:
    return str(folder.read_checks().get("verdict")) if folder.is_graded() else "not graded"
