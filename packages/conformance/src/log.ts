/**
 * What the conformance harness's handlers saw, readable over the wire with the reserved
 * queries `conformance/log`, `conformance/errors` and `conformance/reset`.
 */
import type { AhpEvent, EventType, HandshakeRequest, JsonRpcId, QueryRequest } from "@ahp/core";

/** Which handler was called. */
export type ConformanceHandlerKind = "handshake" | "event" | "typed" | "notification" | "query";
/** How the message that reached the handler arrived. */
export type ConformanceArrival = "request" | "notification" | "batch";

/** One handler call. */
export interface ConformanceRecord {
  /** Order in which handler calls started (1, 2, ... per harness). */
  seq: number;
  /** Order in which handler calls finished (shares the counter with `seq`); absent while running. */
  done?: number;
  /** `ok`, or `error` when the handler failed (scripted throw, timeout, abort). Absent while running. */
  outcome?: "ok" | "error";
  handler: ConformanceHandlerKind;
  via: ConformanceArrival;
  session_id: string;
  agent_id: string;
  event_type?: EventType;
  /** JSON-RPC id of the request (absent for notifications). */
  request_id?: JsonRpcId;
  /** Position and size of the batch, for batch elements. */
  batch_index?: number;
  batch_size?: number;
  /** Server-side connection number and transport name. */
  connection: number;
  transport: string;
  /** The full event, for event, typed and notification handlers. */
  event?: AhpEvent;
  query?: QueryRequest;
  handshake?: HandshakeRequest;
}

/** A non-fatal problem the server reported (rejected notification, undecodable frame, send failure). */
export interface ConformanceErrorRecord {
  seq: number;
  message: string;
  code?: number | string;
}

export interface LogFilter {
  session_id?: string;
  handler?: ConformanceHandlerKind;
}

export interface LogWait extends LogFilter {
  /** Wait until at least this many matching records exist. */
  min_count?: number;
  /** Wait until every matching record has finished (default true). */
  settle?: boolean;
  /** Give up waiting after this long and answer what there is. Default 2000, at most 10000. */
  timeout_ms?: number;
}

const matches = (record: ConformanceRecord, filter: LogFilter): boolean =>
  (filter.session_id === undefined || record.session_id === filter.session_id) &&
  (filter.handler === undefined || record.handler === filter.handler);

const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

export class ConformanceLog {
  readonly limit: number;
  #records: ConformanceRecord[] = [];
  #errors: ConformanceErrorRecord[] = [];
  #seq = 0;
  #errorSeq = 0;
  #dropped = 0;
  #listeners = new Set<() => void>();

  constructor(limit = 10_000) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`logLimit must be a positive integer, got ${limit}`);
    this.limit = limit;
  }

  /** Records dropped because the log was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Starts a record; call the returned function when the handler finishes. */
  begin(record: Omit<ConformanceRecord, "seq" | "done" | "outcome">): (outcome: "ok" | "error") => void {
    const full: ConformanceRecord = { seq: ++this.#seq, ...record };
    this.#records.push(full);
    const excess = this.#records.length - this.limit;
    if (excess > 0) {
      this.#records.splice(0, excess);
      this.#dropped += excess;
    }
    this.#changed();
    let finished = false;
    return (outcome) => {
      if (finished) return;
      finished = true;
      full.done = ++this.#seq;
      full.outcome = outcome;
      this.#changed();
    };
  }

  error(message: string, code?: number | string): void {
    this.#errors.push({ seq: ++this.#errorSeq, message, ...(code === undefined ? {} : { code }) });
    if (this.#errors.length > this.limit) this.#errors.splice(0, this.#errors.length - this.limit);
  }

  records(filter: LogFilter = {}): ConformanceRecord[] {
    return this.#records.filter((r) => matches(r, filter)).map((r) => structuredClone(r));
  }

  /** Errors with a sequence number above `since`, and the latest sequence number. */
  errors(since = 0): { errors: ConformanceErrorRecord[]; last: number } {
    return { errors: this.#errors.filter((e) => e.seq > since).map((e) => ({ ...e })), last: this.#errorSeq };
  }

  /** Removes matching records; returns how many. */
  clear(filter: LogFilter = {}): number {
    const before = this.#records.length;
    this.#records = this.#records.filter((r) => !matches(r, filter));
    if (filter.session_id === undefined && filter.handler === undefined) this.#errors = [];
    return before - this.#records.length;
  }

  /**
   * Waits until the matching records are complete: at least `min_count` of them and (unless
   * `settle: false`) none still running, stable across two macrotask turns so that messages
   * already delivered to the server have reached their handlers. Resolves `false` on timeout.
   */
  async waitFor(wait: LogWait, signal?: AbortSignal): Promise<boolean> {
    const timeoutMs = Math.min(Math.max(wait.timeout_ms ?? 2000, 0), 10_000);
    const deadline = Date.now() + timeoutMs;
    const ready = () => {
      const found = this.#records.filter((r) => matches(r, wait));
      if (found.length < (wait.min_count ?? 0)) return false;
      return wait.settle === false || found.every((r) => r.done !== undefined);
    };
    for (;;) {
      await nextMacrotask();
      if (ready()) {
        await nextMacrotask();
        if (ready()) return true;
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return false;
      await this.#nextChange(left, signal);
    }
  }

  #changed(): void {
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const listener of listeners) listener();
  }

  #nextChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#listeners.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#listeners.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
