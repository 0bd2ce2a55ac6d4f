// Stored datasets through the client, against a real `agentos serve`: createDataset,
// listDatasets, getDataset (at a version), addDatasetItems, removeDatasetItem,
// addRunToDataset, and evaluate(..., { dataset: NAME or { name, version } }).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AgentOS, ConflictError, NotFoundError, ValidationError } from "@agentos/sdk";

import { startServer, triageNodes, uniqueName } from "../test-support/server.mjs";

const EXACT = { name: "reply", type: "exact", target: "draft_reply" };
const datasetName = (stem) => uniqueName(stem).replaceAll(" ", "-");

let server;
let client;
before(async () => {
  server = await startServer();
  client = new AgentOS({ baseUrl: server.url, apiKey: server.apiKey });
});
after(async () => {
  await server?.stop();
});

test("addRunToDataset copies the run's input and expected; evaluate scores the stored dataset", async () => {
  const workflow = await client.createWorkflow(uniqueName("Datasets"), triageNodes("Refund sent."));
  const name = datasetName("from-prod");
  const good = await client.run(workflow.id, { input: { ticket: "refund please" } });
  const bad = await client.run(workflow.id, { input: { ticket: "where is my parcel" } });

  const added = await client.addRunToDataset(good, name, { expected: { draft_reply: "refund sent." }, item: "refund" });
  assert.equal(added.dataset, name);
  assert.equal(added.version, 1);
  assert.deepEqual(
    { ...added.item, id: null, created_at: null },
    {
      id: null, item: "refund", input: { ticket: "refund please" }, expected: { draft_reply: "refund sent." },
      source_run_id: good.id, added_in_version: 1, created_at: null,
    },
  );
  await client.addRunToDataset(bad.id, name, { expected: { draft_reply: "It ships tomorrow." } });
  const nulled = await client.addRunToDataset(bad.id, name, { expected: null });
  assert.equal(nulled.item.expected, null, "null is sent as an expected value");
  const plain = await client.addRunToDataset(bad.id, name);
  assert.equal("expected" in plain.item, false);
  await client.removeDatasetItem(name, nulled.item);
  await client.removeDatasetItem({ name }, plain.item.id);

  const evaluation = await client.evaluate(workflow.name, { dataset: name, name: "stored", scorers: [EXACT] });
  assert.deepEqual(evaluation.dataset, { name, version: 6 });
  assert.deepEqual(evaluation.scores, [{ name: "reply", type: "exact", mean: 0.5, passed: 1, total: 2 }]);
  const old = await client.evaluate(workflow.id, { dataset: { name, version: 1 }, name: "old" });
  assert.deepEqual(old.items.map((item) => item.item), ["refund"]);
});

test("createDataset, addDatasetItems, removeDatasetItem make versions; getDataset reads any of them", async () => {
  const name = datasetName("qa");
  const created = await client.createDataset(name, { items: [{ item: "a", input: { ticket: "a" }, expected: "A" }] });
  assert.equal(created.version, 1);
  const added = await client.addDatasetItems(created, [{ item: "b", input: { ticket: "b" } }]);
  assert.equal(added.version, 2);
  assert.equal((await client.removeDatasetItem(name, created.items[0].id)).version, 3);

  assert.deepEqual((await client.getDataset(name)).items.map((i) => i.item), ["b"]);
  assert.deepEqual((await client.getDataset(name, { version: 2 })).items.map((i) => i.item), ["a", "b"]);
  const listed = (await client.listDatasets()).find((d) => d.name === name);
  assert.deepEqual([listed.version, listed.items], [3, 1]);
});

test("dataset errors reject with typed errors carrying the server's detail", async () => {
  const name = datasetName("errors");
  await client.createDataset(name);
  await assert.rejects(client.createDataset(name), ConflictError);
  await assert.rejects(client.getDataset(name, { version: 9 }), (err) =>
    err instanceof NotFoundError && /has no version 9/.test(err.message));
  await assert.rejects(client.addDatasetItems(name, [{ input: {}, expectd: 1 }]), (err) =>
    err instanceof ValidationError && /unknown field 'expectd'/.test(err.message));
  await assert.rejects(client.addRunToDataset("000000000000", name), NotFoundError);
  const workflow = await client.createWorkflow(uniqueName("Empty"), triageNodes());
  await assert.rejects(client.evaluate(workflow.id, { dataset: name }), (err) =>
    err instanceof ValidationError && /has no items at version 1/.test(err.message));
});
