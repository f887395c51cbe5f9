/**
 * Flag parsing on top of node:util parseArgs: one-line usage errors with a "did you mean" for a
 * near-miss option, typed number and HOST:PORT helpers, and --help.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./io.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse<O extends Options>(argv: string[], options: O, allowPositionals = false) {
  const all = { ...options, help: { type: "boolean", short: "h" } } as const;
  try {
    return parseArgs({ args: argv, options: all, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error as Error & { code?: string }, Object.keys(all)));
  }
}

/** parseArgs' messages are long and end in advice about `--`; this keeps the first fact. */
function describeParseError(error: Error & { code?: string }, names: readonly string[]): string {
  const quoted = /'(-[^' ]*)/.exec(error.message)?.[1];
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const given = quoted ?? "";
      const option = given.split("=")[0]!;
      const near = option.startsWith("--") ? closest(option.slice(2), names) : undefined;
      return `unknown option ${option}${near === undefined ? "" : ` (did you mean --${near}?)`}`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE": {
      const option = quoted ?? "";
      if (/argument missing/.test(error.message)) return `${option} needs a value`;
      return `${option} takes no value`;
    }
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL": {
      const value = /'([^']*)'/.exec(error.message)?.[1];
      return `unexpected argument ${JSON.stringify(value ?? "")}`;
    }
    default:
      return error.message;
  }
}

/** Edit distance (insertions, deletions, substitutions, adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate nearest to `word` when it is close enough to be a typo of it, else undefined. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const limit = word.length <= 3 ? 1 : 2;
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = name.startsWith(word) && word.length >= 3 ? 0.5 : editDistance(word, name);
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

export function toInt(name: string, value: string | undefined, { min = 0 } = {}): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got ${value}`);
  return n;
}

/**
 * `HOST:PORT`, `:PORT` or `PORT` (host defaults to loopback); `[::1]:PORT` for IPv6. A value
 * without a port (`127.0.0.1`, `localhost`) is refused rather than read as a port.
 */
export function hostPort(name: string, value: string): { host: string; port: number } {
  let host: string;
  let portText: string;
  if (/^\d+$/.test(value)) {
    host = "";
    portText = value;
  } else if (value.startsWith("[")) {
    const m = /^\[([^\]]+)\]:(\d+)$/.exec(value);
    if (m === null) throw new UsageError(`--${name} expects [IPV6]:PORT, got ${JSON.stringify(value)}`);
    host = m[1]!;
    portText = m[2]!;
  } else {
    const colon = value.lastIndexOf(":");
    if (colon < 0)
      throw new UsageError(`--${name} expects HOST:PORT, got ${JSON.stringify(value)} (no port; use ${value}:0 for any free port)`);
    host = value.slice(0, colon);
    portText = value.slice(colon + 1);
    if (host.includes(":"))
      throw new UsageError(`--${name}: write an IPv6 address in brackets, e.g. [::1]:8080, got ${JSON.stringify(value)}`);
    if (!/^\d+$/.test(portText))
      throw new UsageError(`--${name} expects HOST:PORT, got ${JSON.stringify(value)} (the port is not a number)`);
  }
  const port = Number(portText);
  if (port > 65535) throw new UsageError(`--${name}: port out of range (0-65535): ${portText}`);
  return { host: host === "" ? "127.0.0.1" : host, port };
}

/** Checks every HOST:PORT value up front, so that a bad one is refused before anything starts. */
export function checkHostPorts(specs: Record<string, string | readonly string[] | undefined>): void {
  for (const [name, value] of Object.entries(specs)) {
    for (const spec of value === undefined ? [] : typeof value === "string" ? [value] : value) hostPort(name, spec);
  }
}
