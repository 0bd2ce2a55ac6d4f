/**
 * @agentos/sdk — JavaScript client for AgentOS: workflows, runs, checks, evaluations
 * and gated releases.
 *
 *     import { AgentOS } from "@agentos/sdk";
 *     const client = new AgentOS({ baseUrl: "http://localhost:8000", apiKey: "aos_live_…" });
 */

export { AgentOS, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS } from "./client.js";
export {
  AgentOSError,
  APIConnectionError,
  AuthenticationError,
  ConflictError,
  NotFoundError,
  ReleaseBlockedError,
  ValidationError,
  errorForStatus,
} from "./errors.js";
