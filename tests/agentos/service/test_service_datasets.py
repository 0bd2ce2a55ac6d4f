"""Stored datasets: created by hand or from runs (their input, and a corrected output as
`expected`), versioned on every change, and named by evaluations instead of an inline list.
On SQLite and PostgreSQL."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

WORKFLOW = {
    "name": "Echo",
    "nodes": [{"id": "answer", "type": "set", "values": {"answer": "input.get('question', '') + '!'"}}],
    "checks": [{"name": "answers", "type": "contains", "target": "answer", "value": "!"}],
}
EXACT = {"name": "answer", "type": "exact", "target": "answer"}


def make_workflow(api: Any) -> dict[str, Any]:
    created = api.post("/api/workflows", json=WORKFLOW)
    assert created.status_code == 201, created.text
    return dict(created.json())


def run(api: Any, question: str) -> dict[str, Any]:
    started = api.post("/api/workflows/Echo/runs", json={"input": {"question": question}})
    assert started.status_code == 201, started.text
    return dict(started.json())


def key_with_role(api: Any, role: str) -> httpx.Client:
    created = api.post("/api/keys", json={"role": role})
    assert created.status_code == 201, created.text
    return httpx.Client(base_url=str(api.base_url), headers={"Authorization": f"Bearer {created.json()['key']}"})


def test_run_to_dataset__copies_its_input_and_the_corrected_output_as_expected(api):
    make_workflow(api)
    first, second = run(api, "hi"), run(api, "bye")
    added = api.post(f"/api/runs/{first['id']}/dataset", json={"dataset": "regressions", "expected": {"answer": "hi!"},
                                                               "item": "greeting"})
    assert added.status_code == 201, added.text
    body = added.json()
    assert (body["dataset"], body["version"]) == ("regressions", 1)
    assert {k: body["item"][k] for k in ("item", "input", "expected", "source_run_id", "added_in_version")} == {
        "item": "greeting", "input": {"question": "hi"}, "expected": {"answer": "hi!"},
        "source_run_id": first["id"], "added_in_version": 1}
    plain = api.post(f"/api/runs/{second['id']}/dataset", json={"dataset": "regressions"})
    assert plain.status_code == 201, plain.text
    assert plain.json()["version"] == 2
    assert "expected" not in plain.json()["item"], "no expected given: none stored"
    assert plain.json()["item"]["item"] == '{"question":"bye"}', "the label defaults to the input, as inline items"
    nulled = api.post(f"/api/runs/{second['id']}/dataset", json={"dataset": "regressions", "expected": None})
    assert nulled.json()["item"]["expected"] is None, "an explicit null is an expected value"
    stored = api.get("/api/datasets/regressions").json()
    assert (stored["version"], stored["latest_version"]) == (3, 3)
    assert [i["item"] for i in stored["items"]] == ["greeting", '{"question":"bye"}', '{"question":"bye"}']


def test_dataset_versions__an_evaluation_of_an_old_version_runs_the_old_items(api):
    make_workflow(api)
    created = api.post("/api/datasets", json={"name": "qa", "items": [
        {"item": "a", "input": {"question": "a"}, "expected": {"answer": "a!"}},
        {"item": "b", "input": {"question": "b"}, "expected": {"answer": "wrong"}},
    ]})
    assert created.status_code == 201, created.text
    assert created.json()["version"] == 1
    item_b = created.json()["items"][1]["id"]
    added = api.post("/api/datasets/qa/items", json={"items": [{"item": "c", "input": {"question": "c"}}]})
    assert (added.status_code, added.json()["version"]) == (201, 2)
    removed = api.delete(f"/api/datasets/qa/items/{item_b}")
    assert (removed.status_code, removed.json()["version"]) == (200, 3)
    assert [i["item"] for i in api.get("/api/datasets/qa", params={"version": 1}).json()["items"]] == ["a", "b"]
    assert [i["item"] for i in api.get("/api/datasets/qa", params={"version": 2}).json()["items"]] == ["a", "b", "c"]
    assert [i["item"] for i in api.get("/api/datasets/qa").json()["items"]] == ["a", "c"]

    old = api.post("/api/workflows/Echo/evaluations", json={"name": "old", "dataset": {"name": "qa", "version": 1},
                                                            "scorers": [EXACT]})
    assert old.status_code == 201, old.text
    assert old.json()["dataset"] == {"name": "qa", "version": 1}
    assert [(i["item"], i["scores"][0]["passed"]) for i in old.json()["items"]] == [("a", True), ("b", False)]
    assert old.json()["scores"][0] | {"mean": None} == {"name": "answer", "type": "exact", "mean": None,
                                                         "passed": 1, "total": 2}
    latest = api.post("/api/workflows/Echo/evaluations", json={"name": "latest", "dataset": "qa"}).json()
    assert latest["dataset"] == {"name": "qa", "version": 3}
    assert [i["item"] for i in latest["items"]] == ["a", "c"]
    assert api.get(f"/api/evaluations/{latest['id']}").json()["dataset"] == {"name": "qa", "version": 3}
    inline = api.post("/api/workflows/Echo/evaluations", json={"name": "inline", "dataset": [{"input": {}}]}).json()
    assert "dataset" not in inline, "inline evaluations keep the reference's shape"


def test_evaluation_of_a_stored_dataset__scores_against_expected_copied_from_runs(api):
    make_workflow(api)
    right, wrong = run(api, "yes"), run(api, "no")
    api.post(f"/api/runs/{right['id']}/dataset", json={"dataset": "prod", "expected": {"answer": "yes!"}})
    api.post(f"/api/runs/{wrong['id']}/dataset", json={"dataset": "prod", "expected": {"answer": "No, thanks."}})
    similar = {"name": "close", "type": "similarity", "target": "answer", "min": 0.99}
    ev = api.post("/api/workflows/Echo/evaluations", json={"name": "prod", "dataset": "prod",
                                                           "scorers": [EXACT, similar]})
    assert ev.status_code == 201, ev.text
    scores = {s["name"]: (s["passed"], s["total"]) for s in ev.json()["scores"]}
    assert scores == {"answer": (1, 2), "close": (1, 2)}


def test_datasets__list_by_name_with_the_latest_item_count(api):
    api.post("/api/datasets", json={"name": "b", "items": [{"input": {"x": 1}}, {"input": {"x": 2}}]})
    api.post("/api/datasets", json={"name": "a"})
    listed = api.get("/api/datasets").json()
    assert [(d["name"], d["version"], d["items"]) for d in listed] == [("a", 1, 0), ("b", 1, 2)]


@pytest.mark.parametrize(("path", "body", "detail"), [
    ("/api/datasets", {"name": "x", "items": [{"input": {}, "expectd": 1}]},
     "Invalid dataset: item 1: unknown field 'expectd' (the fields are input, item, expected)"),
    ("/api/datasets", {"name": "x", "items": [{"item": 3}]},
     "Invalid dataset: item 1: 'input' is required (an object); item 1: 'item' must be a string"),
    ("/api/datasets", {"name": "x", "itms": []}, "Invalid request: itms: Extra inputs are not permitted"),
    ("/api/datasets", {"name": "a/b"}, "Invalid dataset: 'a/b' is not a dataset name (a name is 1 to 200"
                                       " characters, without '/')"),
    ("/api/datasets", {}, "Invalid dataset: None is not a dataset name (a name is 1 to 200 characters,"
                          " without '/')"),
    ("/api/datasets/stored/items", {"items": []},
     "Invalid dataset: 'items' must be a non-empty list of {\"input\": {...}}"),
    ("/api/datasets/stored/items", {"items": [{"input": []}]}, "Invalid dataset: item 1: 'input' must be an object"),
])
def test_dataset_items__follow_the_inline_dataset_rules_and_name_each_problem(api, path, body, detail):
    api.post("/api/datasets", json={"name": "stored"})
    answer = api.post(path, json=body)
    assert (answer.status_code, answer.json()) == (422, {"detail": detail})
    assert api.get("/api/datasets/stored").json()["version"] == 1, "a refused change makes no version"


def test_run_to_dataset__refuses_unknown_fields_and_bad_labels(api):
    make_workflow(api)
    one = run(api, "q")
    typo = api.post(f"/api/runs/{one['id']}/dataset", json={"dataset": "d", "expect": 1})
    assert (typo.status_code, typo.json()) == (422, {"detail": "Invalid request: expect: Extra inputs are not"
                                                               " permitted"})
    label = api.post(f"/api/runs/{one['id']}/dataset", json={"dataset": "d", "item": 5})
    assert (label.status_code, label.json()) == (422, {"detail": "Invalid dataset item: 'item' must be a string"
                                                                 " (the item's label)"})
    nameless = api.post(f"/api/runs/{one['id']}/dataset", json={})
    assert nameless.status_code == 422 and "'dataset' is required" in nameless.json()["detail"]
    assert api.get("/api/datasets").json() == []


def test_datasets__unknown_runs_datasets_versions_and_items_are_404_saying_what_to_do(api):
    make_workflow(api)
    one = run(api, "q")
    missing_run = api.post("/api/runs/000000000000/dataset", json={"dataset": "d"})
    assert (missing_run.status_code, missing_run.json()) == (
        404, {"detail": "Run '000000000000' not found: GET /api/runs lists the workspace's runs"})
    missing = api.get("/api/datasets/nope")
    assert missing.status_code == 404 and "POST /api/datasets" in missing.json()["detail"]
    assert api.post("/api/datasets/nope/items", json={"items": [{"input": {}}]}).status_code == 404
    api.post(f"/api/runs/{one['id']}/dataset", json={"dataset": "d"})
    version = api.get("/api/datasets/d", params={"version": 2})
    assert (version.status_code, version.json()) == (404, {"detail": "Dataset 'd' has no version 2: its versions"
                                                                     " are 1 to 1"})
    item = api.delete("/api/datasets/d/items/000000000000")
    assert item.status_code == 404 and "GET /api/datasets/d lists its items" in item.json()["detail"]
    evaluated = api.post("/api/workflows/Echo/evaluations", json={"name": "e", "dataset": "nope"})
    assert evaluated.status_code == 404
    evaluated = api.post("/api/workflows/Echo/evaluations", json={"name": "e", "dataset": {"name": "d",
                                                                                          "version": 9}})
    assert evaluated.status_code == 404
    taken = api.post("/api/datasets", json={"name": "d"})
    assert taken.status_code == 409 and "already exists" in taken.json()["detail"]


def test_evaluation__an_empty_or_malformed_stored_dataset_is_422(api):
    make_workflow(api)
    api.post("/api/datasets", json={"name": "empty"})
    empty = api.post("/api/workflows/Echo/evaluations", json={"name": "e", "dataset": "empty"})
    assert (empty.status_code, empty.json()) == (422, {"detail": "Invalid evaluation: dataset 'empty' has no items"
                                                                 " at version 1: add some with POST"
                                                                 " /api/datasets/empty/items or POST"
                                                                 " /api/runs/{id}/dataset"})
    odd = api.post("/api/workflows/Echo/evaluations", json={"name": "e", "dataset": {"nam": "empty", "version": 0}})
    assert (odd.status_code, odd.json()) == (422, {"detail": "Invalid evaluation: dataset: unknown field 'nam'"
                                                             " (the fields are name, version); 'name' is required"
                                                             " (a stored dataset's name); 'version' must be a"
                                                             " version number (1, 2, ...)"})
    assert api.get("/api/workflows/Echo/evaluations").json() == [], "a refused evaluation is not recorded"


def test_removing_an_item__twice_is_404_and_older_versions_keep_it(api):
    created = api.post("/api/datasets", json={"name": "d", "items": [{"input": {"n": 1}}]}).json()
    item_id = created["items"][0]["id"]
    assert api.delete(f"/api/datasets/d/items/{item_id}").status_code == 200
    again = api.delete(f"/api/datasets/d/items/{item_id}")
    assert again.status_code == 404 and "removed in version 2" in again.json()["detail"]
    assert [i["id"] for i in api.get("/api/datasets/d", params={"version": 1}).json()["items"]] == [item_id]
    assert api.get("/api/datasets/d").json()["items"] == []


def test_datasets__writes_need_the_ci_role_and_reads_the_viewer_role(api):
    make_workflow(api)
    one = run(api, "q")
    api.post("/api/datasets", json={"name": "d", "items": [{"input": {}}]})
    with key_with_role(api, "viewer") as viewer:
        assert viewer.get("/api/datasets").status_code == 200
        assert viewer.get("/api/datasets/d").status_code == 200
        for refused in (viewer.post("/api/datasets", json={"name": "e"}),
                        viewer.post("/api/datasets/d/items", json={"items": [{"input": {}}]}),
                        viewer.post(f"/api/runs/{one['id']}/dataset", json={"dataset": "d"})):
            assert refused.status_code == 403 and "needs a key with the role ci" in refused.json()["detail"]
    with key_with_role(api, "ci") as ci:
        assert ci.post(f"/api/runs/{one['id']}/dataset", json={"dataset": "d"}).status_code == 201
    assert api.get("/api/datasets/d").json()["version"] == 2


def test_datasets__another_workspace_sees_neither_the_datasets_nor_the_runs(api, new_api):
    make_workflow(api)
    one = run(api, "q")
    api.post("/api/datasets", json={"name": "private", "items": [{"input": {}}]})
    other = new_api()
    assert other.get("/api/datasets").json() == []
    assert other.get("/api/datasets/private").status_code == 404
    assert other.post(f"/api/runs/{one['id']}/dataset", json={"dataset": "mine"}).status_code == 404
    created = other.post("/api/datasets", json={"name": "private"})
    assert created.status_code == 201, "names are per workspace"
    assert api.get("/api/datasets/private").json()["items"][0]["input"] == {}


@pytest.mark.parametrize("body", [
    [], "text", 7, None, {"name": 7}, {"name": ["x"], "items": {"input": {}}}, {"name": "x", "items": "all"},
    {"name": "x" * 201}, {"name": " "}, {"name": "x", "items": [None, 1, {"input": None}]},
])
def test_datasets__odd_bodies_are_4xx_never_500(api, body):
    make_workflow(api)
    one = run(api, "q")
    api.post("/api/datasets", json={"name": "d"})
    for path in ("/api/datasets", "/api/datasets/d/items", f"/api/runs/{one['id']}/dataset"):
        answer = api.post(path, json=body)
        assert 400 <= answer.status_code < 500, (path, answer.text)
    evaluated = api.post("/api/workflows/Echo/evaluations", json={"name": "e", "dataset": body})
    assert 400 <= evaluated.status_code < 500, evaluated.text
    assert api.get("/api/datasets/d", params={"version": "x"}).status_code == 422


def test_run_to_dataset__concurrent_adds_each_get_a_version_of_their_own(api):
    make_workflow(api)
    runs = [run(api, f"q{i}") for i in range(8)]

    def add(one: dict[str, Any]) -> httpx.Response:
        return api.post(f"/api/runs/{one['id']}/dataset", json={"dataset": "busy"})

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(add, runs))
    assert [a.status_code for a in answers] == [201] * 8, [a.text for a in answers]
    assert sorted(a.json()["version"] for a in answers) == list(range(1, 9)), "one dataset, eight versions"
    stored = api.get("/api/datasets/busy").json()
    assert (stored["version"], len(stored["items"])) == (8, 8)
    for version in range(1, 9):
        assert len(api.get("/api/datasets/busy", params={"version": version}).json()["items"]) == version
