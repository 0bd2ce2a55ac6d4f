"""The expression language: what it reads, what it computes, what it refuses."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentos.evals import Expression, ExpressionError, compile_expression

NAMES: dict[str, Any] = {
    "draft_reply": "We'll process your refund today.",
    "category": "Billing",
    "cost_usd": 0.0035,
    "duration_ms": 4210,
    "input": {"ticket": "double charged", "locale": "en-US", "tags": ["vip", "eu"]},
    "scores": [3, 1, 2],
    "nothing": None,
}


def _eval(source: str, names: dict[str, Any] | None = None) -> Any:
    return compile_expression(source).evaluate(NAMES if names is None else names)


def _error(source: str, names: dict[str, Any] | None = None) -> str:
    with pytest.raises(ExpressionError) as caught:
        _eval(source, names)
    return str(caught.value)


# the reference's expressions ---------------------------------------------------


def test_reference__reply_is_substantial() -> None:
    assert _eval("len(draft_reply) > 40") is False


def test_reference__substantial_and_on_budget() -> None:
    assert _eval("len(draft_reply) > 20 and cost_usd <= 0.05") is True


def test_reference__input_locale() -> None:
    assert _eval("input.get('locale') == 'en-US'") is True
    assert _eval("input.get('locale') == 'en-US'", {"input": {}}) is False


def test_reference__no_error_leaked() -> None:
    assert _eval("'error' not in draft_reply.lower()") is True


def test_reference__unknown_variable() -> None:
    assert _error("reploy != ''") == "Unknown variable 'reploy'"


# what the language computes ----------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("1 + 2 * 3 - 4 / 2", 5.0),
        ("7 // 2, 7 % 3, -2 ** 2, 2 ** -1", (3, 1, -4, 0.5)),
        ("1 < duration_ms < 5000", True),
        ("category.lower() in ('billing', 'refund')", True),
        ("category if cost_usd > 1 else 'cheap'", "cheap"),
        ("nothing is None and draft_reply is not None", True),
        ("not scores", False),
        ("scores or 'fallback'", [3, 1, 2]),
        ("nothing or 'fallback'", "fallback"),
        ("scores[0] + scores[-1]", 5),
        ("draft_reply[:5]", "We'll"),
        ("draft_reply[::-1][:6]", ".yadot"),
        ("input['tags'][1].upper()", "EU"),
        ("[s * 2 for s in scores if s > 1]", [6, 4]),
        ("{t: len(t) for t in input['tags']}", {"vip": 3, "eu": 2}),
        ("{s % 2 for s in scores}", {0, 1}),
        ("sum(s for s in scores)", 6),
        ("[k for k, v in sorted(input.items()) if v]", ["locale", "tags", "ticket"]),
        ("any(t == 'vip' for t in input['tags']) and all(s > 0 for s in scores)", True),
        ("sorted(scores, reverse=True)", [3, 2, 1]),
        ("min(scores), max(scores), max(1, 5, 2), min([], default=0)", (1, 3, 5, 0)),
        ("round(cost_usd * 100, 2), abs(-3), int('42'), float('1.5'), str(12), bool('')",
         (0.35, 3, 42, 1.5, "12", False)),
        ("list(range(3)) + [len(x) for x in ['a', 'bb']]", [0, 1, 2, 1, 2]),
        ("dict(a=1), set([1, 1]), tuple('ab'), list(reversed(scores))", ({"a": 1}, {1}, ("a", "b"), [2, 1, 3])),
        ("list(enumerate(input['tags'], start=1))", [(1, "vip"), (2, "eu")]),
        ("list(zip(scores, input['tags']))", [(3, "vip"), (1, "eu")]),
        ("f'{category}: {len(scores)} scores ({scores!r})'", "Billing: 3 scores ([3, 1, 2])"),
        ("f'{\"café\"!a} {\"x\"!s} {nothing}'", "'caf\\xe9' x None"),
        ("'-'.join(input['tags']).title()", "Vip-Eu"),
        ("draft_reply.split()[0].replace('We', 'They')", "They'll"),
        ("draft_reply.startswith(('We', 'I')) and draft_reply.endswith('.')", True),
        ("'  x '.strip(), 'x'.removeprefix('x'), 'a,b'.partition(',')", ("x", "", ("a", ",", "b"))),
        ("'42'.isdigit() and not 'x1'.isalpha()", True),
        ("scores.count(1) + scores.index(2)", 3),
        ("{1, 2} | {3}, {1, 2} & {2}, {1, 2} - {1}", ({1, 2, 3}, {2}, {2})),
        ("state['x']", 1),
        ("[x for x in scores for y in []]", []),
        ("[(a, b) for a, b in [(1, 2), (3, 4)] if a > 1]", [(3, 4)]),
        ("[[y for y in range(x)] for x in range(3)]", [[], [0], [0, 1]]),
        ("input.keys()", ["ticket", "locale", "tags"]),
        ("(s + 1 for s in scores)", [4, 2, 3]),
        ("1 << 4, 256 >> 2, 6 ^ 3, ~0", (16, 64, 5, -1)),
    ],
)  # fmt: skip
def test_evaluate__computes_like_python(source: str, expected: Any) -> None:
    names = {**NAMES, "state": {"x": 1}}
    assert _eval(source, names) == expected


def test_evaluate__comprehension_variables_do_not_leak_or_clobber() -> None:
    names = {"x": "outer", "items": [1, 2]}
    assert _eval("[x for x in items] + [x]", names) == [1, 2, "outer"]


def test_evaluate__first_iterable_reads_the_enclosing_scope() -> None:
    assert _eval("[x for x in x]", {"x": [1, 2]}) == [1, 2]


def test_evaluate__short_circuits() -> None:
    assert _eval("nothing is not None and nothing['key']") is False
    assert _eval("scores or missing_name") == [3, 1, 2]


def test_evaluate__true_false_none_are_literals() -> None:
    assert _eval("True and not False and None is None", {}) is True


def test_evaluate__state_cannot_be_changed() -> None:
    assert _error("input.update({'x': 1})") == "Attribute 'update' is not allowed"
    assert _error("scores.append(4)") == "Attribute 'append' is not allowed"
    assert _error("input.pop('ticket')") == "Attribute 'pop' is not allowed"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("1 / 0", "division by zero"),
        ("scores[10]", "list index out of range"),
        ("input['missing']", "Key 'missing' not found"),
        ("len(5)", "object of type 'int' has no len()"),
        ("'a' < 1", "'<' not supported between instances of 'str' and 'int'"),
        ("int('x')", "invalid literal for int() with base 10: 'x'"),
        ("(5).lower()", "'int' has no method 'lower'"),
        ("scores.get(1)", "'list' has no method 'get'"),
        ("[a for a, b in [(1, 2, 3)]]", "cannot unpack 3 values into 2 names"),
        ("min([])", "min() arg is an empty sequence"),
    ],
)
def test_evaluate__runtime_errors_are_expression_errors(source: str, message: str) -> None:
    assert _error(source) == message


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("open('x')", "Function 'open' is not allowed"),
        ("eval('1')", "Function 'eval' is not allowed"),
        ("getattr(scores, 'append')", "Function 'getattr' is not allowed"),
        ("type(scores)", "Function 'type' is not allowed"),
        ("'{}'.format(1)", "Attribute 'format' is not allowed"),
        ("draft_reply.lower", "Method 'lower' must be called"),
        ("input.locale", "Attribute 'locale' is not allowed"),
        ("scores.__class__", "Access to '__class__' is not allowed"),
        ("_secret", "Access to '_secret' is not allowed"),
        ("__import__('os')", "Access to '__import__' is not allowed"),
        ("lambda: 1", "Lambda expressions are not allowed"),
        ("(y := 1)", "Assignment expressions (:=) are not allowed"),
        ("[*scores]", "Unpacking with '*' is not allowed"),
        ("{**input}", "Unpacking with '**' is not allowed"),
        ("len(*scores)", "Unpacking arguments with '*' or '**' is not allowed"),
        ("open(*scores)", "Function 'open' is not allowed"),
        ("sorted(scores, key=len)", "Keyword argument 'key' is not allowed for sorted()"),
        ("scores[0](1)", "Only the allowed functions and methods can be called"),
        ("b'bytes'", "Constants of type 'bytes' are not allowed"),
        ("...", "Constants of type 'ellipsis' are not allowed"),
        ("f'{cost_usd:.2f}'", "Format specifications in f-strings are not allowed"),
        ("[x async for x in scores]", "'async for' is not allowed"),
        ("[1 for scores[0] in scores]", "Comprehension targets must be names"),
        ("scores @ scores", "Operator '@' is not allowed"),
        ("", "Expression is empty"),
        ("x = 1", "Syntax error: invalid syntax (column 3)"),
        ("import os", "Syntax error: invalid syntax (column 1)"),
    ],
)
def test_compile__refusals_name_what_was_refused(source: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source)
    assert str(caught.value) == message


def test_compile__source_must_be_text() -> None:
    with pytest.raises(ExpressionError, match="Expression must be a string"):
        compile_expression(42)  # type: ignore[arg-type]


def test_compile__leading_whitespace_is_fine() -> None:
    assert compile_expression("  \n  1 + 1\n").evaluate({}) == 2


def test_compile__keeps_its_source_and_is_reused() -> None:
    expression = compile_expression("len(draft_reply) > 40")
    assert isinstance(expression, Expression)
    assert expression.source == "len(draft_reply) > 40"
    assert compile_expression("len(draft_reply) > 40") is expression


def test_evaluate__one_expression_many_threads() -> None:
    expression = compile_expression("sum(x * k for x in range(200))")
    failures: list[tuple[int, Any]] = []

    def run(k: int) -> None:
        for _ in range(50):
            got = expression.evaluate({"k": k})
            if got != 19900 * k:
                failures.append((k, got))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_evaluate__budget_is_per_evaluation() -> None:
    # Each evaluation may use most of the budget; it does not accumulate across calls.
    expression = compile_expression("len([x for x in range(90000)])")
    assert [expression.evaluate({}) for _ in range(3)] == [90000] * 3
