import { NdjsonDecoder, sniffJsonRpcId } from "@ahp/core";
import { describe, expect, it } from "vitest";

describe("sniffJsonRpcId", () => {
  it("reads a string or integer id after scalar members", () => {
    expect(sniffJsonRpcId('{"jsonrpc":"2.0","id":"a-1","method":"ahp/event","params":{')).toBe("a-1");
    expect(sniffJsonRpcId('  { "id" : 42 , "result": [')).toBe(42);
    expect(sniffJsonRpcId('{"jsonrpc":"2.0","id":"q\\"uo\\u0074e","result":{}}')).toBe('q"uote');
    expect(sniffJsonRpcId('{"\\u0069d":"escaped-key","x":1}')).toBe("escaped-key");
    expect(sniffJsonRpcId('{"n":-1.5e3,"ok":true,"nil":null,"id":"late"}')).toBe("late");
  });

  it("never guesses", () => {
    expect(sniffJsonRpcId('{"jsonrpc":"2.0","id":"cut-o')).toBeUndefined(); // cut inside the id
    expect(sniffJsonRpcId('{"id":12')).toBeUndefined(); // number may continue
    expect(sniffJsonRpcId('{"params":{"id":"inner"},"id":"outer"}')).toBeUndefined(); // non-scalar first
    expect(sniffJsonRpcId('{"id":null,"x":1}')).toBeUndefined();
    expect(sniffJsonRpcId('{"id":1.5,"x":1}')).toBeUndefined();
    expect(sniffJsonRpcId('[{"id":"x"}]')).toBeUndefined();
    expect(sniffJsonRpcId("not json")).toBeUndefined();
    expect(sniffJsonRpcId('{"id":"x" "y"}')).toBeUndefined();
  });
});

describe("NdjsonDecoder: ids of refused lines", () => {
  it("carries the id of a line refused for its size, also across chunks", () => {
    const line = `${JSON.stringify({ jsonrpc: "2.0", id: "big-1", method: "m", params: { s: "x".repeat(500) } })}\n`;
    const whole = new NdjsonDecoder({ maxMessageBytes: 100 }).push(line);
    expect(whole).toMatchObject([{ ok: false, id: "big-1", error: { code: -32002 } }]);
    const decoder = new NdjsonDecoder({ maxMessageBytes: 100 });
    const frames = [...decoder.push(line.slice(0, 20)), ...decoder.push(line.slice(20, 150)), ...decoder.push(line.slice(150))];
    expect(frames).toMatchObject([{ ok: false, id: "big-1", error: { code: -32002 } }]);
  });

  it("carries the id of a line nested too deep, but not of a parse error", () => {
    const decoder = new NdjsonDecoder({ maxJsonDepth: 3 });
    expect(decoder.push('{"jsonrpc":"2.0","id":7,"params":[[[[1]]]]}\n')).toMatchObject([{ ok: false, id: 7 }]);
    const [frame] = decoder.push('{"jsonrpc":"2.0","id":"p","params":{\n');
    expect(frame).toMatchObject({ ok: false, error: { code: -32700 } });
    expect(frame).not.toHaveProperty("id");
  });
});
