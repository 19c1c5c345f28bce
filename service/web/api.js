// The Strata API over the Connect protocol (JSON), with fetch(): unary calls
// and server streams. No generated code, no dependency: the page speaks the
// protocol the HTTP listener serves (POST /strata.v1.GameService/<Method>).

const SERVICE = "/strata.v1.GameService/";

/** An error the API answered: its Connect code, message and reason. */
export class ApiError extends Error {
  constructor(code, message, reason) {
    super(message || code);
    this.code = code;
    this.reason = reason || "";
  }
}

// Read your writes on any replica: the highest `strata-position` an answer
// gave this page, sent back as `strata-read-after` (a browser spreads its
// calls over several connections, which may reach different processes).
let readAfter = 0n;

function headers(token, contentType) {
  const h = { "Content-Type": contentType, "Connect-Protocol-Version": "1" };
  if (token) h.Authorization = `Bearer ${token}`;
  if (readAfter > 0n) h["Strata-Read-After"] = readAfter.toString();
  return h;
}

function note(response) {
  const value = response.headers.get("strata-position");
  if (value && /^[0-9]+$/.test(value) && BigInt(value) > readAfter) {
    readAfter = BigInt(value);
  }
}

/** The highest log position the service has shown this page (0n: none). */
export function position() {
  return readAfter;
}

/** The `reason` of a google.rpc.ErrorInfo in Connect's JSON error details:
 * its field 1 (a string) read from the message's base64 bytes. */
function errorInfoReason(value) {
  try {
    const text = atob(String(value || "").replace(/-/g, "+").replace(/_/g, "/"));
    if (text.charCodeAt(0) !== 0x0a) return "";
    const length = text.charCodeAt(1);
    return length < 0x80 ? text.slice(2, 2 + length) : "";
  } catch (_) {
    return "";
  }
}

function errorOf(body, status) {
  const code = (body && body.code) || `http_${status}`;
  let reason = "";
  for (const detail of (body && body.details) || []) {
    if (detail.type !== "google.rpc.ErrorInfo") continue;
    reason = (detail.debug && detail.debug.reason) || errorInfoReason(detail.value) || reason;
  }
  return new ApiError(code, (body && body.message) || code, reason);
}

/** How long a unary call may take before it is given up (ms): a call
 * caught by a network drop fails instead of hanging, and is retried. */
const CALL_TIMEOUT_MS = 15000;

/** One unary call: the response message as JSON, or an ApiError (or the
 * fetch's own error when the service was not reached). */
export async function call(method, request, token) {
  const response = await fetch(SERVICE + method, {
    method: "POST",
    headers: headers(token, "application/json"),
    body: JSON.stringify(request || {}),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  note(response);
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  if (!response.ok) throw errorOf(body, response.status);
  return body;
}

function envelope(message) {
  const data = new TextEncoder().encode(JSON.stringify(message));
  const out = new Uint8Array(5 + data.length);
  new DataView(out.buffer).setUint32(1, data.length);
  out.set(data, 5);
  return out;
}

/**
 * A server stream: calls onMessage(message) for each message, resolves when
 * the stream ends well, rejects with an ApiError when it ends with an error.
 * `signal` (an AbortSignal) cancels it; `onOpen()` is called once the
 * service has answered (the stream is open).
 */
export async function stream(method, request, token, onMessage, signal, onOpen) {
  const response = await fetch(SERVICE + method, {
    method: "POST",
    headers: headers(token, "application/connect+json"),
    body: envelope(request || {}),
    signal,
  });
  if (!response.ok) {
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    throw errorOf(body, response.status);
  }
  if (onOpen) onOpen();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (value) {
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer);
      joined.set(value, buffer.length);
      buffer = joined;
    }
    while (buffer.length >= 5) {
      const flags = buffer[0];
      const length = new DataView(buffer.buffer, buffer.byteOffset).getUint32(1);
      if (buffer.length < 5 + length) break;
      const text = decoder.decode(buffer.subarray(5, 5 + length));
      buffer = buffer.slice(5 + length);
      const message = text ? JSON.parse(text) : {};
      if (flags & 0x02) {
        if (message.error) throw errorOf(message.error, 200);
        return;
      }
      onMessage(message);
    }
    if (done) {
      throw new ApiError("unavailable", "The stream was cut.");
    }
  }
}
