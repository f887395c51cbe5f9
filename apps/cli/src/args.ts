/** Flag parsing on top of node:util parseArgs, with typed number/host:port helpers and --help. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./io.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse<O extends Options>(argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function toInt(name: string, value: string | undefined, { min = 0 } = {}): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got ${value}`);
  return n;
}

/** `HOST:PORT`, `:PORT` or `PORT` (host defaults to loopback); `[::1]:PORT` for IPv6. */
export function hostPort(name: string, value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:?(\d+)$/.exec(value);
  if (m === null) throw new UsageError(`--${name} expects HOST:PORT, got ${JSON.stringify(value)}`);
  const host = m[1] ?? (m[2] === undefined || m[2] === "" ? "127.0.0.1" : m[2]);
  const port = Number(m[3]);
  if (port > 65535) throw new UsageError(`--${name}: port out of range: ${port}`);
  return { host, port };
}
