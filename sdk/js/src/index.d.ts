// Types for @agentos/sdk. Server objects are typed by their documented fields and stay
// open (`[field: string]: unknown`) so newer servers' additions pass through.

export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };
export type Ref = string | { id: string };

export interface Check {
  id?: string;
  name: string;
  type: "contains" | "not_contains" | "equals" | "regex" | "max_cost_usd" | "max_duration_ms" | "expression";
  target?: string;
  value?: string | number;
  case_sensitive?: boolean;
  [field: string]: unknown;
}

export interface Gate {
  min_pass_rate?: number;
  /** Ancha scenes that must pass on the release's commit (the uploaded run is the evaluation). */
  ancha?: { scenes: string[]; min_pass_rate: number };
  [field: string]: unknown;
}

export interface Workflow {
  id: string;
  name: string;
  version: number;
  nodes: Array<Record<string, unknown>>;
  checks: Check[];
  gate: Gate | null;
  created_at: string;
  updated_at: string;
  /** Only on a workflow that declares environments: their names. */
  environments?: string[];
  /** Only on a workflow that declares environments: the version each runs (null: none released yet). */
  deployments?: Record<string, number | null>;
  [field: string]: unknown;
}

export interface CheckResult {
  id: string;
  name: string;
  type: Check["type"];
  passed: boolean;
  detail: string;
  [field: string]: unknown;
}

export interface Evals {
  passed: number;
  total: number;
  results: CheckResult[];
  [field: string]: unknown;
}

export type RunStatus = "queued" | "running" | "success" | "failed";

export interface Run {
  id: string;
  workflow_id: string;
  workflow_version: number;
  status: RunStatus;
  input: Record<string, unknown>;
  state: Record<string, unknown>;
  error: string | null;
  cost_usd: number;
  duration_ms: number | null;
  started_at: string | null;
  finished_at: string | null;
  evals: Evals | null;
  [field: string]: unknown;
}

export interface RunEvent {
  type: "run_started" | "node_started" | "node_finished" | "run_finished" | "run_evaluated" | string;
  [field: string]: unknown;
}

export type Evaluation = Record<string, unknown> & { id: string; status?: string };
/** A scorer of a dataset evaluation: exact, similarity (rapidfuzz's ratio) or rubric (a model grades). */
export type Scorer = {
  name: string;
  type: "exact" | "similarity" | "rubric";
  /** The state variable scored. */
  target: string;
  case_sensitive?: boolean;
  /** The score from which an item passes (similarity: 0.8, rubric: 0.5 by default). */
  min?: number;
  rubric?: string;
  /** "provider/model", such as "openai/gpt-4o-mini", or a model name with `provider`. */
  model?: string;
  provider?: "openai" | "anthropic" | "mock";
  responses?: Array<string | Record<string, unknown>>;
};
/** An item of an evaluation's dataset, inline or stored. */
export interface DatasetEntry {
  input: Record<string, unknown>;
  /** The item's label (default: its input as JSON). */
  item?: string;
  /** The output it should give, which `expected`-based scorers compare with. */
  expected?: unknown;
}
/** A stored item: part of the versions from `added_in_version` until it is removed. */
export type DatasetItem = DatasetEntry & {
  id: string;
  item: string;
  source_run_id: string | null;
  added_in_version: number;
  created_at: string;
  [field: string]: unknown;
};
/** A stored dataset at one version (`latest_version` is its newest). */
export type Dataset = Record<string, unknown> & {
  id: string;
  name: string;
  version: number;
  latest_version: number;
  items: DatasetItem[];
};
/** What a change of a dataset answers: its new version and the items added or removed. */
export type DatasetChange = { dataset: string; version: number; items: DatasetItem[] };
/** A stored dataset's name, or a dataset object the server returned. */
export type DatasetRef = string | { name: string };
export type Release = Record<string, unknown> & { id: string; environment: string; version: number };
export type Metrics = Record<string, unknown> & {
  total_runs: number;
  success_rate: number;
  total_cost_usd: number;
  active_workflows: number;
  eval_pass_rate: number | null;
  evaluated_runs: number;
};

export interface AgentOSOptions {
  /** Defaults to $AGENTOS_BASE_URL, then http://localhost:8000. */
  baseUrl?: string;
  /** Defaults to $AGENTOS_API_KEY. */
  apiKey?: string;
  /** Per-request timeout in milliseconds (default 120000). */
  timeout?: number;
  fetch?: typeof fetch;
}

export declare const DEFAULT_BASE_URL: string;
export declare const DEFAULT_TIMEOUT_MS: number;

export declare class AgentOS {
  constructor(options?: AgentOSOptions);
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly timeout: number;

  createWorkflow(
    name: string,
    nodes: Array<Record<string, unknown>>,
    options?: { checks?: Check[]; gate?: Gate; environments?: string[] },
  ): Promise<Workflow>;
  getWorkflow(workflow: Ref): Promise<Workflow>;
  listWorkflows(): Promise<Workflow[]>;
  updateWorkflow(workflow: Ref, fields: Partial<Workflow> & { environments?: string[] | null }): Promise<Workflow>;
  deleteWorkflow(workflow: Ref): Promise<void>;
  versions(workflow: Ref): Promise<Array<Record<string, unknown>>>;
  setChecks(workflow: Ref, checks: Check[]): Promise<Workflow>;
  setGate(workflow: Ref, minPassRate: number | null): Promise<Workflow>;

  run(
    workflow: Ref,
    options?: {
      input?: Record<string, unknown>;
      wait?: boolean;
      /** Run the version released to this environment (not with `version`). */
      environment?: string;
      /** Run this version (not with `environment`). */
      version?: number;
      pollInterval?: number;
    },
  ): Promise<Run>;
  getRun(run: Ref): Promise<Run>;
  listRuns(filter?: { workflow?: Ref; status?: RunStatus }): Promise<Run[]>;
  stream(run: Ref): AsyncGenerator<RunEvent, void, undefined>;

  evaluate(
    workflow: Ref,
    options: {
      /** Items to run, or a stored dataset: its name (latest version) or `{ name, version }`. */
      dataset?: DatasetEntry[] | string | { name: string; version?: number };
      results?: Array<Record<string, unknown>>;
      name?: string;
      /** The version evaluated (default: the current one). */
      version?: number;
      /** Scorers of each item's final state against its `expected` output (dataset evaluations). */
      scorers?: Scorer[];
      wait?: boolean;
      pollInterval?: number;
    },
  ): Promise<Evaluation>;
  getEvaluation(evaluation: Ref): Promise<Evaluation>;
  evaluations(workflow: Ref): Promise<Evaluation[]>;
  compare(a: Ref, b: Ref): Promise<Record<string, unknown>>;
  createDataset(name: string, options?: { items?: DatasetEntry[] }): Promise<Dataset>;
  listDatasets(): Promise<Array<Record<string, unknown> & { name: string; version: number; items: number }>>;
  getDataset(dataset: DatasetRef, options?: { version?: number }): Promise<Dataset>;
  addDatasetItems(dataset: DatasetRef, items: DatasetEntry[]): Promise<DatasetChange>;
  removeDatasetItem(dataset: DatasetRef, item: Ref): Promise<DatasetChange>;
  addRunToDataset(
    run: Ref,
    dataset: DatasetRef,
    options?: { expected?: unknown; item?: string },
  ): Promise<{ dataset: string; version: number; item: DatasetItem }>;
  release(
    workflow: Ref,
    options?: string | { environment?: string; commit?: string; version?: number },
  ): Promise<Release>;
  rollback(workflow: Ref, options?: string | { environment?: string }): Promise<Release>;
  releases(workflow: Ref): Promise<Release[]>;
  metrics(): Promise<Metrics>;
}

export declare class AgentOSError extends Error {
  constructor(detail: unknown, status?: number | null);
  /** The HTTP status; null when no response was received. */
  readonly status: number | null;
  /** The server's `detail`, as sent; `message` is the same text. */
  readonly detail: unknown;
}
export declare class AuthenticationError extends AgentOSError {}
export declare class NotFoundError extends AgentOSError {}
export declare class ConflictError extends AgentOSError {}
export declare class ValidationError extends AgentOSError {}
export declare class ReleaseBlockedError extends ValidationError {}
export declare class APIConnectionError extends AgentOSError {}
export declare function errorForStatus(
  status: number,
  detail: unknown,
  options?: { releasing?: boolean },
): AgentOSError;
