"""An SLO's history and current SLI, computed from the trial's own data: the sums of a
metric SLO's numerator and denominator points, the time a monitor SLO's monitors spent out of
Alert, the share of a time-slice SLO's slices that met its comparator. The shapes are those of
``GET /api/v1/slo/{id}/history`` (``overall``, ``series``, ``monitors``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ancha.world.tools.datadog.slos import (
    COMPARATORS,
    Slo,
    formula_value,
    interval_for,
    monitor_history,
    term_average,
    term_sum,
)

if TYPE_CHECKING:
    from ancha.world.tools.datadog.models import DatadogState


def slo_state(sli: float | None, target: float, warning: float | None) -> str:
    if sli is None:
        return "no_data"
    if sli < target:
        return "breached"
    return "warning" if warning is not None and sli < warning else "ok"


def overall_of(slo: Slo, sli: float | None, errors: list[dict[str, str]]) -> dict[str, Any]:
    budgets = {
        t["timeframe"]: (None if sli is None else round((sli - t["target"]) / (100 - t["target"]) * 100, 4))
        for t in slo.thresholds
    }
    out: dict[str, Any] = {
        "errors": errors or None,
        "sli_value": None if sli is None else round(sli, 6),
        "span_precision": 2,
        "precision": {t["timeframe"]: 0 for t in slo.thresholds},
        "uptime": None,
        "corrections": [],
        "state": slo_state(sli, slo.target_threshold or 0.0, slo.warning_threshold),
    }
    if sli is not None:
        out["error_budget_remaining"] = budgets
    return out


def metric_history(state: DatadogState, slo: Slo, t0: int, t1: int) -> dict[str, Any]:
    store = state.metrics
    query = slo.query or {"numerator": "", "denominator": ""}
    interval = interval_for(t1 - t0)
    first = t0 - t0 % interval
    times = list(range(first, t1, interval))

    def series(text: str, index: int) -> dict[str, Any]:
        def at(a: int) -> float | None:
            return formula_value(text, lambda term: term_sum(store, term, max(a, t0), min(a + interval, t1)))

        values = [at(a) for a in times]
        clean = [v or 0.0 for v in values]
        return {
            "values": clean,
            "sum": sum(clean),
            "count": len(clean),
            "metadata": {"unit": None, "query_index": index, "expression": text, "aggr": "sum"},
        }

    numerator, denominator = series(query["numerator"], 0), series(query["denominator"], 1)
    good, total = numerator["sum"], denominator["sum"]
    errors = []
    sli: float | None = None
    if total == 0:
        errors.append(
            {"error_message": "The denominator is zero valued", "error_type": "ZERO_VALUED_DENOMINATOR"}
        )
    else:
        sli = 100.0 * good / total
    return {
        "series": {
            "res_type": "time_series",
            "resp_version": 2,
            "interval": interval,
            "message": "",
            "query": f"{query['numerator']}, {query['denominator']}",
            "from_date": t0 * 1000,
            "to_date": t1 * 1000,
            "times": [float(t * 1000) for t in times],
            "numerator": numerator,
            "denominator": denominator,
            "numerator_query": query["numerator"],
            "denominator_query": query["denominator"],
        },
        "overall": overall_of(slo, sli, errors),
    }


def monitors_history(state: DatadogState, slo: Slo, t0: int, t1: int) -> dict[str, Any]:
    state.evaluate_all()
    monitors = []
    uptimes: list[float] = []
    for monitor_id in slo.monitor_ids:
        monitor = state.monitors.get(monitor_id)
        if monitor is None:
            continue
        history, uptime = monitor_history(
            monitor, float(t0), float(min(t1, state.now())) if t0 < state.now() else float(t1)
        )
        uptimes.append(uptime)
        monitors.append(
            {
                "id": monitor.id,
                "name": monitor.name,
                "monitor_type": monitor.type,
                "monitor_modified": int(monitor.modified),
                "history": history,
                "sli_value": round(uptime, 6),
                "uptime": round(uptime, 6),
                "span_precision": 2,
                "precision": {t["timeframe"]: 0 for t in slo.thresholds},
                "preview": False,
            }
        )
    sli = min(uptimes) if uptimes else None
    overall = overall_of(slo, sli, [])
    overall["uptime"] = None if sli is None else round(sli, 6)
    overall["history"] = monitors[0]["history"] if len(monitors) == 1 else []
    return {"monitors": monitors, "overall": overall}


def _substitute(formula: str, values: dict[Any, float | None]) -> str:
    """``query1 / query2`` with each query's name replaced by its value."""
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: repr(values.get(m.group(0)) or 0.0), formula)


def time_slice_history(state: DatadogState, slo: Slo, t0: int, t1: int) -> dict[str, Any]:
    spec = (slo.sli_specification or {})["time_slice"]
    compare = COMPARATORS[spec["comparator"]]
    step = int(spec.get("query_interval_seconds", 300))
    queries = {
        q.get("name"): q.get("query") for q in spec["query"].get("queries") or [] if isinstance(q, dict)
    }
    formulas = [f.get("formula") for f in spec["query"].get("formulas") or [] if isinstance(f, dict)]
    formula = str(formulas[0] if formulas and formulas[0] else next(iter(queries), "") or "")
    store = state.metrics
    end = min(t1, int(state.now()))
    good = total = 0
    history: list[list[int]] = []
    for a in range(t0, max(end, t0), step):
        values = {name: term_average(store, str(text), a, a + step) for name, text in queries.items()}
        if any(v is None for v in values.values()):
            state_code = 2
        else:
            expression = _substitute(formula, values)
            result = formula_value(expression, lambda _: None)
            state_code = 0 if result is not None and compare(result, float(spec["threshold"])) else 1
        total += 1
        good += state_code != 1
        if not history or history[-1][1] != state_code:
            history.append([a, state_code])
    sli = 100.0 * good / total if total else None
    overall = overall_of(slo, sli, [])
    overall["history"] = history
    return {"overall": overall}


_DAYS = {"7d": 7, "30d": 30, "90d": 90}


def current_sli(state: DatadogState, slo: Slo) -> tuple[float | None, str | None]:
    """The SLO's SLI over its timeframe up to now, and the calculation error if it has none."""
    now = int(state.now())
    t0 = now - _DAYS.get(slo.timeframe or "7d", 7) * 86400
    if slo.type == "metric":
        overall = metric_history(state, slo, t0, now)["overall"]
    elif slo.type == "monitor":
        overall = monitors_history(state, slo, t0, now)["overall"]
    else:
        overall = time_slice_history(state, slo, t0, now)["overall"]
    errors = overall.get("errors") or []
    return overall["sli_value"], errors[0]["error_message"] if errors else None
