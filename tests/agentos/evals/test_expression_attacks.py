"""Hostile expressions: each is refused with a clear error, or finishes small and fast.

Expressions come from workflow authors and run inside the service, so none of these may
hang a worker, exhaust its memory, or reach outside the values it was given.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import Any

import pytest

from agentos.evals import ExpressionError, compile_expression, evaluate_check

BUDGET = "Expression exceeded its evaluation budget"
TOO_LARGE = "Result too large (more than 1,000,000 items or characters)"
NUMBER = "Number too large (more than 10,000 bits)"
COLLIDE = "Too many distinct keys share one hash value"


LARGE_NAMES: dict[str, Any] = {
    "big": "a" * 1_000_000,
    "tup": tuple(range(100_000)),
    "zeros": [0] * 100_000,
    "prefixes": tuple(f"p{i}" for i in range(10_000)),
    "words": [f"w{i}" for i in range(10_000)],
}


def _refusal(source: str, names: dict[str, Any] | None = None) -> str:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source).evaluate(names or {})
    return str(caught.value)


def _bounded(source: str, names: dict[str, Any] | None = None) -> tuple[Any, float, int]:
    """Evaluate, returning (result or error text, seconds, peak bytes traced)."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        outcome: Any = compile_expression(source).evaluate(names or {})
    except ExpressionError as error:
        outcome = str(error)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return outcome, elapsed, peak


# refused when compiling ------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("'a'.ljust(10**9)", "Attribute 'ljust' is not allowed"),
        ("'a'.rjust(10**9)", "Attribute 'rjust' is not allowed"),
        ("'a'.center(10**9)", "Attribute 'center' is not allowed"),
        ("'a'.zfill(10**9)", "Attribute 'zfill' is not allowed"),
        ("'\\t'.expandtabs(10**9)", "Attribute 'expandtabs' is not allowed"),
        ("'{0:>1000000000}'.format(1)", "Attribute 'format' is not allowed"),
        ("'{0.__class__}'.format(1)", "Attribute 'format' is not allowed"),
        ("'{x}'.format_map(input)", "Attribute 'format_map' is not allowed"),
        ("f'{1:>1000000000}'", "Format specifications in f-strings are not allowed"),
        ("f'{1:{10**9}}'", "Format specifications in f-strings are not allowed"),
        ("().__class__.__bases__[0].__subclasses__()", "Access to '__class__' is not allowed"),
        ("[].__class__", "Access to '__class__' is not allowed"),
        ("input.__getitem__('x')", "Access to '__getitem__' is not allowed"),
        ("__builtins__", "Access to '__builtins__' is not allowed"),
        ("__import__('os').system('true')", "Access to '__import__' is not allowed"),
        ("open('/etc/passwd').read()", "Function 'open' is not allowed"),
        ("exec('import os')", "Function 'exec' is not allowed"),
        ("compile('1', 'f', 'eval')", "Function 'compile' is not allowed"),
        ("globals()", "Function 'globals' is not allowed"),
        ("vars()", "Function 'vars' is not allowed"),
        ("breakpoint()", "Function 'breakpoint' is not allowed"),
        ("pow(2, 10**9)", "Function 'pow' is not allowed"),
        ("(1).to_bytes(10**9, 'big')", "Attribute 'to_bytes' is not allowed"),
        ("'a'.encode()", "Attribute 'encode' is not allowed"),
        ("'abc'.translate({97: 'x' * 10**6})", "Attribute 'translate' is not allowed"),
        ("(lambda: 1)()", "Lambda expressions are not allowed"),
        ("[(y := y + 'a') for x in range(10)]", "Assignment expressions (:=) are not allowed"),
        ("sorted([3, 1], key=lambda v: v)", "Keyword argument 'key' is not allowed for sorted()"),
        ("b'%0999999999d' % 1", "Constants of type 'bytes' are not allowed"),
        ("'x' " * 5000, "Expression is too long (more than 10,000 characters)"),
        ("(" * 1000 + "1" + ")" * 1000, "Syntax error: too many nested parentheses (column 201)"),
        ("[" * 150 + "]" * 150, "Expression is nested too deeply (more than 100 levels)"),
        ("1" + "+1" * 3000, "Expression is nested too deeply (more than 100 levels)"),
        ("-" * 9000 + "1", "Expression is nested too deeply"),
        ("not " * 2000 + "x", "Expression is nested too deeply (more than 100 levels)"),
        ("a" + ".b" * 3000, "Expression is nested too deeply (more than 100 levels)"),
        ("1\x00", "Syntax error: source code string cannot contain null bytes"),
        ("9" * 5000, "Syntax error: Exceeds the limit (4300 digits)"),
    ],
)  # fmt: skip
def test_compile__refuses(source: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source)
    assert str(caught.value).startswith(message)


# refused while evaluating, before the damage is done ---------------------------------


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("'%.999999999f' % 1.0", "String formatting with '%' is not allowed"),
        ("'%s' * 3 % (1, 2, 3)", "String formatting with '%' is not allowed"),
        ("4000000**4000000", NUMBER),
        ("10**10**10", NUMBER),
        ("2**100000", NUMBER),
        ("(10**3000) * (10**3000)", NUMBER),
        ("1 << 10**9", NUMBER),
        ("'a' * 10**9", TOO_LARGE),
        ("10**9 * 'a'", TOO_LARGE),
        ("[0] * 10**9", TOO_LARGE),
        ("(0,) * 10**7", TOO_LARGE),
        ("('a' * 600000) + ('b' * 600000)", TOO_LARGE),
        ("('a' * 100000).replace('', 'bbbbbbbbbbbbbbbbbbbb')", TOO_LARGE),
        ("('a' * 1000).replace('a', 'b' * 2000)", TOO_LARGE),
        ("'x'.join(['a' * 1000] * 10000)", TOO_LARGE),
        ("('x' * 1000000).join(['a', 'b', 'c'])", TOO_LARGE),
        ("str([['a' * 1000] * 1000] * 1000)", BUDGET),
        ("f'{[[\"a\" * 1000] * 1000] * 1000!r}'", BUDGET),
        ("str([['a'] * 1000] * 1000)", BUDGET),
        ("str(['a' * 600000, 'b' * 600000])", "Text too large"),
        ("text[::1]", TOO_LARGE),
        ("text.upper()", TOO_LARGE),
        ("len({i * (2**61 - 1) for i in range(10000)})", COLLIDE),
        ("len(set([i * (2**61 - 1) for i in range(10000)]))", COLLIDE),
        ("len({i * (2**61 - 1): i for i in range(10000)})", COLLIDE),
        ("len(dict(zip([i * (2**61 - 1) for i in range(10000)], range(10000))))", COLLIDE),
        ("len({(i * (2**61 - 1),) for i in range(10000)})", COLLIDE),
        ("len({float(2 ** (61 * k)) for k in range(16)} | {0})", COLLIDE),
        ("len(set(range(0, 10**5 * (2**61 - 1), 2**61 - 1)))", COLLIDE),
        ("len(set(range(9)) | {i * (2**61 - 1) for i in range(9)})", COLLIDE),
        ("{" + ", ".join(str(i * (2**61 - 1)) for i in range(9)) + "}", COLLIDE),
        ('f\'{"a" * 600000}{"b" * 600000}\'', TOO_LARGE),
        ("int('9' * 100000)", "int() argument is too long (more than 4,300 characters)"),
        ("int('1' * 5000, 16)", "int() argument is too long"),
        ("round(5, -10**18)", "round() ndigits must be between -1000 and 1000"),
        ("round(5.5, 10**18)", "round() ndigits must be between -1000 and 1000"),
        ("range(10**9)", "range() is limited to 100,000 items"),
        ("range(-10**30, 10**30)", "range() is limited to 100,000 items"),
        ("[x for x in range(10**12)]", "range() is limited to 100,000 items"),
        ("sum([['a']] * 10, [])", "sum() start must be a number"),
        ("sum(['a' * 1000] * 1000, '')", "sum() start must be a number"),
        ("str(huge)", "Exceeds the limit (4300 digits) for integer string conversion"),
        ("input.clear() or input", "Attribute 'clear' is not allowed"),
    ],
)
def test_evaluate__refuses(source: str, message: str) -> None:
    names = {"huge": 10**5000, "input": {"a": 1}, "text": "a" * 3_000_000}
    assert _refusal(source, names).startswith(message)


# stopped by the budget: finishes quickly with an error instead of running on ------------


@pytest.mark.parametrize(
    "source",
    [
        "[1 for a in range(100000) for b in range(100000)]",
        "sum(1 for a in range(100000) for b in range(100000))",
        "any(a == -1 for a in range(100000) for b in range(100000))",
        "len({a: b for a in range(100000) for b in range(100000)})",
        "[s + s for s in ['a' * 500000] * 1000]",
        "[x.upper() for x in ['a' * 999999] * 1000]",
        "['a' * 1000000 == 'a' * 1000000 for i in range(100000)]",
        "[big[1:] for i in range(100000)]",
        "[('zz' in big) for i in range(100000)]",
        "[big.count('a') for i in range(100000)]",
        "sorted(['a' * 100000] * 1000)",
        "max(['a' * 1000000] * 100)",
        "('a' * 999999 + 'b') in ['a' * 1000000] * 1000",
        "[1] * 1000000 == [1] * 1000000",
        "set(['x' * 100000 + str(i) for i in range(1000)])",
        "dict(enumerate('a' * 1000000))",
        "[list(zip(range(100000), range(100000))) for i in range(3)]",
        "[list(range(100000)) for i in range(100)]",
        "len(str([big] * 100))",
        "[a for a, b in ['ab'] * 1000000]",
        "[{tup: 1} for i in range(100000)]",
        "[tup in {1} for i in range(100000)]",
        "[{1: 2}.get(tup) for i in range(100000)]",
        "[any(zeros) for i in range(100000)]",
        "[any(reversed(zeros)) for i in range(100000)]",
        "[any(enumerate(zeros)) for i in range(100000)]",
        "[big.startswith(prefixes) for i in range(100000)]",
        "[str(words) for i in range(100000)]",
        "[f'{words!r}' for i in range(100000)]",
        "[set(words) for i in range(100000)]",
        "[zeros.count(1) for i in range(100000)]",
    ],
)
def test_evaluate__budget_stops_runaway_work(source: str) -> None:
    outcome, elapsed, peak = _bounded(source, LARGE_NAMES)
    assert isinstance(outcome, str) and outcome.startswith((BUDGET, "Text too large")), outcome
    # Generous bounds (tracemalloc slows things down): the point is minutes and gigabytes without them.
    assert elapsed < 5 and peak < 50_000_000


# allowed, but small and quick ------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("len([x for x in range(90000)])", 90000),
        ("len(list(range(100000)) * 10)", 1_000_000),
        ("len(list(zip(range(100000), range(100000), range(100000))) * 5)", 500_000),
        ("len('a' * 1000000)", 1_000_000),
        ("2 ** -10**9", 0.0),
        ("2 ** 9999 > 0", True),
        ("1e308 * 10", float("inf")),
        ("float('1e999999')", float("inf")),
        ("round(5.5, 1000)", 5.5),
        ("len(str(10**3000))", 3001),
        ("len(big.replace('a', 'b'))", 1_000_000),
        ("big.count('b')", 0),
        ("len(set([1] * 100000))", 1),
        ("len({x % 3 for x in range(50000)})", 3),
        ("len({(x % 7, 'k') for x in range(20000)})", 7),
        ("len(set(words) | set(words))", 10_000),
        ("len(dict(zip(words, words)))", 10_000),
        ("len({i * (2**61 - 1) for i in range(8)})", 8),
    ],
)
def test_evaluate__large_but_bounded_work_completes(source: str, expected: Any) -> None:
    outcome, elapsed, peak = _bounded(source, LARGE_NAMES)
    assert outcome == expected
    assert elapsed < 5 and peak < 50_000_000


def test_evaluate__error_messages_are_kept_short() -> None:
    message = _refusal("input['k' * 100000]", {"input": {}})
    assert message.startswith("Key 'kkkk") and len(message) <= 300


def test_evaluate__lazy_result_is_settled_inside_the_budget() -> None:
    assert _refusal("(a for a in range(100000) for b in range(100000))").startswith(BUDGET)


def test_evaluate__context_values_cannot_smuggle_methods() -> None:
    class Sneaky(str):
        def lower(self) -> str:  # type: ignore[override]
            raise AssertionError("a subclass's own method must never run")

    assert compile_expression("x.lower()").evaluate({"x": Sneaky("ABC")}) == "abc"


def test_regex_check__catastrophic_backtracking_pattern_finishes() -> None:
    check = {"name": "n", "type": "regex", "target": "s", "value": "(a+)+$"}
    started = time.perf_counter()
    result = evaluate_check(check, {"s": "a" * 30 + "!"})
    assert (result["passed"], result["detail"]) == (False, "'s' does not match /(a+)+$/")
    assert time.perf_counter() - started < 1  # Python's re takes minutes on this


def test_regex_check__backreferences_are_refused_not_run() -> None:
    check = {"name": "n", "type": "regex", "target": "s", "value": r"^(a+)+\1$"}
    assert evaluate_check(check, {"s": "a" * 30 + "!"})["detail"] == (
        r"invalid check: invalid regex (invalid escape sequence: \1)"
    )


def test_expression_check__hostile_expression_fails_the_check_not_the_run() -> None:
    check = {"name": "n", "type": "expression", "value": "[1 for a in range(100000) for b in range(100000)]"}
    result = evaluate_check(check, {})
    assert result["passed"] is False and result["detail"].startswith(f"expression error: {BUDGET}")
