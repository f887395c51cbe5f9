import { describe, expect, it } from "vitest";
import { AhpClient } from "@ahp/core";
import { WebSocketClientTransport, buildWebSocketUrl, formEncode } from "@ahp/transport-ws";
import { rawWsServer } from "./helpers.js";

describe("query-string credentials exactly as the reference (spec §13.3, checklist 91)", () => {
  it("appends api_key after an existing query", () => {
    expect(buildWebSocketUrl("ws://localhost:8080/ahp?existing=1", { type: "api_key", key: "test-key" }).href).toBe(
      "ws://localhost:8080/ahp?existing=1&api_key=test-key",
    );
  });

  it("form-encodes a bearer token: space → +, & → %26", () => {
    expect(buildWebSocketUrl("ws://localhost:8080/ahp", { type: "bearer", token: "token with space&symbols" }).href).toBe(
      "ws://localhost:8080/ahp?token=token+with+space%26symbols",
    );
  });

  it("normalizes a path-less URL to end in /", () => {
    expect(buildWebSocketUrl("ws://localhost:8080", { type: "api_key", key: "k" }).href).toBe("ws://localhost:8080/?api_key=k");
    expect(buildWebSocketUrl("wss://example.test").href).toBe("wss://example.test/");
  });

  it("keeps the existing query byte for byte", () => {
    expect(buildWebSocketUrl("ws://h/ahp?a=%20b&c=d+e", { type: "api_key", key: "k" }).href).toBe("ws://h/ahp?a=%20b&c=d+e&api_key=k");
  });

  it("adds nothing for other auth kinds or in header mode", () => {
    expect(buildWebSocketUrl("ws://h/ahp?x=1", { type: "none" }).href).toBe("ws://h/ahp?x=1");
    expect(buildWebSocketUrl("ws://h/ahp", { type: "mutual_tls", cert_path: "c", key_path: "k" }).href).toBe("ws://h/ahp");
    expect(buildWebSocketUrl("ws://h/ahp", { type: "api_key", key: "k" }, "header").href).toBe("ws://h/ahp");
  });

  it("refuses non-WebSocket URLs", () => {
    expect(() => buildWebSocketUrl("http://h/ahp")).toThrow(/ws: or wss:/);
  });

  it("formEncode follows application/x-www-form-urlencoded", () => {
    expect(formEncode("aZ09*-._")).toBe("aZ09*-._");
    expect(formEncode("a b")).toBe("a+b");
    expect(formEncode("+&=~/?#%")).toBe("%2B%26%3D%7E%2F%3F%23%25");
    expect(formEncode("é€")).toBe("%C3%A9%E2%82%AC");
  });

  it("the upgrade request carries exactly that query, and info shows no credentials", async () => {
    const raw = await rawWsServer();
    try {
      const transport = new WebSocketClientTransport(`${raw.url}?existing=1`, {
        auth: { type: "bearer", token: "token with space&symbols" },
      });
      expect(transport.info).toEqual({ transport: "ws", remote: raw.url });
      const client = new AhpClient();
      await client.connect(transport);
      expect(raw.upgrades[0]!.url).toBe("/ahp?existing=1&token=token+with+space%26symbols");
      expect(raw.upgrades[0]!.headers.authorization).toBeUndefined();
      // No subprotocol is requested.
      expect(raw.upgrades[0]!.headers["sec-websocket-protocol"]).toBeUndefined();
      await client.close();
    } finally {
      await raw.close();
    }
  });

  it("header mode sends x-api-key / Authorization: Bearer instead", async () => {
    const raw = await rawWsServer();
    try {
      for (const [auth, header, value] of [
        [{ type: "api_key", key: "test-key" }, "x-api-key", "test-key"],
        [{ type: "bearer", token: "t" }, "authorization", "Bearer t"],
      ] as const) {
        const client = new AhpClient();
        await client.connect(new WebSocketClientTransport(raw.url, { auth, authMode: "header", headers: { "x-trace": "1" } }));
        const upgrade = raw.upgrades.at(-1)!;
        expect(upgrade.url).toBe("/ahp");
        expect(upgrade.headers[header]).toBe(value);
        expect(upgrade.headers["x-trace"]).toBe("1");
        await client.close();
      }
    } finally {
      await raw.close();
    }
  });
});
