"""Judge checks: a model grades a rubric against what the agent did.

The runner grades them on its side, with the user's own ``OPENROUTER_API_KEY``, from
the trial's trace and what each tool shows of the final world (its ``judge_view``). Without a key a judge check is skipped
(and a skipped check never passes); a model call that fails raises ``JudgeUnavailable``,
which makes the trial invalid rather than failed, its judge checks with status ``error``.

The model sees the agent's calls (method, path, outcome, request and response
summaries) and the messages written during the trial; never credentials, the seed
or the other checks.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx

from ancha.checks.calls import dict_line
from ancha.checks.kinds import AfterTrial, CheckKind, never_changes
from ancha.checks.results import CheckResult
from ancha.scene.check_kinds import form
from ancha.scene.model import CheckSpec

DEFAULT_JUDGE_MODEL = "openai/gpt-4o-mini"
DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
KEY_VAR = "OPENROUTER_API_KEY"
BASE_URL_VAR = "OPENROUTER_BASE_URL"
RUNNER_GRADES_JUDGE = "judge checks are graded by the runner"
NO_KEY = f"{KEY_VAR} is not set, so this judge check was skipped; a skipped check never passes"

MAX_CALLS = 150
"""Calls shown to the model; the earliest are left out beyond this (the latest matter most)."""
BODY_CHARS = 600
ATTEMPTS = 2

REDACTED = "[redacted]"
_SECRET_KEYS = re.compile(r"token|secret|password|passwd|authorization|api_?key|app_?key|credential|cookie",
                          re.IGNORECASE)
_GENERIC_SECRETS = (r"anc_[A-Za-z0-9_]+", r"sk-[A-Za-z0-9_-]{12,}", r"Bearer\s+\S+")


@cache
def _secret_values() -> re.Pattern[str]:
    """Credential shapes: Ancha's own, model keys, bearer headers, and every tool's tokens."""
    from ancha.world.registry import registry

    shapes = [*(p for spec in registry().tools.values() for p in spec.secret_patterns), *_GENERIC_SECRETS]
    return re.compile("|".join(shapes))
_CREDENTIAL_NAMES = re.compile(r"token|secret|key|password", re.IGNORECASE)
"""Which entries of a tool's credentials are secret (``token``, ``signing_secret``, ``app_key``...)."""
_SECRET_VARS = re.compile(r"TOKEN|KEY|SECRET|PASSWORD", re.IGNORECASE)

SYSTEM_PROMPT = (
    "You grade the work of an AI agent in a simulated company workspace against a rubric. "
    "Judge only from the evidence given: the agent's API calls and what the tools show of the "
    "world after its attempt. Answer with one JSON object and nothing else: "
    '{"passed": true or false, "explanation": "one sentence saying why", '
    '"evidence": [sequence numbers of the calls that support your verdict]}.'
)


class JudgeUnavailable(RuntimeError):
    """The judge model could not give a verdict (HTTP error, timeout, malformed answer).

    Raised by ``evaluate_judge_checks`` with ``results``: the judge checks graded before
    the failure, then the rest with status ``error`` (the failure as their explanation)."""

    def __init__(self, message: str, results: list[CheckResult] | None = None) -> None:
        super().__init__(message)
        self.results: list[CheckResult] = results or []


@dataclass(slots=True)
class Verdict:
    passed: bool
    explanation: str
    evidence: list[int]


def judge_expected(rubric: str) -> str:
    return f"the judge agrees: {rubric.strip()}"


JUDGE = CheckKind(form("judge"), AfterTrial("the runner", RUNNER_GRADES_JUDGE,
                                            lambda spec: judge_expected(spec.judge or "")), never_changes)
"""``judge``: a model grades a rubric after the trial (``evaluate_judge_checks``), on the runner's
side with the user's own key; the server reports it skipped."""


def evaluate_judge_checks(
    specs: Iterable[CheckSpec],
    trace_entries: list[dict[str, Any]],
    views: list[str],
    model: str | None,
    env_vars: Mapping[str, str],
    *,
    required: Collection[str] | None = None,
    secrets: Iterable[str] = (),
    client: httpx.Client | None = None,
    retry_delay: float = 1.0,
) -> list[CheckResult]:
    """Grade the judge checks among ``specs`` (others are ignored), in order.

    ``trace_entries`` are ``trace.jsonl`` records (``TraceEntry.to_dict()``); ``views``
    what each tool shows of the final world (``world_views``). ``required``: the scene's ``pass`` (empty or None:
    every check). ``secrets``: values never to show the model (the trial's tool tokens);
    secret-looking values of ``env_vars`` are withheld as well.
    """
    judged = [s for s in specs if s.judge is not None]
    required_ids = set(required or ())
    key = (env_vars.get(KEY_VAR) or "").strip()
    results: list[CheckResult] = []
    if not judged:
        return results
    if not key:
        for spec in judged:
            assert spec.judge is not None
            results.append(CheckResult.skipped(spec.id, not required_ids or spec.id in required_ids,
                                               judge_expected(spec.judge), NO_KEY))
        return results
    model = model or DEFAULT_JUDGE_MODEL
    base_url = (env_vars.get(BASE_URL_VAR) or DEFAULT_BASE_URL).rstrip("/")
    withheld = _withheld(env_vars, secrets, key)
    calls = [e for e in trace_entries if e.get("actor", "agent") == "agent"]
    shown_seqs = {int(e["seq"]) for e in calls[-MAX_CALLS:] if "seq" in e}
    evidence_text = render_evidence(calls, views, withheld)
    own_client = client is None
    http = client or httpx.Client(timeout=httpx.Timeout(90.0, connect=10.0))
    try:
        for index, spec in enumerate(judged):
            assert spec.judge is not None
            prompt = render_prompt(spec.judge, evidence_text)
            try:
                verdict = ask_judge(http, base_url, key, model, prompt, retry_delay=retry_delay)
            except JudgeUnavailable as exc:
                reason = f"Not graded: {exc}; the trial is invalid, not failed"
                results += [CheckResult.errored(s.id, not required_ids or s.id in required_ids,
                                                judge_expected(s.judge or ""), reason) for s in judged[index:]]
                raise JudgeUnavailable(str(exc), results) from exc
            cited = [seq for seq in verdict.evidence if seq in shown_seqs]
            results.append(CheckResult.outcome(
                spec.id, not required_ids or spec.id in required_ids, verdict.passed,
                expected=judge_expected(spec.judge),
                actual=f"the judge ({model}) found the rubric {'met' if verdict.passed else 'not met'}",
                explanation=f"{'Passed' if verdict.passed else 'Failed'} by the judge: {verdict.explanation}",
                evidence=cited,
            ))
    finally:
        if own_client:
            http.close()
    return results


def context_secrets(context: Mapping[str, Any]) -> list[str]:
    """The values of a trial's context (``POST /envs``, ``GET /envs/{id}/context``) never shown
    to the model: each tool's tokens, secrets and keys, the trial token and the events token.
    The rest (the bot's user id, the team id, a login, an e-mail address, URLs) are no
    credentials and stay visible: the agent's calls and messages name them."""
    tools = context.get("tools") or {}
    values = [str(v) for creds in tools.values() if isinstance(creds, dict)
              for k, v in creds.items() if _CREDENTIAL_NAMES.search(k)]
    values += [str(context.get("trial_token") or ""), str((context.get("events") or {}).get("token") or "")]
    return [v for v in values if v]


def trace_entries_from_jsonl(text: str) -> list[dict[str, Any]]:
    """``trace.jsonl`` (``GET /envs/{id}/trace``) as a list of entry dicts."""
    entries: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.strip():
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


def world_views(world: dict[str, Any]) -> list[str]:
    """What the judge sees of each tool's final state (``world.json``), as text sections."""
    from ancha.world.registry import registry

    views: list[str] = []
    for name, spec in registry().tools.items():
        snapshot = world.get(name) if isinstance(world, dict) else None
        if spec.judge_view is not None and isinstance(snapshot, dict):
            view = spec.judge_view(snapshot)
            if view:
                views.append(view)
    return views


def render_prompt(rubric: str, evidence_text: str) -> str:
    return f"Rubric:\n{rubric.strip()}\n\n{evidence_text}\n\nDoes the agent's work meet the rubric?"


def render_evidence(calls: list[dict[str, Any]], views: list[str], withheld: Collection[str] = ()) -> str:
    """The agent's calls and what each tool shows of the final world, as plain text,
    credentials removed."""
    lines = ["The agent's API calls, in order (#seq METHOD PATH -> status):"]
    if len(calls) > MAX_CALLS:
        lines.append(f"({len(calls) - MAX_CALLS} earlier calls left out)")
    for entry in calls[-MAX_CALLS:]:
        tool = entry.get("tool")
        lines.append(f"{dict_line(entry)}" + (f"  [{tool}]" if tool else ""))
        query = entry.get("query")
        if query:
            lines.append("  query: " + _summary(query, BODY_CHARS))
        if entry.get("request") not in (None, "", {}):
            lines.append("  request: " + _summary(entry["request"], BODY_CHARS))
        if entry.get("response") not in (None, "", {}):
            lines.append("  response: " + _summary(entry["response"], BODY_CHARS))
    if not calls:
        lines.append("(the agent made no calls)")
    for view in views:
        lines.append("")
        lines.append(_redact_text(view))
    text = "\n".join(lines)
    for value in sorted(withheld, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def ask_judge(client: httpx.Client, base_url: str, key: str, model: str, prompt: str,
              *, retry_delay: float = 1.0) -> Verdict:
    """One verdict from an OpenAI-compatible chat-completions endpoint; a transient failure
    or a malformed answer is tried once more, then raises ``JudgeUnavailable``."""
    body = {
        "model": model,
        "temperature": 0,
        "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
    }
    headers = {"Authorization": f"Bearer {key}", "X-Title": "ancha judge"}
    problem = ""
    for attempt in range(ATTEMPTS):
        if attempt:
            time.sleep(retry_delay)
        try:
            answer = client.post(f"{base_url}/chat/completions", json=body, headers=headers)
        except httpx.HTTPError as exc:
            problem = f"the judge model call failed: {type(exc).__name__}: {exc}"
            continue
        if answer.status_code >= 400:
            problem = f"the judge model answered HTTP {answer.status_code}: {_error_text(answer)}"
            if answer.status_code in (429,) or answer.status_code >= 500:
                continue
            raise JudgeUnavailable(problem)
        try:
            return parse_verdict(answer.json())
        except ValueError as exc:
            problem = f"the judge model's answer was not a verdict: {exc}"
    raise JudgeUnavailable(problem)


def parse_verdict(payload: Any) -> Verdict:
    """The verdict in a chat-completions answer; ``ValueError`` when there is none."""
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError("no choices[0].message.content in the answer") from exc
    if not isinstance(content, str):
        raise ValueError("the message content is not text")
    text = content.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError(f"no JSON object in {content[:200]!r}")
    try:
        data = json.loads(text[start:end + 1])
    except ValueError as exc:
        raise ValueError(f"invalid JSON in {content[:200]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("passed"), bool):
        raise ValueError(f'no boolean "passed" in {content[:200]!r}')
    explanation = data.get("explanation")
    if not isinstance(explanation, str) or not explanation.strip():
        raise ValueError(f'no "explanation" in {content[:200]!r}')
    raw_evidence = data.get("evidence") or []
    evidence = [int(s) for s in raw_evidence if isinstance(s, int) and not isinstance(s, bool)] \
        if isinstance(raw_evidence, list) else []
    return Verdict(passed=data["passed"], explanation=explanation.strip(), evidence=evidence)


def _withheld(env_vars: Mapping[str, str], secrets: Iterable[str], key: str) -> set[str]:
    values = {key, *secrets}
    values.update(v for name, v in env_vars.items() if _SECRET_VARS.search(name))
    return {v for v in values if isinstance(v, str) and len(v) >= 6}


def _summary(value: Any, limit: int) -> str:
    text = json.dumps(_redact(value), ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: REDACTED if _SECRET_KEYS.search(str(k)) else _redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    if isinstance(value, str):
        return _redact_text(value)
    return value


def _redact_text(text: str) -> str:
    return _secret_values().sub(REDACTED, text)


def _error_text(answer: httpx.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        return answer.text[:200]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)[:200]
    return str(error or body)[:200]
