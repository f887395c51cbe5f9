/**
 * One HTTP exchange of {@link HttpClientTransport}: how an answer's body is read (within limits),
 * how an exchange is settled and aborted, whether a failed one may be sent again, and the two
 * backends (undici's dispatcher interface and `node:http`).
 */
import * as http from "node:http";
import * as https from "node:https";
import type { OutgoingHttpHeaders } from "node:http";
import { AHP_METHODS, AhpLocalError } from "@ahp/core";
import type { Dispatcher } from "undici";

/** The read policy of every notification. */
export const READ_NOTIFICATION: ReadPolicy = { request: false, maxBytes: 0 };
/** How much of a non-2xx body is read for the error message. */
const ERROR_BODY_BYTES = 16 * 1024;

/** How much of a notification's answer is read and dropped before the connection is closed instead. */
const DISCARD_BYTES = 256 * 1024;

/**
 * What the transport does with an answer's body: a request's 2xx body is read whole up to
 * `maxBytes` (past it the exchange fails with MESSAGE_TOO_LARGE), a non-2xx body is read up to
 * {@link ERROR_BODY_BYTES} for the error message, a notification's body is read and dropped.
 */
export interface ReadPolicy {
  readonly request: boolean;
  readonly maxBytes: number;
}

/** One finished HTTP exchange as the transport needs it: the status and the body as read under the policy. */
export interface Reply {
  status: number;
  /** The body as UTF-8 (empty for a notification). */
  text: string;
}

/**
 * Collects an answer's body under a {@link ReadPolicy}. `push` says whether to go on reading;
 * when it says stop, the connection must be dropped (the rest of the body is not read) and
 * `error` is set when the exchange fails because of it.
 */
class BodySink {
  readonly #chunks: Buffer[] = [];
  #total = 0;
  readonly #limit: number;
  readonly #keep: boolean;
  readonly #truncate: boolean;
  /** Set when the body was over the limit of a 2xx answer to a request. */
  error: AhpLocalError | undefined;

  constructor(status: number, contentLength: number | undefined, policy: ReadPolicy) {
    const ok = status >= 200 && status < 300;
    this.#keep = policy.request;
    this.#truncate = !ok;
    this.#limit = !policy.request ? DISCARD_BYTES : ok ? policy.maxBytes : ERROR_BODY_BYTES;
    if (this.#keep && !this.#truncate && contentLength !== undefined && contentLength > this.#limit)
      this.error = tooLarge(contentLength, this.#limit);
  }

  /** False when the body was refused before its first byte (declared too large). */
  get open(): boolean {
    return this.error === undefined;
  }

  /** Takes one chunk; false when reading must stop here and the connection be dropped. */
  push(chunk: Buffer): boolean {
    const total = this.#total + chunk.length;
    if (total > this.#limit) {
      if (!this.#keep) return false;
      if (!this.#truncate) {
        this.error = tooLarge(total, this.#limit);
        return false;
      }
      this.#chunks.push(chunk.subarray(0, this.#limit - this.#total));
      this.#total = this.#limit;
      return false;
    }
    this.#total = total;
    if (this.#keep) this.#chunks.push(chunk);
    return true;
  }

  text(): string {
    const chunks = this.#chunks;
    if (chunks.length === 0) return "";
    return chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, this.#total).toString("utf8");
  }
}

/**
 * Settles one exchange once: with what its {@link BodySink} read, or with a failure (see
 * {@link Backend}). Once settled it lets go of everything it held (the sink, the promise's
 * functions, the backend's request): an HTTP stack may keep a finished exchange's handler for a
 * while (undici until the connection's next request), and through the promise that would keep the
 * whole call alive with it, long enough to reach the old generation under load (ADR 0135).
 */
abstract class Exchange {
  sink: BodySink | undefined;
  settled = false;
  /** Whether bytes of the request may have reached the connection (set by the backend). */
  sent = false;
  #status = 0;
  #resolve: ((reply: Reply) => void) | undefined;
  #reject: ((error: Error) => void) | undefined;

  constructor(
    readonly policy: ReadPolicy,
    resolve: (reply: Reply) => void,
    reject: (error: Error) => void,
  ) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /**
   * Stops the exchange (the {@link Abort} of its call fired): aborts the backend's request and
   * fails the call now. A request still queued for a busy connection would otherwise only report
   * its abort once it got one.
   */
  cancel(): void {
    if (this.settled) return;
    this.abortRequest();
    this.fail(new Error("request aborted"));
  }

  /** Aborts the backend's request, now or as soon as the backend starts it. */
  protected abstract abortRequest(): void;

  /** Lets go of the backend's request (called once settled). */
  protected abstract release(): void;

  /** The answer's status arrived: the sink that reads its body. */
  start(status: number, contentLength: number | undefined): BodySink {
    this.#status = status;
    this.sink = new BodySink(status, contentLength, this.policy);
    return this.sink;
  }

  /** The body ended (or the sink stopped reading): settles with the sink's text or its error. */
  finish(): void {
    if (this.settled) return;
    const sink = this.sink;
    if (sink?.error !== undefined) this.#settle(undefined, sink.error);
    else this.#settle({ status: this.#status, text: sink?.text() ?? "" }, undefined);
  }

  /** The exchange failed. A notification that got its answer's status is done, whatever happens to the body. */
  fail(error: Error): void {
    if (this.settled) return;
    if (this.sink !== undefined && !this.policy.request) this.#settle({ status: this.#status, text: "" }, undefined);
    else this.#settle(undefined, new ExchangeFailure(error, this.sent, this.sink !== undefined));
  }

  #settle(reply: Reply | undefined, error: Error | undefined): void {
    const resolve = this.#resolve;
    const reject = this.#reject;
    this.settled = true;
    this.sink = this.#resolve = this.#reject = undefined;
    this.release();
    if (error !== undefined) reject?.(error);
    else resolve?.(reply!);
  }
}

/** Why an exchange failed, and how far it got: whether request bytes went out and whether an answer began. */
export class ExchangeFailure extends Error {
  constructor(
    override readonly cause: Error,
    readonly sent: boolean,
    readonly answered: boolean,
  ) {
    super(cause.message);
  }
}

/** Codes of a connection the peer closed or reset under the exchange. */
const CONNECTION_LOST = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/**
 * Whether a failed exchange may be sent again on a new connection (once): the connection was
 * closed or reset before any answer began, and either none of the request went out or the
 * method is idempotent by the protocol's rules (`ahp/handshake`, `ahp/query`: repeating them
 * changes nothing). Events, batches and notifications whose bytes went out are never repeated:
 * the harness may have decided and recorded them (ADR 0169).
 */
export function mayResend(error: unknown, method: unknown): boolean {
  if (!(error instanceof ExchangeFailure) || error.answered) return false;
  const code = (error.cause as { code?: unknown }).code;
  const lost = (typeof code === "string" && CONNECTION_LOST.has(code)) || error.cause.message === "socket hang up";
  if (!lost) return false;
  return !error.sent || method === AHP_METHODS.handshake || method === AHP_METHODS.query;
}

/**
 * Aborts one exchange: one target at a time (the backend's exchange), cancelled once. Not an
 * AbortController: an AbortSignal with a listener cost about 20 µs of CPU per request on this
 * path (measured), a quarter of a whole loopback round trip.
 */
export class Abort {
  #target: Exchange | undefined;
  #aborted = false;
  /** Cancels `exchange` when this fires (at once, in a microtask, when it already has). */
  bind(exchange: Exchange): void {
    if (this.#aborted) queueMicrotask(() => exchange.cancel());
    else this.#target = exchange;
  }
  /** Cancels the bound exchange, once. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const target = this.#target;
    this.#target = undefined;
    target?.cancel();
  }
}

/**
 * Sends one POST and reads its answer under `policy`. Rejects with the cause when the exchange
 * fails (connection, abort, a 2xx body over the limit); a notification's answer body that breaks
 * off after the status arrived does not fail it.
 */
export type Backend = (body: string, abort: Abort, policy: ReadPolicy) => Promise<Reply>;

function tooLarge(bytes: number, limit: number): AhpLocalError {
  return new AhpLocalError("MESSAGE_TOO_LARGE", `HTTP response too large: ${bytes} bytes exceeds limit ${limit}`, {
    details: { bytes, limit },
  });
}

/**
 * One exchange over undici: the dispatch handler itself, one object per request with no closures,
 * so that what undici keeps of it after the answer is an empty shell (see {@link Exchange}).
 */
class UndiciExchange extends Exchange implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #cancelled = false;

  protected abortRequest(): void {
    // Aborted now when started; when still queued for a connection, as soon as undici starts it.
    this.#cancelled = true;
    this.#controller?.abort(new Error("request aborted"));
  }

  protected release(): void {
    this.#controller = undefined;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // undici starts a request as it writes it on a connection.
    this.sent = true;
    if (this.#cancelled) controller.abort(new Error("request aborted"));
    else if (!this.settled) this.#controller = controller;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    const lengthHeader = headers["content-length"];
    if (!this.start(statusCode, typeof lengthHeader === "string" ? Number(lengthHeader) : undefined).open) {
      this.finish();
      controller.abort(new Error("response body over the limit"));
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const sink = this.sink;
    if (this.settled || sink === undefined || sink.push(chunk)) return;
    // Stop reading: settle with what the sink decided, then drop the connection.
    this.finish();
    controller.abort(new Error("response body not read further"));
  }

  onResponseEnd(): void {
    this.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }
}

/**
 * The undici backend on the dispatcher's handler interface: the answer's status and body arrive
 * as callbacks and go straight into a {@link BodySink}, without the response stream (and its
 * events and buffering) that `dispatcher.request()` builds per exchange. Measured on loopback,
 * that saved 6–9 µs of CPU per round trip (ADR 0133).
 */
export function undiciBackend(url: URL, headers: Record<string, string>, dispatcher: Dispatcher): Backend {
  const path = `${url.pathname}${url.search}`;
  const origin = url.origin;
  return (body, abort, policy) =>
    new Promise<Reply>((resolve, reject) => {
      const exchange = new UndiciExchange(policy, resolve, reject);
      abort.bind(exchange);
      dispatcher.dispatch({ origin, path, method: "POST", headers, body }, exchange);
    });
}

/** One exchange over `node:http`: cancelling it destroys its request. */
class NodeExchange extends Exchange {
  request: http.ClientRequest | undefined;

  protected abortRequest(): void {
    this.request?.destroy(new Error("request aborted"));
  }

  protected release(): void {
    this.request = undefined;
  }
}

export function nodeBackend(url: URL, headers: Record<string, string>, agent: http.Agent): Backend {
  const request = url.protocol === "https:" ? https.request : http.request;
  const base = {
    protocol: url.protocol,
    hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === "" ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: "POST",
    agent,
  };
  return (body, abort, policy) =>
    new Promise<Reply>((resolve, reject) => {
      const exchange = new NodeExchange(policy, resolve, reject);
      const requestHeaders: OutgoingHttpHeaders = { ...headers, "content-length": Buffer.byteLength(body) };
      const req = request({ ...base, headers: requestHeaders }, (res) => {
        const lengthHeader = res.headers["content-length"];
        const sink = exchange.start(res.statusCode ?? 0, lengthHeader === undefined ? undefined : Number(lengthHeader));
        res.on("error", () => undefined);
        if (!sink.open) {
          exchange.finish();
          res.destroy();
          return;
        }
        res.on("data", (chunk: Buffer) => {
          if (exchange.settled || sink.push(chunk)) return;
          res.removeAllListeners("data");
          // Settle first: destroying emits `aborted` synchronously.
          exchange.finish();
          res.destroy();
        });
        res.once("end", () => exchange.finish());
        res.once("error", (error: Error) => exchange.fail(error));
        res.once("aborted", () => exchange.fail(new Error("response aborted")));
        res.once("close", () => exchange.fail(new Error("response closed before its end")));
      });
      req.once("error", (error: Error) => exchange.fail(error));
      // Bytes of this request went out once the socket's count grew past what it had when assigned.
      req.once("socket", (socket) => {
        const before = socket.bytesWritten;
        const check = () => {
          if (socket.bytesWritten > before) exchange.sent = true;
        };
        req.prependOnceListener("error", check);
      });
      exchange.request = req;
      abort.bind(exchange);
      req.end(body);
    });
}
