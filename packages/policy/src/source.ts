/**
 * Parsing policy text (YAML or JSON) while keeping source positions, so that a problem found
 * later (schema violation, bad regex, invalid decision) can be reported as `file:line:column`.
 *
 * YAML goes through the `yaml` package (`LineCounter` and node ranges). JSON is parsed by the
 * small strict parser below, which records the offset of every key and value.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from "yaml";
import { PolicyError } from "./errors.js";

export type DocPath = readonly (string | number)[];

export interface Position {
  line: number;
  column: number;
}

/** Maps document paths back to positions in the source text. */
export interface SourceLocator {
  /**
   * Position of the value at `path`, or of its key when `key` is set. For a path that does not
   * exist, the position of the deepest existing ancestor.
   */
  locate(path: DocPath, options?: { key?: boolean }): Position | undefined;
}

export interface ParsedSource {
  value: unknown;
  locator: SourceLocator;
}

/** Line/column lookup from offsets (1-based). */
class Lines {
  readonly #starts: number[] = [0];
  constructor(text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.#starts.push(i + 1);
  }
  at(offset: number): Position {
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.#starts[lo]! + 1 };
  }
}

// ---------------------------------------------------------------- YAML

/** Most alias expansions allowed while converting a YAML document (protects against alias bombs). */
const MAX_YAML_ALIASES = 100;

export function parseYamlSource(text: string, file: string | undefined): ParsedSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  const problems = [...doc.errors, ...doc.warnings.filter((w) => w.code === "DUPLICATE_KEY")];
  if (problems.length > 0) {
    throw new PolicyError(
      problems.map((error) => {
        const pos = lineCounter.linePos(error.pos[0]);
        return { message: `YAML: ${firstLine(error.message)}`, path: [], line: pos.line, column: pos.col };
      }),
      { file },
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    throw new PolicyError([{ message: `YAML: ${firstLine((error as Error).message)}`, path: [] }], { file, cause: error });
  }
  const locator: SourceLocator = {
    locate(path, options = {}) {
      let node: unknown = doc.contents;
      let offset: number | undefined = rangeStart(node);
      for (let i = 0; i < path.length; i++) {
        const key = path[i]!;
        const last = i === path.length - 1;
        if (isMap(node)) {
          const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(key));
          if (pair === undefined) break;
          const keyOffset = rangeStart(pair.key);
          const valueOffset = rangeStart(pair.value);
          if (last && options.key) {
            offset = keyOffset ?? offset;
            break;
          }
          offset = valueOffset ?? keyOffset ?? offset;
          node = pair.value;
        } else if (isSeq(node) && typeof key === "number") {
          const item = node.items[key];
          if (item === undefined) break;
          offset = rangeStart(item) ?? offset;
          node = item;
        } else break;
      }
      if (offset === undefined) return undefined;
      const pos = lineCounter.linePos(offset);
      return { line: pos.line, column: pos.col };
    },
  };
  return { value, locator };
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as YamlNode | null | undefined)?.range;
  return Array.isArray(range) ? range[0] : undefined;
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.trim();
}

// ---------------------------------------------------------------- JSON

interface Spot {
  key?: number;
  value: number;
}

/** Deepest nesting of arrays/objects accepted in a JSON policy. */
const MAX_JSON_NESTING = 256;

const pathKey = (path: DocPath) => path.map((p) => String(p)).join("\u0000");

/** Strict JSON (RFC 8259) with offsets; duplicate keys are an error. */
export function parseJsonSource(text: string, file: string | undefined): ParsedSource {
  const lines = new Lines(text);
  const spots = new Map<string, Spot>();
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;

  const fail = (message: string, at = i): never => {
    const pos = lines.at(Math.min(at, text.length));
    throw new PolicyError([{ message: `JSON: ${message}`, path: [], line: pos.line, column: pos.column }], { file });
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else return;
    }
  };
  const describeChar = (at: number) => (at >= text.length ? "end of input" : `\`${text[at]}\``);

  const parseString = (): string => {
    const start = i;
    i++; // opening quote
    let out = "";
    let chunk = i;
    for (;;) {
      if (i >= text.length) fail("unterminated string", start);
      const c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(chunk, i);
        i++;
        return out;
      }
      if (c < 0x20) fail("control character in string");
      if (c === 92) {
        out += text.slice(chunk, i);
        const e = text[i + 1];
        switch (e) {
          case '"':
          case "\\":
          case "/":
            out += e;
            i += 2;
            break;
          case "b":
            out += "\b";
            i += 2;
            break;
          case "f":
            out += "\f";
            i += 2;
            break;
          case "n":
            out += "\n";
            i += 2;
            break;
          case "r":
            out += "\r";
            i += 2;
            break;
          case "t":
            out += "\t";
            i += 2;
            break;
          case "u": {
            const hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("invalid \\u escape");
            out += String.fromCharCode(parseInt(hex, 16));
            i += 6;
            break;
          }
          default:
            fail("invalid escape in string");
        }
        chunk = i;
        continue;
      }
      i++;
    }
  };

  const parseValue = (path: (string | number)[], keyOffset: number | undefined): unknown => {
    if (path.length > MAX_JSON_NESTING) fail(`nesting deeper than ${MAX_JSON_NESTING} levels`);
    ws();
    const start = i;
    spots.set(pathKey(path), keyOffset === undefined ? { value: start } : { key: keyOffset, value: start });
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: Record<string, unknown> = {};
      const seen = new Set<string>();
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a member name, found ${describeChar(i)}`);
        const keyAt = i;
        const key = parseString();
        if (seen.has(key)) fail(`duplicate key \`${key}\``, keyAt);
        seen.add(key);
        ws();
        if (text[i] !== ":") fail(`expected \`:\`, found ${describeChar(i)}`);
        i++;
        const value = parseValue([...path, key], keyAt);
        // defineProperty: a member named __proto__ stays a plain member, as with JSON.parse.
        Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        fail(`expected \`,\` or \`}\`, found ${describeChar(i)}`);
      }
    }
    if (c === "[") {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue([...path, arr.length], undefined));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail(`expected \`,\` or \`]\`, found ${describeChar(i)}`);
      }
    }
    if (c === '"') return parseString();
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = i;
    const num = m.exec(text);
    if (num !== null && num[0].length > 0 && num[0] !== "-") {
      i += num[0].length;
      return Number(num[0]);
    }
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    return fail(`unexpected ${describeChar(i)}`);
  };

  const value = parseValue([], undefined);
  ws();
  if (i < text.length) fail(`unexpected ${describeChar(i)} after the document`);

  const locator: SourceLocator = {
    locate(path, options = {}) {
      for (let n = path.length; n >= 0; n--) {
        const spot = spots.get(pathKey(path.slice(0, n)));
        if (spot === undefined) continue;
        const offset = n === path.length && options.key && spot.key !== undefined ? spot.key : spot.value;
        return lines.at(offset);
      }
      return undefined;
    },
  };
  return { value, locator };
}

/** Picks the parser: by file extension when known (`.json` is JSON, anything else YAML), else by the first character. */
export function parseSource(text: string, file: string | undefined, format?: "yaml" | "json"): ParsedSource {
  const chosen =
    format ??
    (file !== undefined && /\.json$/i.test(file)
      ? "json"
      : file !== undefined && /\.ya?ml$/i.test(file)
        ? "yaml"
        : /^\s*[{[]/.test(text.replace(/^\uFEFF/, ""))
          ? "json"
          : "yaml");
  return chosen === "json" ? parseJsonSource(text, file) : parseYamlSource(text, file);
}
