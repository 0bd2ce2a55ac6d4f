// The JavaScript snippet from reference/workflow-evaluations.txt ("Setting checks from
// the SDK"), run verbatim as its own ES module inside this package — so its
// `import { AgentOS } from "@agentos/sdk"` resolves by the package's name — against a
// real server; only the base URL and the key differ.

import assert from "node:assert/strict";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";

import { AgentOS } from "@agentos/sdk";

import { startServer, triageNodes } from "../test-support/server.mjs";

const REFERENCE_SNIPPET = `import { AgentOS } from "@agentos/sdk";

const client = new AgentOS({ baseUrl: "http://localhost:8000", apiKey: "aos_live_…" });

await client.setChecks("Support Triage Crew", [
  { name: "mentions refund", type: "contains", target: "draft_reply", value: "refund" },
  { name: "under budget", type: "max_cost_usd", value: 0.05 },
  { name: "no error leaked", type: "expression",
    value: "'error' not in draft_reply.lower()" },
]);
`;

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

test("reference snippet: setChecks by workflow name, then runs score all three checks", async () => {
  const client = new AgentOS({ baseUrl: server.url, apiKey: server.apiKey });
  const created = await client.createWorkflow("Support Triage Crew", triageNodes());

  // Inside the package, so the bare "@agentos/sdk" resolves to it (package self-reference).
  const dir = join(server.packageDir, ".snippets", String(process.pid));
  const file = join(dir, "reference.mjs");
  await mkdir(dir, { recursive: true });
  await writeFile(
    file,
    REFERENCE_SNIPPET.replace("http://localhost:8000", server.url).replace("aos_live_…", server.apiKey),
  );
  try {
    await import(pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const workflow = await client.getWorkflow(created.id);
  assert.deepEqual(
    workflow.checks.map((c) => c.name),
    ["mentions refund", "under budget", "no error leaked"],
  );
  assert.ok(workflow.checks.every((c) => c.id.startsWith("chk_")));
  assert.equal(workflow.version, created.version + 1);

  const run = await client.run("Support Triage Crew", { input: { ticket: "double charged" } });
  assert.equal(run.status, "success");
  assert.equal(`${run.evals.passed} of ${run.evals.total} checks passed`, "3 of 3 checks passed");
});
