/**
 * A run's event stream as an async iterator over a WebSocket.
 *
 * Node 20 has no global WebSocket, so the `ws` package is used where it loads (it can
 * send the Authorization header); elsewhere (browsers, bundles that stub `ws`) the
 * global WebSocket is used with the key in `?api_key=`, the server's alternative.
 */

import { AgentOSError, APIConnectionError, errorForStatus } from "./errors.js";

async function webSocketImpl() {
  try {
    const mod = await import("ws");
    const WebSocket = mod.WebSocket ?? mod.default;
    if (typeof WebSocket === "function") return { WebSocket, sendsHeaders: true };
  } catch {
    // fall through to the platform's WebSocket
  }
  if (typeof globalThis.WebSocket === "function") return { WebSocket: globalThis.WebSocket, sendsHeaders: false };
  throw new APIConnectionError("streaming needs a WebSocket: install the 'ws' package");
}

/**
 * @param {URL} url ws(s):// URL of the run's stream
 * @param {string} apiKey
 * @param {() => Promise<unknown>} probe asks the HTTP API about the run, to surface the
 *   server's own 401/404 detail when the handshake is refused
 */
export async function* openStream(url, apiKey, probe) {
  const { WebSocket, sendsHeaders } = await webSocketImpl();
  let socket;
  if (sendsHeaders) {
    socket = new WebSocket(url, { headers: { Authorization: `Bearer ${apiKey}` } });
  } else {
    url.searchParams.set("api_key", apiKey);
    socket = new WebSocket(url);
  }
  socket.binaryType = "arraybuffer";

  const events = [];
  let refusal; // the server explains a refusal in a {"detail"} frame, then closes with 4000 + status
  let opened = false;
  let closed = null; // { code, reason } once the socket has closed
  let wake = () => {};
  socket.addEventListener("open", () => {
    opened = true;
  });
  socket.addEventListener("message", (message) => {
    events.push(message.data);
    wake();
  });
  socket.addEventListener("error", () => {}); // the close event that follows carries the outcome
  socket.addEventListener("close", (close) => {
    closed = { code: close.code, reason: String(close.reason ?? "") };
    wake();
  });

  try {
    while (true) {
      if (events.length > 0) {
        const event = parseEvent(events.shift());
        if ("detail" in event && !("type" in event)) refusal = event.detail;
        else yield event;
        continue;
      }
      if (closed !== null) break;
      await new Promise((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    if (closed === null) socket.close();
  }

  if (!opened) {
    await probe(); // throws the server's 401/404 detail when that is why
    throw new APIConnectionError(`could not open the run's event stream at ${redact(url)}`);
  }
  if (closed.code >= 4000 && closed.code < 5000) {
    throw errorForStatus(closed.code - 4000, refusal ?? (closed.reason || `stream closed with code ${closed.code}`));
  }
  if (refusal !== undefined) throw new AgentOSError(refusal);
  if (closed.code !== 1000 && closed.code !== 1005) {
    throw new APIConnectionError(`the run's event stream broke (code ${closed.code}${closed.reason ? `: ${closed.reason}` : ""})`);
  }
}

function parseEvent(data) {
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  const event = JSON.parse(text);
  if (event === null || typeof event !== "object" || Array.isArray(event)) {
    throw new AgentOSError(`unexpected stream message: ${text}`);
  }
  return event;
}

function redact(url) {
  const copy = new URL(url);
  if (copy.searchParams.has("api_key")) copy.searchParams.set("api_key", "…");
  return copy.toString();
}
