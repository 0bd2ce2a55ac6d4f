/**
 * The errors the AgentOS SDK throws. Every error the server answers with carries its
 * `detail`, and `error.message` is that detail unchanged.
 */

export class AgentOSError extends Error {
  /**
   * @param {unknown} detail the server's `detail` as sent
   * @param {number | null} [status] the HTTP status; null when no response was received
   */
  constructor(detail, status = null) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
  }
}

/** 401: the API key is missing, malformed or unknown. */
export class AuthenticationError extends AgentOSError {}

/** 404: no such workflow, run, evaluation or release in the key's workspace. */
export class NotFoundError extends AgentOSError {}

/** 409: the change clashes with what exists, e.g. a workflow name already taken. */
export class ConflictError extends AgentOSError {}

/** 400 or 422: the request was understood but its content is invalid (e.g. bad checks). */
export class ValidationError extends AgentOSError {}

/** 422 on release: the evaluation gate blocked the deployment. */
export class ReleaseBlockedError extends ValidationError {}

/** The server could not be reached, or the connection broke before it answered. */
export class APIConnectionError extends AgentOSError {}

const BY_STATUS = {
  400: ValidationError,
  401: AuthenticationError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
};

/**
 * The typed error for a server answer.
 * @param {number} status
 * @param {unknown} detail
 * @param {{ releasing?: boolean }} [options]
 * @returns {AgentOSError}
 */
export function errorForStatus(status, detail, { releasing = false } = {}) {
  if (status === 422 && releasing) return new ReleaseBlockedError(detail, status);
  const Kind = BY_STATUS[status] ?? AgentOSError;
  return new Kind(detail, status);
}
