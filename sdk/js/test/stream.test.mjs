// Run event streams over the WebSocket against a real `agentos serve`.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AgentOS, AuthenticationError, NotFoundError } from "@agentos/sdk";

import { startServer, triageNodes, uniqueName } from "../test-support/server.mjs";

const CHECKS = [
  { name: "mentions refund", type: "contains", target: "draft_reply", value: "refund" },
  { name: "mentions a date", type: "contains", target: "draft_reply", value: "tomorrow" },
];

let server;
let client;
before(async () => {
  server = await startServer();
  client = new AgentOS({ baseUrl: server.url, apiKey: server.apiKey });
});
after(async () => {
  await server?.stop();
});

const makeWorkflow = (options = {}) => client.createWorkflow(uniqueName("Stream"), triageNodes(), options);

async function collect(iterator) {
  const events = [];
  for await (const event of iterator) events.push(event);
  return events;
}

test("stream: replays a finished run from run_started to run_evaluated", async () => {
  const run = await client.run(await makeWorkflow({ checks: CHECKS }), { input: { ticket: "double charged" } });

  const events = await collect(client.stream(run.id));

  assert.deepEqual(
    events.map((e) => e.type),
    ["run_started", "node_started", "node_finished", "run_finished", "run_evaluated"],
  );
  assert.equal(events.at(-1).passed, 1);
  assert.equal(events.at(-1).total, 2);
});

test("stream: follows a run started without waiting, until the server closes", async () => {
  const run = await client.run(await makeWorkflow(), { input: { ticket: "hi" }, wait: false });

  const kinds = (await collect(client.stream(run))).map((e) => e.type);

  assert.equal(kinds[0], "run_started");
  assert.equal(kinds.at(-1), "run_finished");
  assert.equal((await client.getRun(run.id)).status, "success");
});

test("stream: breaking out early closes the socket and the client keeps working", async () => {
  const run = await client.run(await makeWorkflow({ checks: CHECKS }), { input: { ticket: "hi" } });

  for await (const event of client.stream(run.id)) {
    assert.equal(event.type, "run_started");
    break;
  }

  assert.equal((await client.getRun(run.id)).status, "success");
});

test("stream: an unknown run rejects with NotFoundError", async () => {
  await assert.rejects(collect(client.stream("000000000000")), (error) => {
    assert.ok(error instanceof NotFoundError);
    assert.equal(error.status, 404);
    assert.equal(error.message, "Run '000000000000' not found");
    assert.equal(error.detail, error.message);
    return true;
  });
});

test("stream: a wrong key rejects with AuthenticationError", async () => {
  const run = await client.run(await makeWorkflow(), { input: { ticket: "hi" } });
  const stranger = new AgentOS({ baseUrl: server.url, apiKey: "aos_live_wrong" });

  const overHttp = await stranger.getRun(run.id).catch((error) => error);
  assert.ok(overHttp instanceof AuthenticationError);

  await assert.rejects(collect(stranger.stream(run.id)), (error) => {
    assert.ok(error instanceof AuthenticationError);
    assert.equal(error.status, 401);
    assert.equal(error.message, overHttp.detail); // the same server detail either way
    return true;
  });
});
