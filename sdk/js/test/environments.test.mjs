// Environments and pinned versions through the client, against a real `agentos serve`:
// run(..., { environment, version }), evaluate(..., { version }), release(..., { version }),
// rollback(...).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AgentOS, ConflictError, NotFoundError, ValidationError } from "@agentos/sdk";

import { startServer, triageNodes, uniqueName } from "../test-support/server.mjs";

const MENTIONS_REFUND = { name: "mentions refund", type: "contains", target: "draft_reply", value: "refund" };
const REPLY = (version) => `Version ${version}: we'll process your refund today.`;

let server;
let client;
before(async () => {
  server = await startServer();
  client = new AgentOS({ baseUrl: server.url, apiKey: server.apiKey });
});
after(async () => {
  await server?.stop();
});

/** A workflow declaring staging and production, at version 3 (each version replies its number). */
async function threeVersions(options = {}) {
  const workflow = await client.createWorkflow(uniqueName("Pinned"), triageNodes(REPLY(1)), {
    checks: [MENTIONS_REFUND],
    environments: ["staging", "production"],
    ...options,
  });
  await client.updateWorkflow(workflow.id, { nodes: triageNodes(REPLY(2)) });
  await client.updateWorkflow(workflow.id, { nodes: triageNodes(REPLY(3)) });
  return workflow;
}

test("createWorkflow: environments are declared, and the workflow shows what each runs", async () => {
  const workflow = await threeVersions();

  assert.deepEqual(workflow.environments, ["staging", "production"]);
  assert.deepEqual(workflow.deployments, { staging: null, production: null });
});

test("release with a version, then run on the environment: it runs that version's nodes", async () => {
  const workflow = await threeVersions();

  const release = await client.release(workflow.id, { environment: "production", version: 2 });
  await client.release(workflow.id, "staging");

  assert.equal(release.version, 2);
  const production = await client.run(workflow.id, { input: { ticket: "double charged" } });
  assert.equal(production.workflow_version, 2);
  assert.equal(production.state.draft_reply, REPLY(2));
  const staging = await client.run(workflow.id, { environment: "staging" });
  assert.equal(staging.workflow_version, 3);
  assert.deepEqual((await client.getWorkflow(workflow.id)).deployments, { staging: 3, production: 2 });
});

test("run: an explicit version runs it; an unknown one rejects with NotFoundError", async () => {
  const workflow = await threeVersions();

  const run = await client.run(workflow.name, { version: 1 });

  assert.equal(run.workflow_version, 1);
  assert.equal(run.state.draft_reply, REPLY(1));
  const error = await client.run(workflow.name, { version: 7 }).then(
    () => assert.fail("expected a rejection"),
    (rejected) => rejected,
  );
  assert.ok(error instanceof NotFoundError);
  assert.equal(error.message, `Workflow '${workflow.name}' has no version 7 (its versions are 1 to 3)`);
});

test("evaluate: a version that is not current is evaluated, and gates its own release", async () => {
  const workflow = await threeVersions({ gate: { min_pass_rate: 0.9 } });

  const evaluation = await client.evaluate(workflow.id, { dataset: [{ input: { ticket: "a" } }], version: 2 });
  const release = await client.release(workflow.id, { version: 2 });

  assert.equal(evaluation.workflow_version, 2);
  assert.equal(release.evaluation_id, evaluation.id);
});

test("rollback: production goes back to the version it ran before; with none, ConflictError", async () => {
  const workflow = await threeVersions();
  await client.release(workflow.id, { version: 1 });
  await client.release(workflow.id, { version: 3 });

  const rollback = await client.rollback(workflow.id, { environment: "production" });

  assert.equal(rollback.version, 1);
  assert.equal(rollback.detail, "rollback of production from v3 to v1");
  assert.equal((await client.run(workflow.id)).workflow_version, 1);
  const error = await client.rollback(workflow.id).then(
    () => assert.fail("expected a rejection"),
    (rejected) => rejected,
  );
  assert.ok(error instanceof ConflictError);
});

test("release: an environment the workflow does not declare rejects with ValidationError", async () => {
  const workflow = await threeVersions();

  const error = await client.release(workflow.id, "prodution").then(
    () => assert.fail("expected a rejection"),
    (rejected) => rejected,
  );

  assert.ok(error instanceof ValidationError);
  assert.equal(
    error.message,
    `Unknown environment 'prodution': workflow '${workflow.name}' declares staging, production`,
  );
});
