/**
 * Word-level helpers shared by the parser and the segment view: program names, wrapper
 * unwrapping, option splitting.
 */
import { normalizeShellPath } from "./paths.js";
import { ASSIGNMENT, RESERVED, SKIP_SEGMENT, WRAPPERS, valueOptionsOf, type WrapperSpec } from "./tables.js";

/** Basename of a command word, lower case, a Windows `.exe` suffix removed (`/usr/bin/RM` → `rm`). */
export function programName(word: string): string {
  const slash = Math.max(word.lastIndexOf("/"), word.lastIndexOf("\\"));
  const base = (slash >= 0 ? word.slice(slash + 1) : word).toLowerCase();
  return base.endsWith(".exe") ? base.slice(0, -4) : base;
}

/** Index of the first word after reserved words, assignments and `function NAME`; -1 for `for`/`case`/`select` headers. */
export function commandStart(words: readonly string[]): number {
  let k = 0;
  while (k < words.length) {
    const w = words[k]!;
    // `[[ … ]]` is a test expression, not a command.
    if (SKIP_SEGMENT.has(w) || w === "[[") return -1;
    if (w === "function") {
      k += 2;
      continue;
    }
    if (RESERVED.has(w) || ASSIGNMENT.test(w)) {
      k++;
      continue;
    }
    break;
  }
  return k;
}

/** Skips the options of a wrapper; returns the index of the wrapped command word, or -1 when there is none. */
function skipWrapperOptions(words: readonly string[], from: number, wrapper: WrapperSpec, chdir: { value?: string }): number {
  let k = from;
  while (k < words.length) {
    const word = words[k]!;
    if (word === "--") {
      k++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      const name = eq < 0 ? word.slice(2) : word.slice(2, eq);
      const takes = eq < 0 && wrapper.values.has(name);
      if (wrapper.chdir?.has(name)) chdir.value = eq < 0 ? words[k + 1] : word.slice(eq + 1);
      k += takes ? 2 : 1;
      continue;
    }
    let consumed = 1;
    for (let j = 1; j < word.length; j++) {
      const letter = word[j]!;
      if (wrapper.values.has(letter)) {
        const attached = word.slice(j + 1);
        if (wrapper.chdir?.has(letter)) chdir.value = attached.length > 0 ? attached : words[k + 1];
        if (j === word.length - 1) consumed = 2;
        break;
      }
    }
    k += consumed;
  }
  if (wrapper.assignments) while (k < words.length && ASSIGNMENT.test(words[k]!)) k++;
  k += wrapper.positionals ?? 0;
  return k < words.length ? k : -1;
}

/** The result of {@link unwrap}: the wrapped command's words, where they start, and what was removed. */
export interface Unwrapped {
  /** The command words from the wrapped program on. */
  argv: string[];
  /** Index in the input of `argv[0]`. */
  offset: number;
  /** Wrapper programs that were removed (`sudo`, `env`, `xargs`, `python -m` …). */
  wrappers: string[];
  /** A working directory a wrapper set (`env -C DIR`, `sudo -D DIR`). */
  chdir?: string;
}

const PYTHON_NAME = /^(python[0-9.]*|py|pythonw|pypy[0-9.]*)$/;

/**
 * Removes wrappers in front of a command, repeatedly (`sudo -u x env A=1 nohup cmd` → `cmd`).
 * With `modules` (default), `python -m MODULE …` runs MODULE as the program.
 */
export function unwrap(words: readonly string[], options: { modules?: boolean } = {}): Unwrapped {
  let offset = 0;
  const wrappers: string[] = [];
  const chdir: { value?: string } = {};
  for (let guard = 0; guard < 16 && offset < words.length; guard++) {
    const name = programName(words[offset]!);
    const wrapper = WRAPPERS.get(name);
    if (wrapper !== undefined) {
      const at = skipWrapperOptions(words, offset + 1, wrapper, chdir);
      if (at < 0) break;
      wrappers.push(name);
      offset = at;
      continue;
    }
    if (options.modules !== false && PYTHON_NAME.test(name)) {
      let m = offset + 1;
      while (m < words.length && words[m]!.startsWith("-") && !words[m]!.startsWith("-m")) m++;
      const flag = words[m];
      if (flag === "-m" && m + 1 < words.length) {
        wrappers.push(name);
        offset = m + 1;
        continue;
      }
      if (flag !== undefined && flag.startsWith("-m") && flag.length > 2 && /^-m[A-Za-z_]/.test(flag)) {
        // `python -mpip install x`: the module is attached.
        wrappers.push(name);
        return {
          argv: [flag.slice(2), ...words.slice(m + 1)],
          offset: m,
          wrappers,
          ...(chdir.value === undefined ? {} : { chdir: chdir.value }),
        };
      }
    }
    break;
  }
  const result: Unwrapped = { argv: offset === 0 ? [...words] : words.slice(offset), offset, wrappers };
  if (chdir.value !== undefined) result.chdir = chdir.value;
  return result;
}

/** Drops reserved words, leading assignments and wrappers; returns the remaining words (no `python -m` unwrapping). */
export function stripWrappers(words: readonly string[]): string[] {
  const start = commandStart(words);
  if (start < 0) return [];
  return unwrap(words.slice(start), { modules: false }).argv;
}

/**
 * An argument vector split by {@link splitOptions}: positional arguments (paths normalized),
 * every flag spelling seen, and the candidate values of each option.
 */
export interface SplitOptions {
  args: string[];
  flags: Set<string>;
  options: Map<string, string[]>;
}

/**
 * Positional arguments, flags and option values of an argument vector (`argv[0]` is the
 * program). `-rf` gives the flags `r`, `f` and `rf`; `--registry=x`, `--registry x`, `-i x`, `-ix`
 * all record the value `x`. Options of `program` known to take a value consume it; for other
 * options the next word is both a candidate value and a positional argument.
 */
export function splitOptions(argv: readonly string[], program = ""): SplitOptions {
  const takesValue = valueOptionsOf(program);
  const args: string[] = [];
  const flags = new Set<string>();
  const options = new Map<string, string[]>();
  const addValue = (name: string, value: string | undefined) => {
    let list = options.get(name);
    if (list === undefined) {
      list = [];
      options.set(name, list);
    }
    if (value !== undefined) list.push(value);
  };
  let endOfOptions = false;
  for (let k = 1; k < argv.length; k++) {
    const word = argv[k]!;
    const next = argv[k + 1];
    const nextValue = next !== undefined && !next.startsWith("-") ? next : undefined;
    if (endOfOptions || word === "-" || !word.startsWith("-") || word.length === 1) {
      args.push(normalizeShellPath(word));
      continue;
    }
    if (word === "--") {
      endOfOptions = true;
      continue;
    }
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      const name = eq < 0 ? word.slice(2) : word.slice(2, eq);
      flags.add(name);
      if (eq >= 0) addValue(name, word.slice(eq + 1));
      else if (takesValue?.has(name) && next !== undefined) {
        addValue(name, next);
        k++;
      } else addValue(name, nextValue);
      continue;
    }
    // A short cluster: `-rf` gives r, f and rf; `-ix` may be -i with value x; the last letter may take the next word.
    const body = word.slice(1);
    flags.add(body);
    for (const letter of body) flags.add(letter);
    if (takesValue !== undefined) {
      // Known options: the first letter that takes a value ends the cluster.
      let consumedNext = false;
      for (let j = 0; j < body.length; j++) {
        const letter = body[j]!;
        if (!takesValue.has(letter)) {
          addValue(letter, undefined);
          continue;
        }
        if (j < body.length - 1) addValue(letter, body.slice(j + 1));
        else if (next !== undefined) {
          addValue(letter, next);
          consumedNext = true;
        } else addValue(letter, undefined);
        break;
      }
      if (body.length > 1) addValue(body, consumedNext ? next : nextValue);
      if (consumedNext) k++;
      continue;
    }
    const first = body[0]!;
    addValue(first, body.length > 1 ? body.slice(1) : undefined);
    const last = body[body.length - 1]!;
    addValue(last, nextValue);
    if (body.length > 1) addValue(body, nextValue);
  }
  return { args, flags, options };
}
