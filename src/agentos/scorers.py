"""Scorers: an evaluation's scores of each item's final state, on top of the workflow's checks.

A scorer reads a state variable (`target`) of the run's final state and gives it a score
from 0 to 1, which passes when it reaches the scorer's `min`:

- `exact`: 1 when the target's text equals the item's `expected` (or `expected[target]` when
  `expected` is an object holding the target), surrounding whitespace ignored and case folded
  unless `case_sensitive`; else 0. It passes at 1.
- `similarity`: rapidfuzz's `fuzz.ratio` of the two texts over 100 (an edit-distance ratio;
  case folded unless `case_sensitive`); passes at `min` (default 0.8).
- `rubric`: a model grades the target against the `rubric` (and `expected`, when the item has
  one) and answers a score from 0 to 1 first; passes at `min` (default 0.5). Its answers are
  kept in `model_grades` by (workspace, provider, model, prompt): grading the same output again
  asks no model, costs nothing and gives the same score.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from agentos.db import Database
from agentos.definitions import PROVIDERS
from agentos.engine.pricing import Price, price_of
from agentos.engine.providers import ProviderError, Providers
from agentos.errors import Unprocessable
from agentos.evals.check_kinds import as_text
from agentos.models import ModelGrade, ModelPrice
from agentos.timestamps import utcnow

SCORER_TYPES = ("exact", "similarity", "rubric")
MAX_SCORERS = 20
_COMMON = ("name", "type", "target")
FIELDS: dict[str, tuple[str, ...]] = {
    "exact": (*_COMMON, "case_sensitive"),
    "similarity": (*_COMMON, "case_sensitive", "min"),
    "rubric": (*_COMMON, "rubric", "model", "provider", "responses", "min"),
}
DEFAULT_MIN = {"exact": 1.0, "similarity": 0.8, "rubric": 0.5}
GRADER_SYSTEM = "You grade the outputs of an AI workflow against a rubric. You answer with a score first."
_SCORE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)")


def validate_scorers(scorers: Any, dataset: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scorers normalized (`min` filled in; a rubric's `provider` split off its `model`),
    or 422 naming every problem's place: "scorer 2: unknown type 'fuzzy'"."""
    if not isinstance(scorers, list) or not scorers:
        raise Unprocessable("Invalid evaluation: 'scorers' must be a non-empty list of"
                            ' {"name", "type": "exact"|"similarity"|"rubric", "target", ...}')
    if len(scorers) > MAX_SCORERS:
        raise Unprocessable(f"Invalid evaluation: at most {MAX_SCORERS} scorers")
    problems: list[str] = []
    checked: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, scorer in enumerate(scorers, start=1):
        where = f"scorer {i}"
        if not isinstance(scorer, dict):
            problems.append(f"{where}: must be an object with 'name', 'type' and 'target'")
            continue
        kind = scorer.get("type")
        if kind not in SCORER_TYPES:
            problems.append(f"{where}: unknown type {kind!r} (expected one of {', '.join(SCORER_TYPES)})"
                            if kind is not None else f"{where}: 'type' is required ({', '.join(SCORER_TYPES)})")
            continue
        known = FIELDS[kind]
        a_kind = f"{'an' if kind == 'exact' else 'a'} {kind} scorer"
        problems.extend(f"{where}: unknown field {key!r} for {a_kind} (the fields are {', '.join(known)})"
                        for key in scorer if key not in known)
        name, target = scorer.get("name"), scorer.get("target")
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            problems.append(f"{where}: 'name' is required (a string of at most 200 characters)")
        elif name in names:
            problems.append(f"{where}: the name '{name}' is used by another scorer")
        else:
            names.add(name)
        if not isinstance(target, str) or not target:
            problems.append(f"{where}: 'target' is required (a state variable of the run's final state)")
        if not isinstance(scorer.get("case_sensitive", False), bool):
            problems.append(f"{where}: 'case_sensitive' must be true or false")
        low = scorer.get("min", DEFAULT_MIN[kind])
        if not (_is_number(low) and 0 <= low <= 1):
            problems.append(f"{where}: 'min' must be a number from 0 to 1")
        normalized = {"name": name, "type": kind, "target": target, "min": low}
        if kind in ("exact", "similarity"):
            normalized["case_sensitive"] = scorer.get("case_sensitive", False)
            missing = [n for n, item in enumerate(dataset, start=1) if "expected" not in item]
            if missing:
                problems.append(f"{where}: {a_kind} compares with each item's 'expected', and item"
                                f" {missing[0]} has none")
        else:
            problems.extend(f"{where}: {p}" for p in _rubric_problems(scorer))
            normalized |= _grader_of(scorer) | {"rubric": scorer.get("rubric")}
        checked.append(normalized)
    if problems:
        raise Unprocessable("Invalid evaluation: " + "; ".join(problems))
    return checked


def _rubric_problems(scorer: dict[str, Any]) -> list[str]:
    problems = []
    if not isinstance(scorer.get("rubric"), str) or not scorer["rubric"].strip():
        problems.append("'rubric' is required (the text the output is graded against)")
    if not isinstance(scorer.get("model"), str) or not scorer["model"]:
        problems.append("'model' is required (\"provider/model\" such as \"openai/gpt-4o-mini\", or a model"
                        " name with 'provider' as llm nodes name them)")
    elif _grader_of(scorer)["provider"] not in PROVIDERS:
        problems.append(f"unknown provider '{_grader_of(scorer)['provider']}'"
                        f" (expected one of {', '.join(PROVIDERS)})")
    elif _grader_of(scorer)["provider"] == "mock":
        responses = scorer.get("responses")
        if not isinstance(responses, list) or not responses or not all(
            isinstance(r, str) or (isinstance(r, dict) and isinstance(r.get("text", r.get("error")), str))
            for r in responses
        ):
            problems.append("'responses' is required for the mock provider (a non-empty list of strings or"
                            " {\"text\", \"match\"?} objects)")
    return problems


def _grader_of(scorer: dict[str, Any]) -> dict[str, Any]:
    """{"provider", "model"(, "responses")}: "mock/grader" names the provider in the model,
    {"provider": "mock", "model": "grader"} names it apart; a bare model is OpenAI's."""
    model = scorer.get("model")
    provider = scorer.get("provider")
    if provider is None and isinstance(model, str) and model.split("/", 1)[0] in PROVIDERS and "/" in model:
        provider, model = model.split("/", 1)
    grader = {"provider": provider or "openai", "model": model}
    if "responses" in scorer:
        grader["responses"] = scorer["responses"]
    return grader


@dataclass
class Score:
    score: float
    detail: str
    cost_usd: float = 0.0


class Grader:
    """Asks grading models, through the engine's providers, and keeps their answers."""

    def __init__(self, db: Database, providers: Providers, workspace_id: str) -> None:
        self.db, self.providers, self.workspace_id = db, providers, workspace_id
        with db.read() as session:
            rows = session.scalars(select(ModelPrice).where(ModelPrice.workspace_id == workspace_id))
            self.prices = {row.model: Price(row.input_per_mtok, row.output_per_mtok) for row in rows}

    def grade(self, scorer: dict[str, Any], prompt: str) -> tuple[str, float]:
        """The model's answer and what asking cost (0 when it was kept from before)."""
        # The mock's "model" is its responses table: another table is another model.
        model = scorer["model"] + (json.dumps(scorer.get("responses"), sort_keys=True)
                                   if scorer["provider"] == "mock" else "")
        key = hashlib.sha256("\0".join((self.workspace_id, scorer["provider"], model, prompt)).encode()).hexdigest()
        with self.db.read() as session:
            kept = session.get(ModelGrade, key)
            if kept is not None:
                return kept.text, 0.0
        completion = self.providers.complete(scorer, prompt, GRADER_SYSTEM)
        cost = price_of(scorer["model"], self.prices).cost(completion.input_tokens, completion.output_tokens)
        try:
            with self.db.write() as session:
                session.add(ModelGrade(
                    key=key, workspace_id=self.workspace_id, model=f"{scorer['provider']}/{scorer['model']}"[:200],
                    text=completion.text, input_tokens=completion.input_tokens,
                    output_tokens=completion.output_tokens, cost_usd=cost, created_at=utcnow(),
                ))
        except IntegrityError:
            pass  # another item graded the same output at the same moment: its answer is kept
        return completion.text, cost


def score_item(
    scorers: list[dict[str, Any]], state: dict[str, Any], entry: dict[str, Any], grader: Grader | None
) -> list[dict[str, Any]]:
    """Each scorer's {name, type, score, passed, detail} for one item (and `cost_usd` for a
    rubric's model call)."""
    scores = []
    for scorer in scorers:
        result = _score(scorer, state, entry, grader)
        shown = {"name": scorer["name"], "type": scorer["type"], "score": round(result.score, 6),
                 "passed": result.score >= scorer["min"], "detail": result.detail}
        if scorer["type"] == "rubric":
            shown["cost_usd"] = round(result.cost_usd, 8)
        scores.append(shown)
    return scores


def _score(scorer: dict[str, Any], state: dict[str, Any], entry: dict[str, Any], grader: Grader | None) -> Score:
    target = scorer["target"]
    if target not in state:
        return Score(0.0, f"no '{target}' in the run's final state")
    output = as_text(state[target]).strip()
    expected = entry.get("expected")
    if isinstance(expected, dict) and target in expected:
        expected = expected[target]
    wanted = None if expected is None and "expected" not in entry else as_text(expected).strip()
    if scorer["type"] == "rubric":
        assert grader is not None
        return _rubric(scorer, output, wanted, grader)
    assert wanted is not None  # validate_scorers refuses exact and similarity without `expected`
    if not scorer["case_sensitive"]:
        output, wanted = output.casefold(), wanted.casefold()
    if scorer["type"] == "exact":
        same = output == wanted
        return Score(1.0 if same else 0.0, f"'{target}' {'equals' if same else 'does not equal'} the expected output")
    ratio = fuzz.ratio(output, wanted) / 100
    return Score(ratio, f"'{target}' is {ratio:.2f} similar to the expected output")


def rubric_prompt(rubric: str, output: str, expected: str | None) -> str:
    return (
        f"Rubric:\n{rubric}\n\n"
        + (f"Expected output:\n{expected}\n\n" if expected is not None else "")
        + f"Output to grade:\n{output}\n\n"
        "Answer with a score from 0 (fails the rubric) to 1 (meets it fully) first, then one sentence why."
    )


def _rubric(scorer: dict[str, Any], output: str, expected: str | None, grader: Grader) -> Score:
    prompt = rubric_prompt(scorer["rubric"], output, expected)
    try:
        text, cost = grader.grade(scorer, prompt)
    except ProviderError as exc:
        return Score(0.0, f"the grading model failed: {exc}")
    found = _SCORE.search(text)
    value = float(found.group(1)) if found else math.nan
    if not 0 <= value <= 1:
        return Score(0.0, f"the grading model gave no score from 0 to 1: {text[:200]!r}", cost)
    return Score(value, text.strip()[:500], cost)


def summarize(scorers: list[dict[str, Any]], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per scorer {name, type, mean, passed, total} over the items."""
    summary = []
    for scorer in scorers:
        scores = [s for item in items for s in item.get("scores", []) if s["name"] == scorer["name"]]
        total = len(scores)
        summary.append({
            "name": scorer["name"],
            "type": scorer["type"],
            "mean": round(sum(s["score"] for s in scores) / total, 6) if total else None,
            "passed": sum(1 for s in scores if s["passed"]),
            "total": total,
        })
    return summary


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
