"""How a list is ordered and what each record shows: ``sortBy``/``sortOrder``, ``fields``
and ``expand``, as Okta's list users and list groups take them.

- ``sortBy`` (any single attribute path, ``profile.lastName``) orders a ``search`` query's
  results; records with the same value are ordered by id; those without the attribute come
  last. ``sortOrder`` is ``asc`` (the default) or ``desc``, and is ignored without
  ``sortBy``; both are ignored without ``search``, as Okta's documentation says ("for
  search queries only").
- ``fields`` projects users: ``id,status,profile:(firstName,lastName)``; ``id`` is always
  kept, everything else not named is left out.
- ``expand`` fills ``_embedded``: ``stats`` and ``app`` on groups, ``blocks`` and
  ``classification`` on users. An unknown value is ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ancha.world.tools.okta import errors
from ancha.world.tools.okta.call import Call
from ancha.world.tools.okta.filters import record_getter

T = TypeVar("T")


def sort_order(call: Call) -> bool | None:
    """None when the query is not sorted; else whether it is descending."""
    if not call.arg("sortBy") or not call.arg("search"):
        return None
    order = (call.arg("sortOrder") or "asc").lower()
    if order not in ("asc", "desc"):
        raise errors.ApiValidation("sortOrder", "sortOrder: The value must be asc or desc.")
    return order == "desc"


def _key(value: Any) -> tuple[int, Any]:
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, int | float):
        return (0, value)
    return (1, str(value))


def sorted_records(
    records: list[T],
    as_json: Callable[[T], dict[str, Any]],
    id_of: Callable[[T], str],
    path: str,
    descending: bool,
) -> list[T]:
    """``records`` ordered by the attribute ``path`` (ASCII order), ties by id, missing last."""
    present: list[tuple[Any, T]] = []
    missing: list[T] = []
    for record in sorted(records, key=id_of):
        value = record_getter(as_json(record))(path)
        if value is None or isinstance(value, dict | list):
            missing.append(record)
        else:
            present.append((_key(value), record))
    present.sort(key=lambda pair: pair[0], reverse=descending)
    return [r for _, r in present] + missing


def page_after(
    records: list[T], id_of: Callable[[T], str], cursor: str | None, limit: int
) -> tuple[list[T], bool]:
    """One page of an ordered list after the record whose id is ``cursor``."""
    start = 0
    if cursor:
        start = next((n + 1 for n, r in enumerate(records) if id_of(r) == cursor), 0)
    chunk = records[start : start + limit]
    return chunk, start + limit < len(records)


# --- fields --------------------------------------------------------------------------------


def parse_fields(text: str) -> tuple[set[str], set[str] | None]:
    """``id,status,profile:(firstName,city)`` -> ({id, status, profile}, {firstName, city});
    the profile set is None when ``profile`` is named whole (or not at all)."""
    top: set[str] = set()
    profile: set[str] | None = None
    rest = text.replace(" ", "")
    while rest:
        name, sep, tail = rest.partition(",")
        if name.startswith("profile:("):
            inner, closed, after = rest[len("profile:(") :].partition(")")
            if not closed or (after and not after.startswith(",")):
                raise errors.ApiValidation("fields", f"fields: The fields parameter is not valid: {text}")
            profile = {p for p in inner.split(",") if p}
            top.add("profile")
            rest = after[1:]
            continue
        if not name or not all(c.isalnum() or c in "_." for c in name):
            raise errors.ApiValidation("fields", f"fields: The fields parameter is not valid: {text}")
        top.add(name)
        rest = tail if sep else ""
    return top, profile


def project(record: dict[str, Any], fields: tuple[set[str], set[str] | None]) -> dict[str, Any]:
    top, profile = fields
    out = {k: v for k, v in record.items() if k in top or k == "id"}
    if profile is not None and isinstance(record.get("profile"), dict):
        out["profile"] = {k: v for k, v in record["profile"].items() if k in profile}
    return out


def expansions(call: Call) -> set[str]:
    return {part.strip() for part in (call.arg("expand") or "").split(",") if part.strip()}
