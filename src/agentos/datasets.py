"""Datasets: stored, versioned lists of evaluation items ({item, input, expected?}).

A dataset's `version` goes up by one on every change (created, items added, an item
removed). Items are never edited: each is part of the versions from `added_in_version` up to,
not including, `removed_in_version`, so reading version N gives exactly what an evaluation of
version N ran, however the dataset changed since. Items follow the rules of an evaluation's
inline dataset (``agentos.evaluations.validate_dataset``). Items can be copied from a run (its
input, and the output it should have given as `expected`): production cases become test cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentos.db import Database
from agentos.errors import Conflict, NotFound, Unprocessable
from agentos.evaluations import MAX_ITEMS, validate_dataset
from agentos.ids import new_id
from agentos.models import Dataset, DatasetItem, Run
from agentos.timestamps import utcnow

NAME_RULE = "a name is 1 to 200 characters, without '/'"
REFERENCE_FIELDS = ("name", "version")


@dataclass(frozen=True)
class DatasetVersion:
    """A dataset as it was at one version: what an evaluation of it runs."""

    dataset: Dataset
    version: int
    items: list[DatasetItem]

    def entries(self) -> list[dict[str, Any]]:
        return [item.entry() for item in self.items]

    def to_dict(self) -> dict[str, Any]:
        return self.dataset.to_dict() | {
            "version": self.version,
            "latest_version": self.dataset.version,
            "items": [item.to_dict() for item in self.items],
        }


def validate_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > 200 or "/" in name:
        raise Unprocessable(f"Invalid dataset: {name!r:.60} is not a dataset name ({NAME_RULE})")
    return name


def find_dataset(session: Session, workspace_id: str, name: str) -> Dataset:
    dataset = session.scalar(select(Dataset).where(Dataset.workspace_id == workspace_id, Dataset.name == name))
    if dataset is None:
        raise NotFound(f"Dataset '{name}' not found: create it with POST /api/datasets {{\"name\": ...}}, or add"
                       " a run to it with POST /api/runs/{id}/dataset, which creates it")
    return dataset


def list_datasets(session: Session, workspace_id: str) -> list[dict[str, Any]]:
    """Every dataset of the workspace by name, with how many items its latest version has."""
    counts = dict(
        session.execute(
            select(DatasetItem.dataset_id, func.count())
            .where(DatasetItem.workspace_id == workspace_id, DatasetItem.removed_in_version.is_(None))
            .group_by(DatasetItem.dataset_id)
        ).all()
    )
    rows = session.scalars(select(Dataset).where(Dataset.workspace_id == workspace_id).order_by(Dataset.name))
    return [d.to_dict() | {"items": counts.get(d.id, 0)} for d in rows]


def read_version(session: Session, workspace_id: str, name: str, version: int | None = None) -> DatasetVersion:
    """The dataset's items at `version` (default: its latest), oldest first."""
    dataset = find_dataset(session, workspace_id, name)
    at = dataset.version if version is None else version
    if not 1 <= at <= dataset.version:
        raise NotFound(f"Dataset '{name}' has no version {at}: its versions are 1 to {dataset.version}")
    items = session.scalars(
        select(DatasetItem)
        .where(
            DatasetItem.dataset_id == dataset.id,
            DatasetItem.added_in_version <= at,
            or_(DatasetItem.removed_in_version.is_(None), DatasetItem.removed_in_version > at),
        )
        .order_by(DatasetItem.added_in_version, DatasetItem.created_at, DatasetItem.id)
    ).all()
    return DatasetVersion(dataset, at, list(items))


def for_evaluation(session: Session, workspace_id: str, reference: Any) -> DatasetVersion:
    """The stored dataset an evaluation names: `"name"` (its latest version) or
    `{"name": ..., "version": N}`; 422 when it is malformed or has no items at that version."""
    if isinstance(reference, dict):
        problems = [f"unknown field {key!r} (the fields are {', '.join(REFERENCE_FIELDS)})"
                    for key in reference if key not in REFERENCE_FIELDS]
        if not isinstance(reference.get("name"), str):
            problems.append("'name' is required (a stored dataset's name)")
        version = reference.get("version")
        if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 1):
            problems.append("'version' must be a version number (1, 2, ...)")
        if problems:
            raise Unprocessable("Invalid evaluation: dataset: " + "; ".join(problems))
        name = reference["name"]
    else:
        name, version = reference, None
    stored = read_version(session, workspace_id, name, version)
    if not stored.items:
        raise Unprocessable(f"Invalid evaluation: dataset '{name}' has no items at version {stored.version}: add"
                            f" some with POST /api/datasets/{name}/items or POST /api/runs/{{id}}/dataset")
    if len(stored.items) > MAX_ITEMS:
        raise Unprocessable(f"Invalid evaluation: at most {MAX_ITEMS} dataset items (dataset '{name}' has"
                            f" {len(stored.items)} at version {stored.version})")
    return stored


def create_dataset(db: Database, workspace_id: str, name: Any, items: Any = None) -> DatasetVersion:
    """A new dataset at version 1, with `items` if given; 409 when the name is taken."""
    name = validate_name(name)
    entries = [] if items is None else validate_dataset(items, "dataset", "items")
    try:
        with db.write() as session:
            now = utcnow()
            dataset = Dataset(id=new_id(), workspace_id=workspace_id, name=name, version=1, created_at=now,
                              updated_at=now)
            session.add(dataset)
            session.flush()
            added = _add(session, dataset, entries, None)
            return DatasetVersion(dataset, 1, added)
    except IntegrityError:
        raise Conflict(f"Dataset '{name}' already exists: add items to it with POST /api/datasets/{name}/items"
                       ) from None


def add_items(db: Database, workspace_id: str, name: str, items: Any) -> DatasetVersion:
    """Add items as a new version; the answer holds the new version and the items added."""
    entries = validate_dataset(items, "dataset", "items")
    with db.write() as session:
        dataset = _next_version(session, workspace_id, name)
        return DatasetVersion(dataset, dataset.version, _add(session, dataset, entries, None))


def remove_item(db: Database, workspace_id: str, name: str, item_id: str) -> DatasetVersion:
    """Remove an item as a new version (older versions keep it); the answer holds the item."""
    with db.write() as session:
        dataset = find_dataset(session, workspace_id, name)
        item = session.scalar(
            select(DatasetItem).where(DatasetItem.dataset_id == dataset.id, DatasetItem.id == item_id)
        )
        if item is None or item.removed_in_version is not None:
            where = "" if item is None else f" (it was removed in version {item.removed_in_version})"
            raise NotFound(f"Dataset '{name}' has no item '{item_id}'{where}: GET /api/datasets/{name} lists its"
                           " items and their ids")
        dataset = _next_version(session, workspace_id, name)
        item.removed_in_version = dataset.version
        return DatasetVersion(dataset, dataset.version, [item])


def add_run(
    db: Database, workspace_id: str, run_id: str, name: Any, label: Any = None, expected: Any = None,
    has_expected: bool = False,
) -> DatasetVersion:
    """Copy a run's input (with `expected`, the output it should have given, when given) into
    the dataset as a new version, creating the dataset if it does not exist."""
    name = validate_name(name)
    if label is not None and not isinstance(label, str):
        raise Unprocessable("Invalid dataset item: 'item' must be a string (the item's label)")
    entry: dict[str, Any] = {"input": {}}
    if label:
        entry["item"] = label
    if has_expected:
        entry["expected"] = expected
    for attempt in (1, 2):
        try:
            with db.write() as session:
                run = session.scalar(select(Run).where(Run.workspace_id == workspace_id, Run.id == run_id))
                if run is None:
                    raise NotFound(f"Run '{run_id}' not found: GET /api/runs lists the workspace's runs")
                entry["input"] = run.input
                entries = validate_dataset([entry], "dataset item")
                exists = session.scalar(
                    select(Dataset.id).where(Dataset.workspace_id == workspace_id, Dataset.name == name)
                )
                if exists is None:
                    now = utcnow()
                    dataset = Dataset(id=new_id(), workspace_id=workspace_id, name=name, version=1,
                                      created_at=now, updated_at=now)
                    session.add(dataset)
                    session.flush()
                else:
                    dataset = _next_version(session, workspace_id, name)
                return DatasetVersion(dataset, dataset.version, _add(session, dataset, entries, run.id))
        except IntegrityError:
            if attempt == 2:  # pragma: no cover - only when two adds create the dataset at once, twice
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _next_version(session: Session, workspace_id: str, name: str) -> Dataset:
    """The dataset, its version bumped by one in this transaction; the UPDATE locks its row on
    PostgreSQL, so concurrent changes get one version each."""
    dataset = find_dataset(session, workspace_id, name)
    session.execute(
        update(Dataset)
        .where(Dataset.id == dataset.id)
        .values(version=Dataset.version + 1, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    session.refresh(dataset)
    return dataset


def _add(session: Session, dataset: Dataset, entries: list[dict[str, Any]], run_id: str | None) -> list[DatasetItem]:
    live = session.scalar(
        select(func.count()).select_from(DatasetItem)
        .where(DatasetItem.dataset_id == dataset.id, DatasetItem.removed_in_version.is_(None))
    ) or 0
    if live + len(entries) > MAX_ITEMS:
        raise Unprocessable(f"Invalid dataset: at most {MAX_ITEMS} items (dataset '{dataset.name}' has {live})")
    now = utcnow()
    # A microsecond apart, so that items read back in the order they were given.
    added = [
        DatasetItem(id=new_id(), dataset_id=dataset.id, workspace_id=dataset.workspace_id, item=entry["item"],
                    input=entry["input"], expected=entry.get("expected"), has_expected="expected" in entry,
                    source_run_id=run_id, added_in_version=dataset.version, removed_in_version=None,
                    created_at=now + timedelta(microseconds=i))
        for i, entry in enumerate(entries)
    ]
    session.add_all(added)
    session.flush()
    return added
