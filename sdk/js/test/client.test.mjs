// The client against a real `agentos serve`: workflows, checks, runs, evaluations,
// releases, metrics and the typed errors.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  AgentOS,
  AgentOSError,
  APIConnectionError,
  AuthenticationError,
  ConflictError,
  NotFoundError,
  ReleaseBlockedError,
  ValidationError,
} from "@agentos/sdk";

import { startServer, triageNodes, uniqueName } from "../test-support/server.mjs";

const PASSING = { name: "mentions refund", type: "contains", target: "draft_reply", value: "refund" };
const FAILING = { name: "mentions a date", type: "contains", target: "draft_reply", value: "tomorrow" };
const BUDGET = { name: "under budget", type: "max_cost_usd", value: 0.05 };
const DATASET = [{ input: { ticket: "double charged" } }, { input: { ticket: "refund please" } }];

let server;
let client;
before(async () => {
  server = await startServer();
  client = new AgentOS({ baseUrl: server.url, apiKey: server.apiKey });
});
after(async () => {
  await server?.stop();
});

const makeWorkflow = (options = {}, reply) =>
  client.createWorkflow(uniqueName("Triage"), triageNodes(reply), options);

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the call to be rejected");
}

test("createWorkflow: version 1 with nodes, checks and gate", async () => {
  const name = uniqueName("Create");
  const workflow = await client.createWorkflow(name, triageNodes(), {
    checks: [PASSING, BUDGET],
    gate: { min_pass_rate: 0.9 },
  });

  assert.match(workflow.id, /^[0-9a-f]{12}$/);
  assert.equal(workflow.name, name);
  assert.equal(workflow.version, 1);
  assert.equal(workflow.nodes[0].id, "draft");
  assert.deepEqual(workflow.checks.map((c) => c.name), ["mentions refund", "under budget"]);
  assert.equal(workflow.gate.min_pass_rate, 0.9);
});

test("getWorkflow: by id, by exact name with reserved characters, by object", async () => {
  const name = uniqueName("Crew #1: refunds & disputes? 100%");
  const created = await client.createWorkflow(name, triageNodes());

  assert.equal((await client.getWorkflow(created.id)).id, created.id);
  assert.equal((await client.getWorkflow(name)).id, created.id);
  assert.equal((await client.getWorkflow(created)).name, name);
  assert.ok((await client.listWorkflows()).some((w) => w.id === created.id));
});

test("updateWorkflow: new nodes bump the version; versions lists both", async () => {
  const workflow = await makeWorkflow();

  const updated = await client.updateWorkflow(workflow.name, { nodes: triageNodes("A different reply.") });

  assert.equal(updated.version, 2);
  assert.equal(updated.nodes[0].responses[0].text, "A different reply.");
  assert.deepEqual(new Set((await client.versions(workflow.id)).map((v) => v.version)), new Set([1, 2]));
});

test("deleteWorkflow: afterwards getWorkflow rejects with NotFoundError carrying the detail", async () => {
  const workflow = await makeWorkflow();

  await client.deleteWorkflow(workflow.id);

  const error = await rejection(client.getWorkflow(workflow.id));
  assert.ok(error instanceof NotFoundError);
  assert.ok(error instanceof AgentOSError);
  assert.equal(error.status, 404);
  assert.equal(typeof error.detail, "string");
  assert.equal(error.message, error.detail);
});

test("createWorkflow: a taken name rejects with ConflictError", async () => {
  const workflow = await makeWorkflow();

  const error = await rejection(client.createWorkflow(workflow.name, triageNodes()));

  assert.ok(error instanceof ConflictError);
  assert.equal(error.status, 409);
  assert.equal(error.message, error.detail);
});

test("setChecks: replaces the list, gives chk_ ids, bumps the version", async () => {
  const workflow = await makeWorkflow({ checks: [FAILING] });

  const updated = await client.setChecks(workflow.name, [PASSING, BUDGET]);

  assert.equal(updated.id, workflow.id);
  assert.equal(updated.version, workflow.version + 1);
  assert.deepEqual(updated.checks.map((c) => c.name), ["mentions refund", "under budget"]);
  assert.ok(updated.checks.every((c) => c.id.startsWith("chk_")));
});

test("setChecks: an invalid batch rejects with ValidationError listing every problem", async () => {
  const workflow = await makeWorkflow({ checks: [PASSING] });

  const error = await rejection(
    client.setChecks(workflow.id, [
      { type: "contains", target: "draft_reply", value: "x" },
      { name: "b", type: "looks_good" },
    ]),
  );

  assert.ok(error instanceof ValidationError);
  assert.equal(error.status, 400);
  assert.equal(error.message, "Invalid checks: check 1: name is required; check 2: unknown type 'looks_good'");
  assert.deepEqual((await client.getWorkflow(workflow.id)).checks, workflow.checks);
});

test("setGate: stores and clears the threshold", async () => {
  const workflow = await makeWorkflow();

  assert.equal((await client.setGate(workflow.name, 0.75)).gate.min_pass_rate, 0.75);
  assert.equal((await client.setGate(workflow.id, null)).gate, null);
});

test("run: waits and carries state, cost and evals", async () => {
  const workflow = await makeWorkflow({ checks: [PASSING, FAILING] });

  const run = await client.run(workflow.name, { input: { ticket: "double charged" } });

  assert.equal(run.status, "success");
  assert.equal(run.workflow_id, workflow.id);
  assert.equal(run.workflow_version, workflow.version);
  assert.deepEqual(run.input, { ticket: "double charged" });
  assert.equal(run.state.draft_reply, "We'll process your refund today.");
  assert.equal(run.error, null);
  assert.equal(typeof run.cost_usd, "number");
  assert.deepEqual([run.evals.passed, run.evals.total], [1, 2]);
  assert.equal(run.evals.results[0].detail, "'draft_reply' contains 'refund'");
  assert.equal((await client.getRun(run.id)).id, run.id);
});

test("run: a workflow without checks has evals null", async () => {
  const run = await client.run(await makeWorkflow(), { input: { ticket: "hi" } });

  assert.equal(run.status, "success");
  assert.equal(run.evals, null);
});

test("listRuns: filters by workflow and status", async () => {
  const workflow = await makeWorkflow();
  const first = await client.run(workflow, { input: { ticket: "a" } });
  const second = await client.run(workflow.id, { input: { ticket: "b" } });
  await client.run(await makeWorkflow(), { input: { ticket: "c" } });

  const ids = (runs) => new Set(runs.map((r) => r.id));
  assert.deepEqual(ids(await client.listRuns({ workflow: workflow.id })), new Set([first.id, second.id]));
  assert.deepEqual(ids(await client.listRuns({ workflow, status: "success" })), new Set([first.id, second.id]));
  assert.deepEqual(await client.listRuns({ workflow: workflow.id, status: "failed" }), []);
});

test("evaluate, compare: completed evaluations with a pass rate, compared item by item", async () => {
  const workflow = await makeWorkflow({ checks: [PASSING, FAILING] });

  const before = await client.evaluate(workflow.name, { dataset: DATASET, name: "before" });
  assert.equal(before.status, "completed");
  assert.equal(before.name, "before");
  assert.equal(before.check_pass_rate, 0.5);
  assert.equal((await client.getEvaluation(before.id)).id, before.id);
  assert.ok((await client.evaluations(workflow.id)).some((e) => e.id === before.id));

  await client.updateWorkflow(workflow.id, { nodes: triageNodes("We'll look into it.") });
  const afterChange = await client.evaluate(workflow.id, { dataset: DATASET, name: "after" });
  const comparison = await client.compare(before.id, afterChange.id);
  assert.equal(comparison.base.id, before.id);
  assert.equal(comparison.candidate.id, afterChange.id);
  assert.equal(comparison.regressions, 2);
  assert.deepEqual(comparison.items.map((row) => row.regressed), [["mentions refund"], ["mentions refund"]]);
});

test("evaluate: without a name gets a timestamped one", async () => {
  const evaluation = await client.evaluate(await makeWorkflow({ checks: [PASSING] }), { dataset: DATASET });

  assert.equal(evaluation.status, "completed");
  assert.match(evaluation.name, /^evaluation \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
});

test("evaluate: scorers grade each item against its expected output", async () => {
  const workflow = await makeWorkflow({ checks: [PASSING] }, "Your refund is on its way.");
  const dataset = DATASET.map((item) => ({ ...item, expected: { draft_reply: "your refund is on its way." } }));

  const evaluation = await client.evaluate(workflow.id, {
    dataset,
    name: "scored",
    scorers: [{ name: "reply", type: "exact", target: "draft_reply" }],
  });

  assert.deepEqual(evaluation.scores, [{ name: "reply", type: "exact", mean: 1.0, passed: 2, total: 2 }]);
  assert.deepEqual(evaluation.items.map((item) => item.scores[0].passed), [true, true]);
});

test("release: blocked by the gate rejects with ReleaseBlockedError and the reference's detail", async () => {
  const workflow = await makeWorkflow({ checks: [PASSING, FAILING], gate: { min_pass_rate: 0.9 } });
  await client.evaluate(workflow.id, { dataset: DATASET, name: "candidate" });

  const error = await rejection(client.release(workflow.name, { environment: "production" }));

  assert.ok(error instanceof ReleaseBlockedError);
  assert.ok(error instanceof ValidationError);
  assert.equal(error.status, 422);
  assert.equal(error.message, "eval gate: check pass-rate 50.0% is below the required 90.0% — deployment blocked");
  assert.equal(error.detail, error.message);
  const attempts = await client.releases(workflow.id);
  assert.deepEqual(attempts.map((r) => [r.status, r.detail]), [["blocked", error.message]]);
});

test("release: passing the gate records a release", async () => {
  const workflow = await makeWorkflow({ checks: [PASSING], gate: { min_pass_rate: 0.9 } });
  const evaluation = await client.evaluate(workflow.id, { dataset: DATASET, name: "good" });

  const release = await client.release(workflow.id);

  assert.equal(release.environment, "production");
  assert.equal(release.version, workflow.version);
  assert.equal(release.evaluation_id, evaluation.id);
  assert.ok((await client.releases(workflow.name)).some((r) => r.id === release.id));
  assert.equal((await client.release(workflow, "staging")).environment, "staging");
});

test("metrics: the reference's fields", async () => {
  await client.run(await makeWorkflow({ checks: [PASSING] }), { input: { ticket: "x" } });

  const metrics = await client.metrics();

  for (const field of [
    "total_runs", "success_rate", "total_cost_usd", "active_workflows", "runs_by_day", "eval_pass_rate",
    "evaluated_runs",
  ]) {
    assert.ok(field in metrics, field);
  }
  assert.ok(metrics.total_runs >= 1);
});

test("a wrong key rejects with AuthenticationError; another workspace's key sees nothing", async () => {
  const stranger = new AgentOS({ baseUrl: server.url, apiKey: "aos_live_wrong" });
  const error = await rejection(stranger.listWorkflows());
  assert.ok(error instanceof AuthenticationError);
  assert.equal(error.status, 401);
  assert.equal(error.message, error.detail);

  const workflow = await makeWorkflow();
  const outsider = new AgentOS({ baseUrl: server.url, apiKey: await server.newKey("elsewhere") });
  assert.ok((await rejection(outsider.getWorkflow(workflow.id))) instanceof NotFoundError);
});

test("apiKey and baseUrl come from AGENTOS_API_KEY and AGENTOS_BASE_URL", async () => {
  const saved = { key: process.env.AGENTOS_API_KEY, url: process.env.AGENTOS_BASE_URL };
  process.env.AGENTOS_API_KEY = server.apiKey;
  process.env.AGENTOS_BASE_URL = server.url;
  try {
    assert.ok(Array.isArray(await new AgentOS().listWorkflows()));
    delete process.env.AGENTOS_API_KEY;
    assert.throws(() => new AgentOS({ baseUrl: server.url }), AuthenticationError);
  } finally {
    for (const [name, value] of [["AGENTOS_API_KEY", saved.key], ["AGENTOS_BASE_URL", saved.url]]) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test("an unreachable server rejects with APIConnectionError", async () => {
  const { port } = new URL(server.url);
  const nowhere = new AgentOS({ baseUrl: `http://127.0.0.1:${Number(port) === 65535 ? 65534 : 65535}`, apiKey: "aos_live_x" });

  const error = await rejection(nowhere.metrics());

  assert.ok(error instanceof APIConnectionError);
  assert.equal(error.status, null);
});
