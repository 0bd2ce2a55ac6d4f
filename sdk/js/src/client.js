/**
 * The AgentOS client: one method per API operation, each built by `routes` and sent by
 * `AgentOS#request`, so paths and bodies are spelled in one place.
 */

import { APIConnectionError, AuthenticationError, errorForStatus } from "./errors.js";
import { openStream } from "./stream.js";

export const DEFAULT_BASE_URL = "http://localhost:8000";
export const DEFAULT_TIMEOUT_MS = 120_000;
const PENDING = new Set(["queued", "pending", "running"]);

/** One URL path segment for an id, an exact name, or a server object with an `id`. */
export function segment(ref) {
  const value = ref !== null && typeof ref === "object" ? ref.id : ref;
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`expected an id, a name or an object with an 'id', got ${JSON.stringify(ref)}`);
  }
  return encodeURIComponent(value);
}

const wf = (workflow) => `/api/workflows/${segment(workflow)}`;

/** A stored dataset's name, or a dataset object the server returned (its `name` is used). */
function datasetName(dataset) {
  const value = dataset !== null && typeof dataset === "object" ? dataset.name : dataset;
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`expected a dataset name or an object with a 'name', got ${JSON.stringify(dataset)}`);
  }
  return value;
}

const ds = (dataset) => `/api/datasets/${encodeURIComponent(datasetName(dataset))}`;

/** One builder per API operation: { method, path, body?, query?, releasing? }. */
export const routes = {
  createWorkflow: (name, nodes, checks, gate, environments) => ({
    method: "POST",
    path: "/api/workflows",
    body: {
      name,
      nodes,
      ...(checks != null && { checks }),
      ...(gate != null && { gate }),
      ...(environments != null && { environments }),
    },
  }),
  getWorkflow: (workflow) => ({ method: "GET", path: wf(workflow) }),
  listWorkflows: () => ({ method: "GET", path: "/api/workflows" }),
  updateWorkflow: (workflow, fields) => ({ method: "PATCH", path: wf(workflow), body: fields }),
  deleteWorkflow: (workflow) => ({ method: "DELETE", path: wf(workflow) }),
  versions: (workflow) => ({ method: "GET", path: `${wf(workflow)}/versions` }),
  setChecks: (workflow, checks) => ({ method: "PUT", path: `${wf(workflow)}/checks`, body: { checks } }),
  setGate: (workflow, minPassRate) => ({
    method: "PUT",
    path: `${wf(workflow)}/gate`,
    body: { min_pass_rate: minPassRate },
  }),
  run: (workflow, input, wait, environment, version) => ({
    method: "POST",
    path: `${wf(workflow)}/runs`,
    body: {
      input: input ?? {},
      wait,
      ...(environment != null && { environment }),
      ...(version != null && { version }),
    },
  }),
  getRun: (run) => ({ method: "GET", path: `/api/runs/${segment(run)}` }),
  listRuns: ({ workflow, status } = {}) => ({
    method: "GET",
    path: "/api/runs",
    query: {
      ...(workflow != null && { workflow: typeof workflow === "object" ? workflow.id : workflow }),
      ...(status != null && { status }),
    },
  }),
  evaluate: (workflow, { dataset, name, results, version, scorers }) => {
    if ((dataset == null) === (results == null)) {
      throw new TypeError("evaluate() needs exactly one of dataset (items to run) or results (reported)");
    }
    return {
      method: "POST",
      path: `${wf(workflow)}/evaluations`,
      // The server requires a name; a timestamp keeps unnamed evaluations apart in listings.
      body: {
        name: name ?? `evaluation ${new Date().toISOString().slice(0, 19).replace("T", " ")}`,
        ...(dataset != null && { dataset }),
        ...(results != null && { results }),
        ...(version != null && { version }),
        ...(scorers != null && { scorers }),
      },
    };
  },
  getEvaluation: (evaluation) => ({ method: "GET", path: `/api/evaluations/${segment(evaluation)}` }),
  evaluations: (workflow) => ({ method: "GET", path: `${wf(workflow)}/evaluations` }),
  compare: (a, b) => ({ method: "GET", path: `/api/evaluations/${segment(a)}/compare/${segment(b)}` }),
  createDataset: (name, items) => ({
    method: "POST",
    path: "/api/datasets",
    body: { name, ...(items != null && { items }) },
  }),
  listDatasets: () => ({ method: "GET", path: "/api/datasets" }),
  getDataset: (dataset, version) => ({
    method: "GET",
    path: ds(dataset),
    query: { ...(version != null && { version }) },
  }),
  addDatasetItems: (dataset, items) => ({ method: "POST", path: `${ds(dataset)}/items`, body: { items } }),
  removeDatasetItem: (dataset, item) => ({ method: "DELETE", path: `${ds(dataset)}/items/${segment(item)}` }),
  // `expected: null` is a value to store; only `undefined` leaves it out.
  addRunToDataset: (run, dataset, expected, item) => ({
    method: "POST",
    path: `/api/runs/${segment(run)}/dataset`,
    body: {
      dataset: datasetName(dataset),
      ...(expected !== undefined && { expected }),
      ...(item != null && { item }),
    },
  }),
  release: (workflow, environment, commit, version) => ({
    method: "POST",
    path: `${wf(workflow)}/release`,
    body: { environment, ...(commit && { commit }), ...(version != null && { version }) },
    releasing: true,
  }),
  rollback: (workflow, environment) => ({
    method: "POST",
    path: `${wf(workflow)}/rollback`,
    body: { environment },
  }),
  releases: (workflow) => ({ method: "GET", path: `${wf(workflow)}/releases` }),
  metrics: () => ({ method: "GET", path: "/api/dashboard/metrics" }),
};

const env = (name) => globalThis.process?.env?.[name];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const isPending = (thing) => thing !== null && typeof thing === "object" && PENDING.has(thing.status);

/**
 * Client for the AgentOS API.
 *
 *     const client = new AgentOS({ baseUrl: "http://localhost:8000", apiKey: "aos_live_…" });
 *     const run = await client.run("Support Triage Crew", { input: { ticket: "double charged" } });
 *
 * `apiKey` defaults to $AGENTOS_API_KEY and `baseUrl` to $AGENTOS_BASE_URL or
 * http://localhost:8000. Workflows are named by id or exact name (or the object the
 * server returned). Failures throw `AgentOSError` subclasses whose message is the
 * server's detail.
 */
export class AgentOS {
  /**
   * @param {{ baseUrl?: string, apiKey?: string, timeout?: number, fetch?: typeof fetch }} [options]
   *   timeout is in milliseconds, per request.
   */
  constructor({ baseUrl, apiKey, timeout = DEFAULT_TIMEOUT_MS, fetch: fetchImpl } = {}) {
    this.baseUrl = (baseUrl ?? env("AGENTOS_BASE_URL") ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    const key = apiKey ?? env("AGENTOS_API_KEY");
    if (!key) throw new AuthenticationError("no API key: pass { apiKey } or set AGENTOS_API_KEY");
    this.apiKey = key;
    this.timeout = timeout;
    this._fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
  }

  /** Send one request built by `routes`; resolves to the parsed body or throws a typed error. */
  async request({ method, path, body, query, releasing = false }) {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, String(value));
    const headers = { Authorization: `Bearer ${this.apiKey}`, Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await this._fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeout),
      });
    } catch (error) {
      const reason = error?.cause?.message ?? error?.message ?? String(error);
      throw new APIConnectionError(`${method} ${path}: ${reason}`);
    }
    const text = await response.text();
    if (response.ok) return text === "" ? null : JSON.parse(text);
    throw errorForStatus(response.status, detailOf(text, response.status), { releasing });
  }

  // Workflows

  /**
   * Create a workflow (version 1). `environments` declares where it is released to (each
   * then runs the version released to it last).
   */
  createWorkflow(name, nodes, { checks, gate, environments } = {}) {
    return this.request(routes.createWorkflow(name, nodes, checks, gate, environments));
  }

  /** The workflow with this id or exact name. */
  getWorkflow(workflow) {
    return this.request(routes.getWorkflow(workflow));
  }

  /** Every workflow in the key's workspace. */
  listWorkflows() {
    return this.request(routes.listWorkflows());
  }

  /**
   * Change fields (name, nodes, checks, gate, environments) of a workflow; resolves to it (a
   * change of nodes, checks or gate makes a new version).
   */
  updateWorkflow(workflow, fields) {
    return this.request(routes.updateWorkflow(workflow, fields));
  }

  /** Delete a workflow. */
  async deleteWorkflow(workflow) {
    await this.request(routes.deleteWorkflow(workflow));
  }

  /** The workflow's stored versions. */
  versions(workflow) {
    return this.request(routes.versions(workflow));
  }

  /** Replace the workflow's checks; resolves to the updated workflow (each check with its chk_ id). */
  setChecks(workflow, checks) {
    return this.request(routes.setChecks(workflow, checks));
  }

  /** Set (or with null, clear) the release gate; resolves to the updated workflow. */
  setGate(workflow, minPassRate) {
    return this.request(routes.setGate(workflow, minPassRate));
  }

  // Runs

  /**
   * Run the workflow; with wait (the default), resolve once it has finished. It runs `version`
   * when given, else the version released to `environment` (default production) when the
   * workflow declares environments, else its current version.
   */
  async run(workflow, { input = {}, wait = true, environment, version, pollInterval = 250 } = {}) {
    let run = await this.request(routes.run(workflow, input, wait, environment, version));
    while (wait && isPending(run)) {
      await sleep(pollInterval);
      run = await this.getRun(run);
    }
    return run;
  }

  /** The run with this id. */
  getRun(run) {
    return this.request(routes.getRun(run));
  }

  /** Runs in the workspace, optionally of one workflow and/or in one status. */
  listRuns({ workflow, status } = {}) {
    return this.request(routes.listRuns({ workflow, status }));
  }

  /**
   * The run's events (`run_started` … `run_evaluated`), past ones replayed first, as an
   * async iterator that ends when the server closes the stream after the last event.
   */
  stream(run) {
    const url = new URL(`${this.baseUrl}/api/runs/${segment(run)}/stream`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return openStream(url, this.apiKey, () => this.getRun(run));
  }

  // Evaluations

  /**
   * Evaluate a version of the workflow (`version`, default the current one): run each
   * `dataset` item, or report `results`. `scorers` grade each item's final state against its
   * `expected` output (exact, similarity, rubric). `dataset` may name a stored dataset instead:
   * `"name"` (its latest version) or `{ name, version }`; the answer's `dataset` then says which
   * version ran. With wait (the default), resolves once the evaluation is no longer pending.
   */
  async evaluate(workflow, { dataset, name, results, version, scorers, wait = true, pollInterval = 250 } = {}) {
    let evaluation = await this.request(routes.evaluate(workflow, { dataset, name, results, version, scorers }));
    while (wait && isPending(evaluation)) {
      await sleep(pollInterval);
      evaluation = await this.getEvaluation(evaluation);
    }
    return evaluation;
  }

  /** The evaluation with this id. */
  getEvaluation(evaluation) {
    return this.request(routes.getEvaluation(evaluation));
  }

  /** The workflow's evaluations. */
  evaluations(workflow) {
    return this.request(routes.evaluations(workflow));
  }

  /** Compare evaluation `b` against `a` item by item: which checks regressed and improved. */
  compare(a, b) {
    return this.request(routes.compare(a, b));
  }

  // Datasets

  /** Store a dataset (version 1), with `items` ({ input, item?, expected? }) if given. */
  createDataset(name, { items } = {}) {
    return this.request(routes.createDataset(name, items));
  }

  /** Every dataset in the workspace, with its latest version and item count. */
  listDatasets() {
    return this.request(routes.listDatasets());
  }

  /** The dataset's items at `version` (default: its latest). */
  getDataset(dataset, { version } = {}) {
    return this.request(routes.getDataset(dataset, version));
  }

  /** Add items as a new version; resolves to the new version and the items added. */
  addDatasetItems(dataset, items) {
    return this.request(routes.addDatasetItems(dataset, items));
  }

  /** Remove an item (by id) as a new version; older versions keep it. */
  removeDatasetItem(dataset, item) {
    return this.request(routes.removeDatasetItem(dataset, item));
  }

  /**
   * Copy the run's input into `dataset` (created if new) as a new version, with `expected` (the
   * output it should have given; null is a value too) and the label `item` if given.
   */
  addRunToDataset(run, dataset, { expected, item } = {}) {
    return this.request(routes.addRunToDataset(run, dataset, expected, item));
  }

  // Releases

  /**
   * Release a version of the workflow (`version`, default the current one) to an environment
   * ("production" unless given, as a string or `{ environment, commit, version }`); throws
   * `ReleaseBlockedError` when the gate blocks it (the gate reads that version's evaluations).
   * `commit` names the commit released, which a gate on Ancha scenes reads the uploaded runs of.
   */
  release(workflow, options = {}) {
    const environment = typeof options === "string" ? options : (options.environment ?? "production");
    const { commit, version } = typeof options === "string" ? {} : options;
    return this.request(routes.release(workflow, environment, commit, version));
  }

  /**
   * Pin the version an environment ("production" unless given, as a string or
   * `{ environment }`) ran before its last release, as a new release; throws `ConflictError`
   * when it ran no earlier one.
   */
  rollback(workflow, options = {}) {
    const environment = typeof options === "string" ? options : (options.environment ?? "production");
    return this.request(routes.rollback(workflow, environment));
  }

  /** The workflow's releases. */
  releases(workflow) {
    return this.request(routes.releases(workflow));
  }

  /** Workspace dashboard metrics: runs, success rate, cost, eval pass rate. */
  metrics() {
    return this.request(routes.metrics());
  }
}

function detailOf(text, status) {
  try {
    const body = JSON.parse(text);
    return body !== null && typeof body === "object" && "detail" in body ? body.detail : body;
  } catch {
    return text || `HTTP ${status}`;
  }
}
