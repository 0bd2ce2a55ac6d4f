"""Hosted console tasks, end to end: a task written on an uploaded run's scene, refused in
the words of Ancha's task rules when it breaks them, opened as a live world on a real Ancha
server, acted in over the world's own Slack, graded, rerun; scoped to its workspace. In
Chromium, and through the JSON API; AgentOS on PostgreSQL."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from console_task_helpers import SCENE, Workspace, free_port
from playwright.sync_api import expect
from slack_sdk import WebClient

from ancha.server.embedded import EmbeddedServer

JUDGE_REFUSED = "judge checks do not work in task files (playground task files, hosted console tasks)"
PROCESS_REFUSED = ("knows is a process check; process checks do not work in task files "
                   "(playground task files, hosted console tasks)")
ANSWER = "Settings > Data > Exports"
CHECKS: list[dict[str, Any]] = [
    {"id": "answered", "state": {"slack.message": {"channel": "$slack_support", "from": "$slack_bot",
                                                   "in_thread_of": "$slack_question", "text_contains": ANSWER}}},
    {"id": "read_the_channel", "trace": {"called": "* /api/conversations.history"}},
]
TASK = "Answer Laura in her thread: where did the CSV exports go?"


def answer_in_thread(slack: dict[str, Any]) -> None:
    """What the agent would do: read #support, reply in the customer's thread."""
    client = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    support = next(c for c in client.conversations_list()["channels"] if c["name"] == "support")
    history = client.conversations_history(channel=support["id"])["messages"]
    question = next(m for m in history if "CSV exports go" in m["text"])
    client.chat_postMessage(channel=support["id"], thread_ts=question["ts"], text=f"They moved to {ANSWER}.")


def sign_in(page: Any, workspace: Workspace, role: str = "ci") -> None:
    page.goto(f"{workspace.url}/ui/sign-in?next=/ui/tasks")
    page.fill("#key", workspace.keys[role])
    page.click("#sign-in")
    expect(page).to_have_url(re.compile(r"/ui/tasks$"))


def test_a_task_written_in_the_console_opens_a_world_that_grades_what_was_done_in_it(
        page: Any, uploaded: Workspace, new_workspace: Any, ancha: EmbeddedServer) -> None:
    uploaded.use_ancha_server(ancha.url, ancha.key)
    sign_in(page, uploaded)

    page.select_option("#task-scene", SCENE)
    page.fill("#task-name", "answer in thread")
    page.fill("#task-text", TASK)
    refused = json.dumps([*CHECKS, {"id": "kind", "judge": "The reply is kind."}])
    page.fill("#task-checks", refused)
    page.click("#save-task")
    expect(page.locator("#problems")).to_contain_text(JUDGE_REFUSED)
    expect(page.locator("#problems li")).to_have_count(1)
    expect(page.locator("#task-name")).to_have_value("answer in thread")
    expect(page.locator("#task-text")).to_have_value(TASK)
    expect(page.locator("#task-checks")).to_have_value(refused)

    page.fill("#task-checks", json.dumps(CHECKS))
    page.click("#save-task")
    expect(page).to_have_url(re.compile(r"/ui/tasks/[0-9a-f]{12}$"))
    task_url = page.url
    expect(page.locator("#task-text")).to_have_text(TASK)

    page.click("#open")
    expect(page).to_have_url(re.compile(r"\?world=env_[0-9a-f]{12}$"))
    first_world = page.url.rsplit("=", 1)[1]
    slack = {"url": page.locator('tr.tool[data-tool="slack"] .tool-url').inner_text(),
             "token": page.locator('tr.credential[data-tool="slack"][data-field="token"] code').inner_text()}
    context = json.loads(page.locator("#context-json").text_content())
    assert context["task"].strip() == TASK and context["tools"]["slack"]["token"] == slack["token"]
    assert ancha.key not in page.content(), "the Ancha server's key never reaches the browser"

    answer_in_thread(slack)
    expect(page.locator("#live-calls")).to_contain_text("POST /api/chat.postMessage")
    expect(page.locator("#live-calls")).to_contain_text("conversations.history")

    page.click("#grade")
    expect(page.locator("#grade-verdict")).to_have_text("passed")
    expect(page.locator("#check-answered")).to_have_attribute("data-status", "passed")
    expect(page.locator("#check-read_the_channel")).to_have_attribute("data-status", "passed")

    page.click("#rerun")
    expect(page).not_to_have_url(re.compile(first_world))
    expect(page.locator("#not-graded")).to_be_visible()
    expect(page.locator("#openings tr.opening")).to_have_count(2)
    page.click("#grade")
    expect(page.locator("#grade-verdict")).to_have_text("failed")  # nothing was done in the fresh world
    expect(page.locator("#check-answered")).to_have_attribute("data-status", "failed")

    page.goto(f"{task_url}?world={first_world}")
    expect(page.locator("#grade-verdict")).to_have_text("passed")  # the first world's grade is kept

    other = new_workspace()
    sign_in(page, other)
    answer = page.goto(task_url)
    assert answer is not None and answer.status == 404
    with other.api("viewer") as api:
        assert api.get(f"/api/console-tasks/{task_url.rsplit('/', 1)[1]}").status_code == 404


def test_scripts_write_open_and_grade_tasks_through_the_api(uploaded: Workspace, new_workspace: Any,
                                                           ancha: EmbeddedServer) -> None:
    uploaded.use_ancha_server(ancha.url, ancha.key)
    with uploaded.api("ci") as api:
        body = {"name": "answer in thread", "scene": SCENE, "task": TASK}
        refused = api.post("/api/console-tasks", json=body | {"checks": [*CHECKS, {"id": "k", "knows": ["laura"]}]})
        assert refused.status_code == 422 and PROCESS_REFUSED in refused.json()["detail"]
        too_many = [{"id": f"c{i}", "trace": {"called": "* /api/chat.postMessage"}} for i in range(21)]
        refused = api.post("/api/console-tasks", json=body | {"checks": too_many})
        assert refused.status_code == 422
        assert "a playground task holds at most 20 checks, this one has 21" in refused.json()["detail"]
        refused = api.post("/api/console-tasks", json=body | {"checks": [{"id": "x", "state": {
            "slack.message": {"channel": "$slack_nowhere"}}}]})
        assert refused.status_code == 422 and "unknown ref $slack_nowhere" in refused.json()["detail"]

        created = api.post("/api/console-tasks", json=body | {"checks": CHECKS})
        assert created.status_code == 201, created.text
        task = created.json()
        assert task["checks"] == CHECKS and task["openings"] == []
        opened = api.post(f"/api/console-tasks/{task['id']}/open")
        assert opened.status_code == 201, opened.text
        context = opened.json()["context"]
        answer_in_thread(context["tools"]["slack"])
        graded = api.post(f"/api/console-tasks/{task['id']}/grade", json={})
        assert graded.status_code == 200, graded.text
        grade = graded.json()["grade"]
        assert grade["passed"] and [r["status"] for r in grade["results"]] == ["passed", "passed"]
        kept = api.get(f"/api/console-tasks/{task['id']}").json()["openings"]
        assert [o["env_id"] for o in kept] == [context["env_id"]] and kept[0]["grade"]["passed"]
        assert [t["id"] for t in api.get("/api/console-tasks").json()["tasks"]] == [task["id"]]

    with new_workspace().api("admin") as stranger:
        for answer in (stranger.get(f"/api/console-tasks/{task['id']}"),
                       stranger.post(f"/api/console-tasks/{task['id']}/open"),
                       stranger.post(f"/api/console-tasks/{task['id']}/grade", json={})):
            assert answer.status_code == 404, answer.text
        assert stranger.get("/api/console-tasks").json()["tasks"] == []


def test_a_viewer_reads_tasks_but_saving_one_is_a_403_page_that_says_so(uploaded: Workspace) -> None:
    with httpx.Client(base_url=uploaded.url, timeout=30) as browser:
        browser.post("/ui/sign-in", data={"key": uploaded.keys["viewer"], "next": "/ui/tasks"})
        listed = browser.get("/ui/tasks")
        assert listed.status_code == 200 and "needs a ci or admin key" in listed.text
        saved = browser.post("/ui/tasks", data={"scene": SCENE, "name": "mine", "task": TASK,
                                                "checks": json.dumps(CHECKS)})
        assert saved.status_code == 403
        assert "role is viewer, and saving a console task needs a key with the role ci or admin" in saved.text
        assert 'value="mine"' in saved.text, "what was typed is kept"
    with uploaded.api("viewer") as api:
        assert api.post("/api/console-tasks", json={"name": "x", "scene": SCENE, "task": TASK,
                                                    "checks": CHECKS}).status_code == 403


def test_without_an_ancha_server_opening_says_how_to_configure_one(uploaded: Workspace) -> None:
    with uploaded.api("ci") as api:
        task = api.post("/api/console-tasks", json={"name": "t", "scene": SCENE, "task": TASK, "checks": CHECKS}).json()
        answer = api.post(f"/api/console-tasks/{task['id']}/open")
    assert answer.status_code == 409 and "PUT /api/workspace/ancha-server" in answer.json()["detail"]
    with httpx.Client(base_url=uploaded.url, timeout=30) as browser:
        browser.post("/ui/sign-in", data={"key": uploaded.keys["ci"], "next": "/ui/tasks"})
        shown = browser.get(f"/ui/tasks/{task['id']}")
        assert shown.status_code == 200 and 'id="no-server"' in shown.text
        assert "PUT /api/workspace/ancha-server" in shown.text
        opened = browser.post(f"/ui/tasks/{task['id']}/open")
        assert opened.status_code == 409 and "has no Ancha server" in opened.text


def test_an_unreachable_ancha_server_is_a_clear_message_never_a_500(uploaded: Workspace) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    uploaded.use_ancha_server(nowhere, "some-key")
    with uploaded.api("ci") as api:
        task = api.post("/api/console-tasks", json={"name": "t", "scene": SCENE, "task": TASK, "checks": CHECKS}).json()
        answer = api.post(f"/api/console-tasks/{task['id']}/open")
    assert answer.status_code == 502 and f"Ancha server at {nowhere} could not be reached" in answer.json()["detail"]
    with httpx.Client(base_url=uploaded.url, timeout=30) as browser:
        browser.post("/ui/sign-in", data={"key": uploaded.keys["ci"], "next": "/ui/tasks"})
        opened = browser.post(f"/ui/tasks/{task['id']}/open")
        assert opened.status_code == 502 and "could not be reached" in opened.text


def test_checks_that_are_not_json_come_back_in_the_form_as_typed_with_where_the_json_breaks(
        uploaded: Workspace) -> None:
    typed = '[\n  {"id": "answered", "trace": {"called": "* /api/chat.postMessage"}},\n  oops\n]'
    with httpx.Client(base_url=uploaded.url, timeout=30) as browser:
        browser.post("/ui/sign-in", data={"key": uploaded.keys["ci"], "next": "/ui/tasks"})
        refused = browser.post("/ui/tasks", data={"scene": SCENE, "name": "mine", "task": TASK, "checks": typed})
        assert refused.status_code == 422
        assert "checks (line 3)" in refused.text and "not valid JSON (column 3): Expecting value" in refused.text
        assert typed.replace('"', "&#34;") in refused.text
        unknown = browser.post("/ui/tasks", data={"scene": "no-such-scene", "name": "mine", "task": TASK,
                                                  "checks": json.dumps(CHECKS)})
        assert unknown.status_code == 422 and "has a scene &#39;no-such-scene&#39;" in unknown.text
        assert browser.get("/ui/tasks").text.count('class="task-row"') == 0, "nothing refused was saved"
