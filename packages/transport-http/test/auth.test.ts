import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpClient, AhpLocalError, AhpServer } from "@ahp/core";
import { CredentialVerifier, credentialsFromHeaders } from "@ahp/core";
import { HttpClientTransport, listenHttp, type HttpListener } from "@ahp/transport-http";
import { captureServer, event, preAction, rawRequest, request } from "./helpers.js";

const API_KEY = "key-1 with space&amp";
const TOKEN = "tok-2";

describe("server credential verification", () => {
  let server: AhpServer;
  let listener: HttpListener;
  const principals: Array<string | undefined> = [];
  const errors: Error[] = [];
  beforeAll(async () => {
    server = new AhpServer({
      handlers: {
        onEvent: (_e, ctx) => {
          principals.push(ctx.connection.info.principal);
          return { decision: "allow" };
        },
      },
    });
    listener = await listenHttp(server, {
      auth: { apiKeys: ["other-key", API_KEY], bearerTokens: [TOKEN] },
      onerror: (e) => errors.push(e),
    });
  });
  afterAll(async () => {
    await listener.close();
    await server.close();
  });
  const body = request("a", "ahp/event", event("pre_action", preAction()));
  const post = (headers: Record<string, string>) =>
    rawRequest(listener.url, { body, headers: { "content-type": "application/json", ...headers } });

  it("accepts the right API key (lower-case x-api-key, as the reference sends it)", async () => {
    const r = await post({ "x-api-key": API_KEY });
    expect(r.status).toBe(200);
    expect(principals.at(-1)).toBe("api_key#2");
  });

  it("accepts the right bearer token (scheme is case-insensitive)", async () => {
    expect((await post({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect(principals.at(-1)).toBe("bearer#1");
    expect((await post({ authorization: `bearer ${TOKEN}` })).status).toBe(200);
  });

  it("refuses missing, wrong, differently sized and misplaced credentials with the same 401", async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { "x-api-key": "wrong" },
      { "x-api-key": `${API_KEY}x` },
      { "x-api-key": API_KEY.slice(0, -1) },
      { "x-api-key": "" },
      { authorization: "Bearer wrong" },
      { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString("base64")}` },
      { authorization: TOKEN },
      // A bearer token is not an API key and the other way round.
      { "x-api-key": TOKEN },
      { authorization: `Bearer ${API_KEY}` },
    ];
    const bodies = new Set<string>();
    for (const headers of cases) {
      const r = await post(headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.headers["www-authenticate"]).toBe('Bearer realm="ahp"');
      bodies.add(r.text);
      // Nothing presented is echoed.
      for (const value of Object.values(headers)) if (value.length > 3) expect(r.text).not.toContain(value);
    }
    expect([...bodies]).toEqual(['{"error":"unauthorized"}']);
    expect(errors).toEqual([]);
  });

  it("checks credentials before reading the body (401 even for malformed JSON)", async () => {
    const r = await rawRequest(listener.url, { body: "{nope", headers: { "content-type": "application/json" } });
    expect(r.status).toBe(401);
  });

  it("leaves /healthz open", async () => {
    const r = await rawRequest(listener.url.replace(/\/ahp$/, "/healthz"), { method: "GET" });
    expect(r.status).toBe(200);
  });

  it("our client with auth passes; without it fails with TRANSPORT_ERROR 401", async () => {
    const good = new AhpClient();
    await good.connect(new HttpClientTransport(listener.url, { auth: { type: "bearer", token: TOKEN } }));
    await expect(good.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    await good.close();

    const bad = new AhpClient();
    const failure = await bad
      .connect(new HttpClientTransport(listener.url, { auth: { type: "api_key", key: "nope" } }))
      .catch((e: unknown) => e);
    expect(AhpLocalError.isInstance(failure)).toBe(true);
    expect((failure as AhpLocalError).code).toBe("TRANSPORT_ERROR");
    expect((failure as AhpLocalError).message).toBe('HTTP error: 401 - {"error":"unauthorized"}');
    expect((failure as AhpLocalError).details).toEqual({ status: 401 });
    await bad.close();
  });
});

describe("API-key-only and function auth", () => {
  it("API keys only: 401 without WWW-Authenticate", async () => {
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const listener = await listenHttp(server, { auth: { apiKeys: ["k"] } });
    try {
      const r = await rawRequest(listener.url, { body: "{}", headers: { "content-type": "application/json", authorization: "Bearer k" } });
      expect(r.status).toBe(401);
      expect(r.headers["www-authenticate"]).toBeUndefined();
    } finally {
      await listener.close();
      await server.close();
    }
  });

  it("an auth function decides; a throwing one refuses and reports without secrets", async () => {
    const errors: Error[] = [];
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const listener = await listenHttp(server, {
      auth: async (req) => {
        if (req.headers["x-tenant"] === "boom") throw new Error("directory down");
        return req.headers["x-tenant"] === "acme";
      },
      onerror: (e) => errors.push(e),
    });
    const body = request("f", "ahp/event", event("pre_action", preAction()));
    try {
      expect((await rawRequest(listener.url, { body, headers: { "content-type": "application/json", "x-tenant": "acme" } })).status).toBe(
        200,
      );
      expect((await rawRequest(listener.url, { body, headers: { "content-type": "application/json", "x-tenant": "other" } })).status).toBe(
        401,
      );
      expect((await rawRequest(listener.url, { body, headers: { "content-type": "application/json", "x-tenant": "boom" } })).status).toBe(
        401,
      );
      expect(errors.map((e) => e.message)).toEqual(["auth function failed: directory down"]);
    } finally {
      await listener.close();
      await server.close();
    }
  });

  it("refuses an auth configuration without credentials", async () => {
    const server = new AhpServer();
    await expect(listenHttp(server, { auth: {} })).rejects.toThrow(/without any API key or bearer token/);
    await expect(listenHttp(server, { auth: { apiKeys: [""] } })).rejects.toThrow(/non-empty/);
  });
});

describe("CredentialVerifier", () => {
  it("compares digests of any length without throwing (timingSafeEqual needs equal lengths)", () => {
    const v = new CredentialVerifier({ apiKeys: ["short", "a-much-longer-key-than-the-first-one"], bearerTokens: ["t"] });
    expect(v.verify({ apiKey: "short" })).toBe("api_key#1");
    expect(v.verify({ apiKey: "a-much-longer-key-than-the-first-one" })).toBe("api_key#2");
    expect(v.verify({ apiKey: "x".repeat(10_000) })).toBeUndefined();
    expect(v.verify({ apiKey: "" })).toBeUndefined();
    expect(v.verify({ apiKey: "ｓhort" })).toBeUndefined();
    expect(v.verify({ bearerToken: "t" })).toBe("bearer#1");
    expect(v.verify({ bearerToken: "short" })).toBeUndefined();
    expect(v.verify({})).toBeUndefined();
    expect(v.acceptsBearer).toBe(true);
  });

  it("reads credentials from headers", () => {
    expect(credentialsFromHeaders({ "x-api-key": "k", authorization: "Bearer  t " })).toEqual({ apiKey: "k", bearerToken: "t" });
    expect(credentialsFromHeaders({ authorization: "Basic abc" })).toEqual({ apiKey: undefined, bearerToken: undefined });
  });
});

describe("what the client puts on the wire (checklist 89)", () => {
  it("POST, content-type application/json, lower-case x-api-key, no credentials elsewhere", async () => {
    const capture = await captureServer();
    try {
      const client = new AhpClient();
      await client.connect(
        new HttpClientTransport(capture.url, { auth: { type: "api_key", key: "test-key" }, headers: { "X-Trace": "t1" } }),
      );
      await client.send("pre_action", preAction());
      const req = capture.requests.at(-1)!;
      expect(req.method).toBe("POST");
      expect(req.url).toBe("/ahp");
      expect(req.headers["content-type"]).toBe("application/json");
      expect(req.headers["x-api-key"]).toBe("test-key");
      expect(req.headers["x-trace"]).toBe("t1");
      expect(req.headers.authorization).toBeUndefined();
      // The raw header names as sent: lower-case, like the reference.
      expect(req.rawHeaders).toContain("x-api-key");
      expect(req.rawHeaders).toContain("content-type");
      const sent = JSON.parse(req.body) as { jsonrpc: string; id: string; method: string };
      expect(sent).toMatchObject({ jsonrpc: "2.0", method: "ahp/event" });
      expect(sent.id).toMatch(/^[0-9a-f-]{36}$/);
      await client.close();
    } finally {
      await capture.close();
    }
  });

  it("Authorization: Bearer for bearer auth, with both HTTP stacks", async () => {
    const capture = await captureServer();
    try {
      for (const stack of ["undici", "node"] as const) {
        const transport = new HttpClientTransport(capture.url, { auth: { type: "bearer", token: "tok en" }, client: stack });
        const client = new AhpClient();
        await client.connect(transport, { handshake: false });
        await client.handshake();
        const req = capture.requests.at(-1)!;
        expect(req.headers.authorization, stack).toBe("Bearer tok en");
        expect(req.headers["x-api-key"]).toBeUndefined();
        expect(req.headers["content-type"]).toBe("application/json");
        await client.close();
      }
    } finally {
      await capture.close();
    }
  });

  it("other auth kinds add nothing; header values that cannot be sent are refused without echoing them", async () => {
    const capture = await captureServer();
    try {
      const client = new AhpClient();
      await client.connect(
        new HttpClientTransport(capture.url, { auth: { type: "o_auth", client_id: "c", client_secret: "s", token_url: "u" } }),
        { handshake: false },
      );
      await client.handshake();
      const req = capture.requests.at(-1)!;
      expect(req.headers.authorization).toBeUndefined();
      expect(req.headers["x-api-key"]).toBeUndefined();
      await client.close();
    } finally {
      await capture.close();
    }
    expect(() => new HttpClientTransport("http://127.0.0.1:1/ahp", { auth: { type: "api_key", key: "evil\r\nx: y" } })).toThrow(
      /header x-api-key has a value that cannot be sent/,
    );
    const thrown = (() => {
      try {
        new HttpClientTransport("http://127.0.0.1:1/ahp", { auth: { type: "bearer", token: "secret\n" } });
        return undefined;
      } catch (e) {
        return e as Error;
      }
    })();
    expect(AhpLocalError.isInstance(thrown)).toBe(true);
    expect(thrown!.message).not.toContain("secret");
  });
});
