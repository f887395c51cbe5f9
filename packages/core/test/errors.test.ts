import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { AhpError, AhpErrorCode, AhpLocalError, toError } from "../src/index.js";

type ErrorsModule = typeof import("../src/errors.js");

/**
 * A second, independent copy of the errors module: the query string makes the module loader
 * instantiate it again, as happens when an application ends up with two copies of @ahp/core
 * (ESM and CJS builds, or two versions).
 */
async function secondCopy(): Promise<ErrorsModule> {
  const url = new URL("../src/errors.ts", import.meta.url);
  url.searchParams.set("copy", "2");
  return (await import(url.href)) as ErrorsModule;
}

describe("AhpErrorCode", () => {
  it("has the JSON-RPC and AHP codes", () => {
    expect(AhpErrorCode).toEqual({
      ParseError: -32700,
      InvalidRequest: -32600,
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
      UnsupportedVersion: -32000,
      HandshakeRequired: -32001,
      MessageTooLarge: -32002,
      ServerClosing: -32003,
    });
  });
});

describe("AhpError", () => {
  it("carries code, message, data and cause", () => {
    const cause = new Error("root");
    const error = new AhpError(AhpErrorCode.InvalidParams, "Invalid params: missing field `x`", { data: { issues: [] }, cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("AhpError");
    expect(error.code).toBe(-32602);
    expect(error.data).toEqual({ issues: [] });
    expect(error.cause).toBe(cause);
    expect(new AhpError(-32601, "Method not found").data).toBeUndefined();
  });

  it("serializes to the wire form without a stack or cause", () => {
    const error = new AhpError(AhpErrorCode.InternalError, "Handler error: boom", { cause: new Error("secret detail") });
    expect(error.stack).toBeDefined();
    expect(error.toJSON()).toEqual({ code: -32603, message: "Handler error: boom" });
    const text = JSON.stringify({ error });
    expect(text).toBe('{"error":{"code":-32603,"message":"Handler error: boom"}}');
    expect(text).not.toContain("secret detail");
    expect(text).not.toContain("stack");
    expect(new AhpError(-32602, "x", { data: null }).toJSON()).toEqual({ code: -32602, message: "x", data: null });
  });

  it("round-trips through fromJSON", () => {
    const wire = { code: -32000, message: "Unsupported protocol version: 3.0", data: { supported: ["2"] } };
    const error = AhpError.fromJSON(wire);
    expect(AhpError.isInstance(error)).toBe(true);
    expect(error.toJSON()).toEqual(wire);
    expect(AhpError.fromJSON({ code: -32601, message: "Method not found" }).toJSON()).toEqual({
      code: -32601,
      message: "Method not found",
    });
  });

  it("isInstance recognizes an AhpError made by a second copy of the package, where instanceof fails", async () => {
    const other = await secondCopy();
    expect(other.AhpError).not.toBe(AhpError);
    const foreign = new other.AhpError(-32602, "Invalid params: x");
    expect(foreign instanceof AhpError).toBe(false);
    expect(AhpError.isInstance(foreign)).toBe(true);
    expect(other.AhpError.isInstance(new AhpError(-32601, "Method not found"))).toBe(true);
    expect(AhpLocalError.isInstance(foreign)).toBe(false);
  });

  it("isInstance recognizes an error from another realm carrying the brand", () => {
    const branded = runInNewContext(
      'const e = new Error("from a vm context"); Object.defineProperty(e, Symbol.for("@ahp/core.AhpError"), { value: true }); e.code = -32603; e',
    ) as unknown;
    expect(branded instanceof Error).toBe(false); // a different realm's Error
    expect(AhpError.isInstance(branded)).toBe(true);
    const plain = runInNewContext('new Error("no brand")') as unknown;
    expect(AhpError.isInstance(plain)).toBe(false);
  });

  it("isInstance rejects everything else", () => {
    for (const value of [
      undefined,
      null,
      0,
      "AhpError",
      new Error("plain"),
      { code: -32602, message: "look-alike" },
      { [Symbol.for("@ahp/core.AhpError")]: "yes" },
      new AhpLocalError("TIMEOUT", "t"),
    ]) {
      expect(AhpError.isInstance(value), String(value)).toBe(false);
    }
  });
});

describe("AhpLocalError", () => {
  it("carries a string code, details and cause", () => {
    const cause = new Error("ECONNRESET");
    const error = new AhpLocalError("TRANSPORT_ERROR", "connection reset", { cause, details: { status: 502 } });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("AhpLocalError");
    expect(error.code).toBe("TRANSPORT_ERROR");
    expect(error.details).toEqual({ status: 502 });
    expect(error.cause).toBe(cause);
    expect(new AhpLocalError("TIMEOUT", "t").details).toBeUndefined();
  });

  it("isInstance works across copies and does not confuse the two families", async () => {
    const other = await secondCopy();
    const foreign = new other.AhpLocalError("CONNECTION_CLOSED", "Connection closed");
    expect(foreign instanceof AhpLocalError).toBe(false);
    expect(AhpLocalError.isInstance(foreign)).toBe(true);
    expect(AhpLocalError.isInstance(new AhpError(-32603, "x"))).toBe(false);
    expect(AhpLocalError.isInstance(new Error("x"))).toBe(false);
    expect(AhpLocalError.isInstance(null)).toBe(false);
  });
});

describe("toError", () => {
  it("keeps Errors and wraps anything else without losing it", () => {
    const error = new TypeError("t");
    expect(toError(error)).toBe(error);
    expect(toError("text").message).toBe("text");
    expect(toError({ a: 1 }).message).toBe('{"a":1}');
    expect(toError(undefined).message).toBe("undefined");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(toError(cyclic).message).toBe("[object Object]");
    expect(toError(10n).message).toBe("10");
  });
});
