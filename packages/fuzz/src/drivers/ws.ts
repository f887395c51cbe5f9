/**
 * Fuzz driver for WebSocket: units go pipelined as frames on one connection. A unit the model
 * says must close the connection (a text frame that is not UTF-8, a frame over the size limit)
 * is sent alone on a connection of its own, which must then close with the right code, and the
 * harness must log why.
 */
import WebSocket from "ws";
import { canaries, checkCanaries } from "../canary.js";
import { expectFrame, matchAnswers, type ExpectedAnswer } from "../expect.js";
import type { HarnessProcess } from "../harness-process.js";
import type { FuzzInput } from "../mutate.js";
import { DEFAULT_BATCH_TIMEOUT_MS, type BatchResult, type Driver } from "./types.js";

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { maxPayload: 64 * 1024 * 1024 });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

export class WebSocketDriver implements Driver {
  readonly transport = "ws" as const;
  readonly #url: string;
  readonly #harness: HarnessProcess | undefined;
  readonly #timeoutMs: number;
  #ws: WebSocket | undefined;
  #answers: unknown[] = [];
  #garbage: string[] = [];
  #closedUnexpectedly: string | undefined;
  #wake: (() => void) | undefined;

  /** `harness`, when given, is checked for a log line about every connection it closed. */
  constructor(url: string, harness?: HarnessProcess, timeoutMs = DEFAULT_BATCH_TIMEOUT_MS) {
    this.#url = url;
    this.#harness = harness;
    this.#timeoutMs = timeoutMs;
  }

  async #main(): Promise<WebSocket> {
    if (this.#ws !== undefined && this.#ws.readyState === WebSocket.OPEN) return this.#ws;
    const ws = await open(this.#url);
    ws.on("message", (data: Buffer, isBinary) => {
      if (isBinary) this.#garbage.push("binary frame");
      else {
        const text = data.toString("utf8");
        try {
          this.#answers.push(JSON.parse(text));
        } catch {
          this.#garbage.push(text.slice(0, 200));
        }
      }
      this.#wake?.();
    });
    ws.on("close", (code, reason) => {
      if (this.#ws === ws) this.#closedUnexpectedly = `main connection closed by the harness: ${code} ${reason.toString()}`;
      this.#wake?.();
    });
    ws.on("error", () => undefined);
    this.#ws = ws;
    return ws;
  }

  /** Sends one frame on a fresh connection and waits for the harness to close it. */
  async #expectClose(unit: FuzzInput, codes: number[], why: string): Promise<string | undefined> {
    const ws = await open(this.#url);
    ws.on("error", () => undefined);
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    ws.send(unit.bytes, { binary: unit.binary === true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const code = await Promise.race([
      closed,
      new Promise<number | undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), this.#timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (code === undefined) {
      ws.terminate();
      return `${why}: the harness did not close the connection`;
    }
    // 1006: the harness destroyed the socket without a close frame, which `ws` does for some frame errors.
    if (!codes.includes(code) && code !== 1006) return `${why}: closed with ${code}, expected ${codes.join(" or ")}`;
    return undefined;
  }

  async run(units: readonly FuzzInput[], tag: string): Promise<BatchResult> {
    const started = performance.now();
    const problems: string[] = [];
    const expected: ExpectedAnswer[] = [];
    const closing: Array<{ unit: FuzzInput; codes: number[]; why: string }> = [];
    const pipelined: FuzzInput[] = [];
    for (const unit of units) {
      const e = expectFrame(unit.bytes, { websocket: true, binary: unit.binary === true });
      if (e.kind === "close") closing.push({ unit, codes: e.codes, why: `${e.why} (${unit.note})` });
      else if (e.kind === "answers") {
        expected.push(...e.answers);
        pipelined.push(unit);
      }
    }
    const warningsBefore = this.#harness?.warnings().filter((l) => l.transport === "ws").length ?? 0;
    for (const c of closing) {
      const problem = await this.#expectClose(c.unit, c.codes, c.why);
      if (problem !== undefined) problems.push(problem);
    }
    const ws = await this.#main();
    const list = canaries(tag);
    this.#answers = [];
    this.#garbage = [];
    for (const unit of pipelined) ws.send(unit.bytes, { binary: unit.binary === true });
    for (const c of list) ws.send(c.text);
    const want = expected.length + list.length;
    const deadline = Date.now() + this.#timeoutMs;
    while (this.#answers.length < want && this.#closedUnexpectedly === undefined && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, Math.max(1, Math.min(1000, deadline - Date.now()))).unref();
      });
      this.#wake = undefined;
    }
    const answers = this.#answers;
    this.#answers = [];
    const checked = checkCanaries(list, answers);
    problems.push(...checked.problems);
    const mismatches = matchAnswers(expected, checked.rest);
    problems.push(...mismatches);
    if (this.#garbage.length > 0) problems.push(`harness sent ${this.#garbage.length} frame(s) that are not JSON: ${this.#garbage[0]}`);
    if (this.#closedUnexpectedly !== undefined) {
      problems.push(this.#closedUnexpectedly);
      this.#closedUnexpectedly = undefined;
      this.#ws = undefined;
    }
    if (this.#harness !== undefined && closing.length > 0) {
      // Every connection the harness closed must have been logged with its reason.
      const harness = this.#harness;
      const logged = await harness.waitForLogs(
        () => harness.warnings().filter((l) => l.transport === "ws").length - warningsBefore >= closing.length,
        5000,
      );
      if (!logged) problems.push(`the harness closed ${closing.length} connection(s) without logging why`);
    }
    return {
      problems,
      unanswered:
        mismatches.filter((p) => p.startsWith("no answer")).length + checked.problems.filter((p) => p.endsWith("got no answer")).length,
      elapsedMs: performance.now() - started,
    };
  }

  async close(): Promise<void> {
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws === undefined || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once("close", () => resolve());
      ws.close(1000);
      setTimeout(() => ws.terminate(), 2000).unref();
    });
  }
}
