"""AgentOS check scoring: time per check for the reference's six checks.

    .venv/bin/python bench/agentos_checks.py [rounds]

Scores the six checks of the Evaluations page against the reference run's context and
prints a markdown table: per check type, the mean, p50 and p99 microseconds of one
``evaluate_check`` call (cache lookup included); then the whole batch through
``evaluate_checks``, per check, against the 20 µs target. Not part of the test suite.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

from agentos.evals import build_context, evaluate_check, evaluate_checks, validate_checks

TARGET_US = 20.0

CHECKS = validate_checks(
    [
        {"name": "Mentions the refund", "type": "contains", "target": "draft_reply", "value": "refund"},
        {
            "name": "No internal error leaked",
            "type": "not_contains",
            "target": "draft_reply",
            "value": "Traceback",
        },
        {
            "name": "Category is known",
            "type": "regex",
            "target": "category",
            "value": "^(billing|refund|technical)$",
        },
        {"name": "Under budget", "type": "max_cost_usd", "value": 0.05},
        {"name": "Under 8 seconds", "type": "max_duration_ms", "value": 8000},
        {"name": "Reply is substantial", "type": "expression", "value": "len(draft_reply) > 40"},
    ]
)
CONTEXT = build_context(
    {"draft_reply": "We'll process your refund today.", "category": "refund"},
    {"ticket": "double charged"},
    0.0035,
    4210,
)


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def per_type(rounds: int) -> dict[str, list[float]]:
    """Microseconds of each single-check evaluation, by check type."""
    samples: dict[str, list[float]] = {check["type"]: [] for check in CHECKS}
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for check in CHECKS:
            started = clock()
            evaluate_check(check, CONTEXT)
            samples[check["type"]].append((clock() - started) / 1000)
    return samples


def whole_batch(rounds: int) -> list[float]:
    """Microseconds per check when the six are scored together, as the engine does."""
    per_check = []
    clock = time.perf_counter_ns
    for _ in range(rounds):
        started = clock()
        evaluate_checks(CHECKS, CONTEXT)
        per_check.append((clock() - started) / 1000 / len(CHECKS))
    return per_check


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    evals = evaluate_checks(CHECKS, CONTEXT)
    assert (evals["passed"], evals["total"]) == (5, 6), evals  # the reference's results
    per_type(1_000)  # warm the caches
    gc.disable()  # measure the checks, not a collector pause that lands in a sample
    try:
        samples = per_type(rounds)
        batch = whole_batch(rounds)
    finally:
        gc.enable()
    print(f"AgentOS check scoring, {rounds:,} rounds of the reference's six checks\n")
    print("| check type | mean µs | p50 µs | p99 µs |")
    print("|---|---:|---:|---:|")
    for kind, values in samples.items():
        print(
            f"| {kind} | {statistics.fmean(values):.2f} | {_percentile(values, 0.5):.2f} "
            f"| {_percentile(values, 0.99):.2f} |"
        )
    every = [v for values in samples.values() for v in values]
    print(
        f"| **all six, one at a time** | **{statistics.fmean(every):.2f}** | {_percentile(every, 0.5):.2f} "
        f"| {_percentile(every, 0.99):.2f} |"
    )
    print(
        f"| **evaluate_checks, per check** | **{statistics.fmean(batch):.2f}** | {_percentile(batch, 0.5):.2f} "
        f"| {_percentile(batch, 0.99):.2f} |"
    )
    mean = max(statistics.fmean(every), statistics.fmean(batch))
    verdict = "meets" if mean <= TARGET_US else "MISSES"
    print(
        f"\nmean {mean:.2f} µs per check vs target {TARGET_US:.0f} µs: {verdict} the target ({TARGET_US / mean:.1f}x headroom)"
    )


if __name__ == "__main__":
    main()
