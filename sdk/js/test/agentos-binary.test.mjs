// The tests find the agentos server the way dev.py does, or say how to point them at it.
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { findAgentos } from "../test-support/server.mjs";

test("findAgentos takes AGENTOS_BIN first", () => {
  assert.equal(findAgentos({ AGENTOS_BIN: "/opt/agentos", PATH: "/usr/bin" }), "/opt/agentos");
});

test("findAgentos finds an executable agentos on PATH", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agentos-bin-"));
  try {
    await writeFile(join(dir, "agentos"), "#!/bin/sh\n");
    await chmod(join(dir, "agentos"), 0o755);
    assert.equal(findAgentos({ PATH: `/nonexistent:${dir}` }), join(dir, "agentos"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("findAgentos without one says how to set AGENTOS_BIN", () => {
  assert.throws(() => findAgentos({ PATH: "/nonexistent" }), /python3 dev\.py test.*AGENTOS_BIN/s);
});
