/**
 * Readiness (`GET /readyz`) beside liveness (`GET /healthz`): `/healthz` says the process answers;
 * `/readyz` says it can decide (its policy loaded, its audit sink writable, its state store
 * reachable), as a function the application supplies. For Kubernetes: a liveness probe on
 * `/healthz`, a readiness probe on `/readyz`.
 */
import type * as http from "node:http";
import { toError } from "./errors.js";

/** One dependency's state in a {@link ReadinessReport}. */
export interface ReadinessCheck {
  ok: boolean;
  /** Why it is not ok (or what it is), for an operator; never a secret. */
  detail?: string;
}

/** What a {@link Readiness} function reports: ready or not, and each dependency's state. */
export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, ReadinessCheck>;
}

/** Tells whether the harness can decide now. A throw or rejection counts as not ready. */
export type Readiness = () => ReadinessReport | Promise<ReadinessReport>;

/** The readiness route of the HTTP and WebSocket listeners. */
export const DEFAULT_READY_PATH = "/readyz";
/** How long `/readyz` waits for the readiness function before answering 503 (ms). */
export const DEFAULT_READINESS_TIMEOUT_MS = 5_000;

/** The report of `readiness` (ready with no checks when there is none), never throwing and never waiting past `timeoutMs`. */
export async function evaluateReadiness(
  readiness: Readiness | undefined,
  timeoutMs = DEFAULT_READINESS_TIMEOUT_MS,
): Promise<ReadinessReport> {
  if (readiness === undefined) return { ready: true, checks: {} };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<ReadinessReport>((resolve) => {
      timer = setTimeout(
        () => resolve({ ready: false, checks: { readiness: { ok: false, detail: `no answer within ${timeoutMs} ms` } } }),
        timeoutMs,
      );
    });
    const report = await Promise.race([Promise.resolve().then(readiness), timeout]);
    if (report === null || typeof report !== "object" || typeof report.ready !== "boolean") {
      return { ready: false, checks: { readiness: { ok: false, detail: "the readiness function returned no report" } } };
    }
    // Not ready when any check failed, whatever `ready` says.
    const checks = report.checks ?? {};
    const ready = report.ready && Object.values(checks).every((check) => check?.ok === true);
    return { ready, checks };
  } catch (error) {
    return { ready: false, checks: { readiness: { ok: false, detail: toError(error).message } } };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Answers a readiness request: 200 when ready, 503 otherwise, with the JSON body
 * `{"status":"ready"|"not_ready","checks":{…}}` (`HEAD`: headers only; other methods: 405).
 */
export async function answerReadiness(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  readiness: Readiness | undefined,
  timeoutMs?: number,
): Promise<void> {
  const send = (status: number, body: string, extra: Record<string, string> = {}) => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, {
      ...extra,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "cache-control": "no-store",
    });
    res.end(req.method === "HEAD" ? undefined : body);
  };
  if (req.method !== "GET" && req.method !== "HEAD") {
    send(405, '{"error":"method not allowed"}', { allow: "GET, HEAD" });
    return;
  }
  const report = await evaluateReadiness(readiness, timeoutMs);
  send(report.ready ? 200 : 503, JSON.stringify({ status: report.ready ? "ready" : "not_ready", checks: report.checks }));
}
