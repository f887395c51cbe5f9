/**
 * Approval notifications (ADR 0146): an HTTP POST to each configured webhook when a request starts
 * to wait for a person and when it ends. The body is JSON with a `text` field (what Slack-style
 * incoming webhooks show) plus the structured event; it links to the inspector, never with a
 * token. Each POST is signed: `X-AHP-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`
 * with the Unix time in seconds in `X-AHP-Timestamp`. Failed deliveries are retried with
 * exponential backoff. Nothing here is on the decision path: `notify` only queues.
 */
import { createHmac } from "node:crypto";
import type { ApprovalEvent } from "./approvals.js";
import { seconds } from "./hold-wait.js";

/** One receiver: its URL and the secret its signatures are made with (none: unsigned). */
/** One receiver of approval notifications: where to POST, and the HMAC secret that signs the body. */
export interface ApprovalWebhook {
  url: string;
  secret?: string;
}

/** Options of {@link ApprovalNotifier}: the receivers, the inspector link, retries and time limits. */
export interface NotifierOptions {
  webhooks: readonly ApprovalWebhook[];
  /** The inspector's address (no token), linked from every message. */
  inspectorUrl?: () => string | undefined;
  /** Attempts per message, the first included. Default 5. */
  attempts?: number;
  /** The first retry's delay; each next one doubles (with jitter), at most 30 s. Default 500. */
  backoffMs?: number;
  /** Time limit of one POST. Default 10 000. */
  requestTimeoutMs?: number;
  /** A delivery failed for good (after every attempt), or one attempt failed (`final` false). */
  onfailure?: (info: { url: string; attempt: number; final: boolean; error: string }) => void;
  /** Injected `fetch` (tests). Default the global one. */
  fetch?: typeof fetch;
}

/** The header carrying `v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>` on every webhook POST. */
export const SIGNATURE_HEADER = "x-ahp-signature";
/** The header carrying the time the signature covers (receivers refuse old ones against replays). */
export const TIMESTAMP_HEADER = "x-ahp-timestamp";

/** The signature a receiver recomputes: `v1=` + hex HMAC-SHA256 over `<timestamp>.<body>`. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

const OUTCOME_WORDS: Record<string, string> = {
  approved: "approved",
  edited: "approved with edits",
  denied: "denied",
  "handed-to-host": "not answered in time; handed to the host's own prompt",
  "timed-out": "not answered in time; blocked",
  "agent-gone": "the agent went away before an answer",
  cancelled: "the run was cancelled",
  stopped: "the harness stopped before an answer",
};

/** The one line a chat shows for an approval event. */
export function webhookText(event: ApprovalEvent, link: string | undefined): string {
  const what = event.kind === "tool" ? `\`${event.subject}\`` : "a confirmation";
  const where = `session ${event.sessionId}`;
  let text: string;
  if (event.phase === "held") {
    const remaining = Date.parse(event.deadline) - Date.now();
    text = `Approval needed${event.target === undefined ? "" : ` (${event.target})`}: ${what} in ${where}`;
    if (event.why !== undefined) text += ` — ${event.why}`;
    text += `. Waits ${Number.isFinite(remaining) ? seconds(remaining) : "until its deadline"}.`;
  } else {
    const outcome = OUTCOME_WORDS[event.outcome ?? ""] ?? event.decision ?? "ended";
    const by = event.approver === undefined ? "" : ` by ${event.approver}`;
    text = `${what} in ${where}: ${outcome}${by}`;
    if (event.reason !== undefined && event.outcome !== "approved") text += ` (${event.reason})`;
    text += ".";
  }
  return link === undefined ? text : `${text} ${link}`;
}

/**
 * Sends approval notifications (a hold, its outcome) to every webhook, off the decision path:
 * queued, signed, retried with backoff, never awaited by a decision.
 */
export class ApprovalNotifier {
  readonly #options: NotifierOptions;
  readonly #controller = new AbortController();
  /** Per receiver and held request: the delivery chain, so that an outcome follows its hold. */
  readonly #chains = new Map<string, Promise<void>>();
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: NotifierOptions) {
    this.#options = options;
  }

  /** Queues the event for every receiver; returns at once. */
  notify(event: ApprovalEvent): void {
    if (this.#controller.signal.aborted) return;
    const link = this.#link(event);
    const body = JSON.stringify({
      text: webhookText(event, link),
      event: `approval.${event.phase}`,
      approval: event,
      ...(link === undefined ? {} : { inspector_url: link }),
    });
    for (const hook of this.#options.webhooks) {
      const key = `${hook.url}\n${event.id}`;
      const previous = this.#chains.get(key) ?? Promise.resolve();
      const next = previous.then(() => this.#deliver(hook, body));
      this.#chains.set(key, next);
      this.#inFlight.add(next);
      void next.finally(() => {
        this.#inFlight.delete(next);
        if (this.#chains.get(key) === next) this.#chains.delete(key);
      });
    }
  }

  /** Resolves once every queued delivery ended (delivered or given up). */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** Stops retrying and aborts requests in flight. */
  close(): void {
    this.#controller.abort();
  }

  #link(event: ApprovalEvent): string | undefined {
    const base = this.#options.inspectorUrl?.();
    if (base === undefined) return undefined;
    try {
      const url = new URL(base);
      url.search = "";
      url.hash = `session=${encodeURIComponent(event.sessionUri)}`;
      return url.toString();
    } catch {
      return undefined;
    }
  }

  async #deliver(hook: ApprovalWebhook, body: string): Promise<void> {
    const attempts = Math.max(1, this.#options.attempts ?? 5);
    const base = this.#options.backoffMs ?? 500;
    const doFetch = this.#options.fetch ?? fetch;
    const stop = this.#controller.signal;
    for (let attempt = 1; attempt <= attempts && !stop.aborted; attempt++) {
      let error: string;
      try {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const headers: Record<string, string> = { "content-type": "application/json", [TIMESTAMP_HEADER]: timestamp };
        if (hook.secret !== undefined) headers[SIGNATURE_HEADER] = signWebhook(hook.secret, timestamp, body);
        const response = await doFetch(hook.url, {
          method: "POST",
          headers,
          body,
          redirect: "error",
          signal: AbortSignal.any([stop, AbortSignal.timeout(this.#options.requestTimeoutMs ?? 10_000)]),
        });
        await response.body?.cancel().catch(() => undefined);
        if (response.ok) return;
        error = `HTTP ${response.status}`;
        // A receiver that refuses the message itself will refuse it again.
        if (response.status < 500 && response.status !== 408 && response.status !== 429) {
          this.#options.onfailure?.({ url: redact(hook.url), attempt, final: true, error });
          return;
        }
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      const final = attempt === attempts || stop.aborted;
      this.#options.onfailure?.({ url: redact(hook.url), attempt, final, error });
      if (final) return;
      const delay = Math.min(30_000, base * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
      await sleep(delay, stop);
    }
  }
}

/** A webhook URL as it may be logged: Slack-style URLs carry their secret in the path. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return "(invalid url)";
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref?.();
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
