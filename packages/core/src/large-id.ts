/**
 * Integer request ids beyond what a JavaScript number holds exactly (|n| > 2^53 - 1). `JSON.parse`
 * rounds such an id (2^70 becomes 1.1805916207174113e+21), so a server echoing the parsed value
 * would answer with an id the agent never sent. The decoder keeps the id's original JSON text
 * instead, as a {@link LargeIntegerId}, and the encoder writes that text back unchanged.
 */

/** An integer id past the safe range, kept as the JSON text it arrived as. */
export class LargeIntegerId {
  /** The id's JSON number text exactly as received (e.g. `1180591620717411303424`). */
  readonly text: string;

  constructor(text: string) {
    this.text = text;
    Object.freeze(this);
  }

  /** Code that serializes the id with `JSON.stringify` (logs, audit records) gets its text as a string. */
  toJSON(): string {
    return this.text;
  }

  toString(): string {
    return this.text;
  }
}

/** Whether `id` is an integer that `JSON.parse` may have rounded (outside the safe range). */
export function isUnsafeIntegerId(id: unknown): id is number {
  return typeof id === "number" && Number.isInteger(id) && !Number.isSafeInteger(id);
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Returns the JSON text of the last top-level `"id"` member of the JSON object `text` (the one
 * `JSON.parse` keeps), or undefined. `text` must be valid JSON: it has already been parsed.
 */
export function topLevelIdText(text: string): string | undefined {
  let i = 0;
  let depth = 0;
  let found: string | undefined;
  const end = text.length;
  const skipString = () => {
    // at the opening quote
    for (i++; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        i++;
        return;
      }
    }
  };
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      skipString();
      if (depth !== 1) continue;
      // A top-level key is followed by a colon.
      let j = i;
      while (j < end && isSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) !== 0x3a) continue;
      const key = text.slice(start, i);
      i = j + 1;
      if (key !== '"id"' && JSON.parse(key) !== "id") continue;
      while (i < end && isSpace(text.charCodeAt(i))) i++;
      const valueStart = i;
      while (i < end) {
        const v = text.charCodeAt(i);
        if (v === 0x2c || v === 0x7d || isSpace(v)) break;
        if (v === 0x22 || v === 0x7b || v === 0x5b) break;
        i++;
      }
      found = i > valueStart ? text.slice(valueStart, i) : undefined;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
    i++;
  }
  return found;
}

/**
 * Replaces a rounded integer `id` of the parsed message `value` with a {@link LargeIntegerId}
 * holding its text from `text`. Leaves `value` alone when the text cannot be found.
 */
export function keepLargeId(value: { id?: unknown }, text: string): void {
  const raw = topLevelIdText(text);
  if (raw !== undefined && /^-?\d/.test(raw)) value.id = new LargeIntegerId(raw);
}
