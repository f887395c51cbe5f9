/** Fuzz driver for HTTP: every unit is one POST to `/ahp`, many in flight over kept-alive sockets. */
import * as http from "node:http";
import { canaries, checkCanaries } from "../canary.js";
import { expectHttp, matchAnswers, preview } from "../expect.js";
import type { FuzzInput } from "../mutate.js";
import { DEFAULT_BATCH_TIMEOUT_MS, type BatchResult, type Driver } from "./types.js";

interface Reply {
  status: number;
  body: string;
}

export class HttpDriver implements Driver {
  readonly transport = "http" as const;
  readonly #url: URL;
  readonly #agent: http.Agent;
  readonly #timeoutMs: number;
  readonly #concurrency: number;

  constructor(url: string, options: { timeoutMs?: number; concurrency?: number } = {}) {
    this.#url = new URL(url);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS;
    this.#concurrency = options.concurrency ?? 16;
    this.#agent = new http.Agent({ keepAlive: true, maxSockets: this.#concurrency });
  }

  /**
   * POSTs one body. A request that failed because the harness closed an idle kept-alive socket
   * just as it was reused is sent again once (what the Node documentation recommends for
   * `request.reusedSocket`); any other failure is reported.
   */
  async post(body: Uint8Array | string, contentType = "application/json"): Promise<Reply> {
    try {
      return await this.#post(body, contentType);
    } catch (error) {
      if ((error as { reusedSocket?: boolean }).reusedSocket === true) return this.#post(body, contentType);
      throw error;
    }
  }

  #post(body: Uint8Array | string, contentType: string): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { "content-length": Buffer.byteLength(body) };
      if (contentType !== "") headers["content-type"] = contentType;
      const req = http.request(this.#url, { method: "POST", agent: this.#agent, headers, timeout: this.#timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new Error(`no answer within ${this.#timeoutMs} ms`)));
      req.on("error", (error: Error & { code?: string }) => {
        if (req.reusedSocket && error.code === "ECONNRESET") Object.assign(error, { reusedSocket: true });
        reject(error);
      });
      req.end(body);
    });
  }

  async #check(unit: FuzzInput): Promise<string[]> {
    const e = expectHttp(unit.bytes, unit.contentType);
    if (e.kind !== "http") return [];
    let reply: Reply;
    try {
      reply = await this.post(unit.bytes, unit.contentType);
    } catch (error) {
      // A 413 closes the connection; Node may report the cut while the body was still being written.
      if (e.statuses.includes(413) && /EPIPE|ECONNRESET|socket hang up/.test((error as Error).message)) return [];
      return [`${e.why}: request failed: ${(error as Error).message} (${unit.note})`];
    }
    if (!e.statuses.includes(reply.status))
      return [`${e.why}: status ${reply.status}, expected ${e.statuses.join(" or ")} (${unit.note}): ${preview(reply.body)}`];
    if (reply.status === 204) return reply.body === "" ? [] : [`204 with a body: ${preview(reply.body)}`];
    let body: unknown;
    try {
      body = JSON.parse(reply.body);
    } catch {
      return [`status ${reply.status} with a body that is not JSON (${unit.note}): ${preview(reply.body)}`];
    }
    const answer = e.answer ?? e.emptyOr;
    if (answer === undefined) return [];
    return matchAnswers([answer], [body]).map((p) => `${p} (${unit.note})`);
  }

  async run(units: readonly FuzzInput[], tag: string): Promise<BatchResult> {
    const started = performance.now();
    const problems: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < units.length) {
        const unit = units[next++]!;
        problems.push(...(await this.#check(unit)));
      }
    };
    await Promise.all(Array.from({ length: this.#concurrency }, worker));
    const list = canaries(tag);
    const answers: unknown[] = [];
    await Promise.all(
      list.map(async (c) => {
        try {
          const reply = await this.post(c.text);
          answers.push(JSON.parse(reply.body));
        } catch (error) {
          problems.push(`canary ${c.id}: ${(error as Error).message}`);
        }
      }),
    );
    const checked = checkCanaries(list, answers);
    problems.push(...checked.problems);
    return {
      problems,
      unanswered: problems.filter((p) => /no answer|request failed/.test(p)).length,
      elapsedMs: performance.now() - started,
    };
  }

  async close(): Promise<void> {
    this.#agent.destroy();
  }
}
