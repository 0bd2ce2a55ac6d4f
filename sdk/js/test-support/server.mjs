/**
 * A real AgentOS server for the tests: `agentos serve --port <free port>` as a
 * subprocess over a temporary SQLite database, plus keys from `agentos keys create`.
 * The binary is $AGENTOS_BIN, else `agentos` on PATH (`python3 dev.py test` puts the
 * project's venv first on PATH, and sets AGENTOS_BIN too); `findAgentos` says how to fix it.
 *
 * Kept outside test/ because `node --test test/` runs every .mjs file under test/.
 */

import { execFile, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The agentos executable: $AGENTOS_BIN, else the first `agentos` on $PATH. */
export function findAgentos(env = process.env) {
  if (env.AGENTOS_BIN) return env.AGENTOS_BIN;
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean)) {
    const candidate = join(dir, "agentos");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(
    "no agentos executable to start: run these tests with `python3 dev.py test` (it puts the project's " +
      "venv on PATH), or set AGENTOS_BIN to the agentos executable, e.g. AGENTOS_BIN=$PWD/../../.venv/bin/agentos",
  );
}

async function freePort() {
  const probe = createServer();
  await new Promise((ready) => probe.listen(0, "127.0.0.1", ready));
  const { port } = probe.address();
  await new Promise((closed) => probe.close(closed));
  return port;
}

/** A running server: { url, apiKey, newKey(workspace), stop() }. */
export async function startServer({ workspace = "test" } = {}) {
  const AGENTOS_BIN = findAgentos();
  const dir = await mkdtemp(join(tmpdir(), "agentos-sdk-js-"));
  const env = { ...process.env, AGENTOS_DATABASE_URL: `sqlite:///${join(dir, "a.db")}` };
  delete env.AGENTOS_API_KEY;

  const newKey = async (name) => {
    const { stdout } = await promisify(execFile)(AGENTOS_BIN, ["keys", "create", "--workspace", name], { env });
    const key = stdout.match(/aos_live_[A-Za-z0-9_-]+/)?.[0];
    if (!key) throw new Error(`agentos keys create printed no key: ${stdout}`);
    return key;
  };
  const apiKey = await newKey(workspace); // also migrates the database before the server opens it

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(AGENTOS_BIN, ["serve", "--port", String(port)], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise((done) => child.once("exit", done));

  const deadline = Date.now() + 30_000;
  while (true) {
    if (child.exitCode !== null) throw new Error(`agentos serve exited (${child.exitCode}):\n${output}`);
    try {
      await fetch(`${url}/api/dashboard/metrics`);
      break; // any answer, even 401, means it is listening
    } catch {
      if (Date.now() > deadline) {
        child.kill();
        throw new Error(`agentos serve did not answer on ${url}:\n${output}`);
      }
      await new Promise((later) => setTimeout(later, 100));
    }
  }

  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  return { url, apiKey, newKey, stop, packageDir: PACKAGE_DIR };
}

let counter = 0;
/** A workflow name no other test uses. */
export const uniqueName = (stem) => `${stem} ${process.pid}-${Date.now().toString(36)}-${++counter}`;

export const REFUND_REPLY = "We'll process your refund today.";

/** One mock-provider LLM node drafting `reply` into state.draft_reply. */
export const triageNodes = (reply = REFUND_REPLY) => [
  {
    id: "draft",
    type: "llm",
    provider: "mock",
    model: "mock-1",
    prompt: "Reply to {{input.ticket}}",
    output: "draft_reply",
    responses: [{ text: reply, input_tokens: 12, output_tokens: 8 }],
  },
];
