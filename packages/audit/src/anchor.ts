/**
 * External anchors for the tail of the log: every signed checkpoint the writer takes is also
 * published somewhere the log's host cannot silently rewrite, a file on another path (another
 * volume, another host's mount) or an HTTP endpoint, and verification checks the log against
 * the anchor's latest checkpoint: records removed behind it are found even when the checkpoint
 * next to the log was removed or put back to an older one.
 *
 * HTTP anchors: each checkpoint is sent as `POST <url>` with its canonical JSON as body
 * (`content-type: application/json`); any 2xx answer counts as stored. Verification reads
 * `GET <url>`, which answers the latest checkpoint stored (its JSON), or 404 when there is none.
 * See docs/adr/0156-audit-head-and-anchor.md.
 */
import { fileURLToPath } from "node:url";
import { canonicalJson } from "./canonical.js";
import { parseCheckpoint, readCheckpoint, replaceFile, type AuditCheckpoint } from "./checkpoint.js";
import { AuditError } from "./errors.js";

/** Where checkpoints are published: `publish` stores one (and rejects when it could not). */
export interface AuditAnchor {
  /** How the anchor is named in messages (a path or a URL without credentials). */
  readonly target: string;
  publish(checkpoint: AuditCheckpoint): Promise<void>;
}

/** Default time an HTTP publish or read may take (ms). */
export const DEFAULT_ANCHOR_TIMEOUT_MS = 5000;

const isHttp = (target: string): boolean => /^https?:\/\//i.test(target);

/** A URL without user name, password or query (for messages: credentials are never printed). */
function describeUrl(target: string): string {
  try {
    const url = new URL(target);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

/**
 * An HTTP target: the URL without credentials (a user name and password in it become a Basic
 * `authorization` header, never part of a message) and its name for messages.
 */
function httpTarget(target: string): { url: URL; headers: Record<string, string>; name: string } {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new AuditError("INVALID_ARGUMENT", `audit anchor ${describeUrl(target)} is not a valid URL`);
  }
  const headers: Record<string, string> = {};
  if (url.username !== "" || url.password !== "") {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
    url.username = "";
    url.password = "";
  }
  return { url, headers, name: describeUrl(target) };
}

/** The reason a request failed, without the URL (which may carry credentials). */
const fetchFailure = (error: unknown): string =>
  (error as { cause?: { code?: string } }).cause?.code ?? ((error as Error).name === "TimeoutError" ? "timed out" : "request failed");

function filePath(target: string): string {
  return target.startsWith("file:") ? fileURLToPath(target) : target;
}

/**
 * The anchor named by `target`: an `http://` or `https://` URL (POST each checkpoint), else a
 * file path or `file:` URL (replaced atomically with each checkpoint). Throws
 * `INVALID_ARGUMENT` for an empty or unusable target.
 */
export function toAuditAnchor(target: string, options: { timeoutMs?: number } = {}): AuditAnchor {
  if (typeof target !== "string" || target.trim().length === 0)
    throw new AuditError("INVALID_ARGUMENT", "an audit anchor needs a file path or URL");
  const timeoutMs = options.timeoutMs ?? DEFAULT_ANCHOR_TIMEOUT_MS;
  if (isHttp(target)) {
    const { url, headers, name } = httpTarget(target);
    return {
      target: name,
      async publish(checkpoint) {
        let response: Response;
        try {
          response = await fetch(url, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: canonicalJson(checkpoint),
            signal: AbortSignal.timeout(timeoutMs),
          });
        } catch (error) {
          throw new Error(`cannot reach anchor ${name}: ${fetchFailure(error)}`, { cause: error });
        }
        await response.arrayBuffer().catch(() => undefined);
        if (!response.ok) throw new Error(`anchor ${name} answered HTTP ${response.status}`);
      },
    };
  }
  let path: string;
  try {
    path = filePath(target);
  } catch {
    throw new AuditError("INVALID_ARGUMENT", `audit anchor ${target} is not a usable file URL`);
  }
  return {
    target: path,
    publish: (checkpoint) => replaceFile(path, `${canonicalJson(checkpoint)}\n`),
  };
}

/**
 * Reads the latest checkpoint an anchor holds: `undefined` when it holds none (no file, HTTP
 * 404), else the checkpoint (MAC not checked here) or the problem. Never throws.
 */
export async function readAuditAnchor(
  target: string,
  options: { timeoutMs?: number } = {},
): Promise<{ checkpoint: AuditCheckpoint } | { problem: string } | undefined> {
  if (!isHttp(target)) {
    try {
      return await readCheckpoint(filePath(target));
    } catch (error) {
      return { problem: `cannot read anchor ${target}: ${(error as Error).message}` };
    }
  }
  let text: string;
  let name = describeUrl(target);
  try {
    const http = httpTarget(target);
    name = http.name;
    const response = await fetch(http.url, {
      headers: http.headers,
      signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_ANCHOR_TIMEOUT_MS),
    });
    text = await response.text();
    if (response.status === 404) return undefined;
    if (!response.ok) return { problem: `anchor ${name} answered HTTP ${response.status}` };
  } catch (error) {
    if (AuditError.isInstance(error)) return { problem: error.message };
    return { problem: `cannot read anchor ${name}: ${fetchFailure(error)}` };
  }
  const parsed = parseCheckpoint(text.trim());
  return parsed.ok ? { checkpoint: parsed.checkpoint } : { problem: `anchor ${name}: ${parsed.problem}` };
}
