/**
 * Simple commands of a command line, with what a policy needs to know about each: the program
 * after unwrapping (`sudo`, `env`, `xargs`, `python -m` …), its flags, options and positional
 * arguments, the working directory it runs in (`cd / && rm -rf *` runs `rm` in `/`), the files
 * it writes, truncates, deletes or changes the mode of, where its output flows, and whether it
 * can be analysed at all.
 *
 * Scripts handed to another shell (`sh -c '…'`, `eval '…'`, `bash <<EOF`, `echo '…' | sh`,
 * `su -c`, `env -S`, `cmd /c`, `powershell -Command`) and `find … -exec … ;` are parsed
 * recursively, as are command and process substitutions. What cannot be known without running
 * something is reported as {@link OpaqueReason}s instead of guessed.
 */
import { callsDangerousPrimitive, codeWrites, type CodeLanguage } from "./inline-code.js";
import { lex, type Redirect, type RedirectToken, type Substitution, type WordToken } from "./lex.js";
import { changeDirectory, resolveShellPath, type WorkingDirectory } from "./paths.js";
import { CHANGES_ALL, COPIERS, SHELLS, interpreterOf, type InterpreterSpec } from "./tables.js";
import { commandStart, programName, splitOptions, unwrap, type SplitOptions } from "./words.js";

/**
 * Why a command cannot be analysed statically:
 * - `dynamic-command`: the command word is computed (`$(echo rm) -rf /`, `$CMD`, `${X}`, a glob or brace expansion);
 * - `dynamic-script`: a shell or interpreter runs text produced by another command (`… | base64 -d | sh`,
 *   `curl … | python3`, `bash <(…)`, `powershell -EncodedCommand …`);
 * - `inline-code`: program text given to an interpreter (`python3 -c`, `perl -e`, `node -e`, an awk
 *   program, a here-document) calls a delete, exec or network primitive.
 */
export type OpaqueReason = "dynamic-command" | "dynamic-script" | "inline-code";
/** Every {@link OpaqueReason}, for validating policy files and listing them in messages. */
export const OPAQUE_REASONS: readonly OpaqueReason[] = Object.freeze(["dynamic-command", "dynamic-script", "inline-code"]);

/**
 * One simple command of a line as {@link parseShell} finds it, nested ones included: the program
 * after unwrapping, its arguments split into flags, options and positionals, the working
 * directory it runs in, the files it changes or reads, where its output flows, and why it
 * cannot be analysed (when it cannot).
 */
export interface SimpleCommand {
  /** Program name: basename of the command word, lower case (`/usr/bin/RM` → `rm`); `eval` for a substitution; `""` for a bare redirection. */
  program: string;
  /** The command words after unwrapping (`argv[0]` is the command word as written); words `xargs` reads from a literal input are appended. */
  argv: string[];
  /** Positional arguments (not options), paths normalized. */
  args: string[];
  /** Flags: `-rf` gives `r`, `f` and `rf`; `--force` and `--force=x` give `force`. */
  flags: Set<string>;
  /** Candidate option values: `--registry=x`, `--registry x`, `-i x`, `-ix` all give the value `x`. */
  options: Map<string, string[]>;
  redirects: Redirect[];
  /** Every word of the command as written: wrappers, assignments, arguments, redirection targets. */
  words: string[];
  /**
   * Programs the output of this command flows into: later pipeline stages, commands holding a
   * substitution. Built on first read (an accessor: spreading a command does not copy it); to ask
   * about every stage of a long pipeline, use {@link pipesInto}, which builds nothing.
   */
  consumers: string[];
  /** Wrapper programs that were removed in front of the command (`sudo`, `env` …). */
  wrappers: string[];
  /** 0 for top-level commands; +1 per substitution or nested script. */
  depth: number;
  /** The working directory the command runs in, as far as the line tells (see {@link WorkingDirectory}). */
  cwd: WorkingDirectory;
  /** Positional arguments resolved against {@link cwd} (`cd / && rm -rf *` gives `/*`); resolved on first read (an accessor). */
  paths: string[];
  /** Files the command writes, truncates, deletes, moves or changes the mode or owner of (output redirections included), resolved. */
  writes: string[];
  /** Files the command reads as its input (`< file`), resolved. */
  reads: string[];
  /** Why the command cannot be analysed; empty when it can. */
  opaque: OpaqueReason[];
}

/** Options of {@link parseShell}: how deep to follow nested scripts, and the directory the line starts in. */
export interface ParseShellOptions {
  /** How deep substitutions and nested scripts are followed. Default 4. */
  maxDepth?: number;
  /** The working directory the line starts in (a tool call's `cwd`); relative paths stay relative without it. */
  cwd?: string;
}

interface RedirectEntry {
  redirect: Redirect;
  subs: readonly Substitution[];
}

interface Stage {
  words: WordToken[];
  redirects: RedirectEntry[];
}

interface Prepared {
  program: string;
  argv: string[];
  /** Tokens of `argv` (undefined for words added by the analysis). */
  tokens: (WordToken | undefined)[];
  wrappers: string[];
  chdir?: string;
  /** The texts of all the stage's words (the command's `words`, redirection targets aside). */
  texts: string[];
}

const OUTPUT_OPS = new Set([">", ">>", ">|", "&>", "&>>", "<>"]);
const PRINTERS = new Set(["echo", "printf"]);
const ALLOWED_PROGRAM_EXPANSION = /^(?:\$HOME|\$\{HOME\}|\$PWD|\$\{PWD\})\/[^$`]*$/;
const PATTERN_WORD = /[*?]|\[[^\]]+\]|\{[^}]*(?:,|\.\.)[^}]*\}/;
const CHMOD_MODE = /^(?:[0-7]{1,4}|[ugoa]*(?:[-+=][rwxXstugo]*)+(?:,[ugoa]*(?:[-+=][rwxXstugo]*)+)*)$/;

const synthetic = (text: string): WordToken => ({ kind: "word", text, subs: [], start: 0, end: 0, expands: false, pattern: false });

/** The command word is computed at run time. */
function dynamicProgram(token: WordToken | undefined): boolean {
  if (token === undefined) return false;
  if (token.subs.length > 0) return true;
  if (token.expands && !ALLOWED_PROGRAM_EXPANSION.test(token.text)) return true;
  return token.pattern && PATTERN_WORD.test(token.text);
}

const codeLanguage = (program: string): CodeLanguage =>
  program.endsWith("awk") ? "awk" : program === "perl" ? "perl" : program === "ruby" ? "ruby" : "other";

class Builder {
  readonly commands: SimpleCommand[] = [];
  /** The variables known where the current stage runs (nested scripts start from them). */
  #vars: Variables | undefined;
  constructor(readonly maxDepth: number) {}

  script(text: string, depth: number, outerFlow: Flow | undefined, cwdIn: WorkingDirectory, varsIn?: Variables): void {
    if (depth > this.maxDepth || text.length === 0) return;
    const toks = lex(text);
    let cwd = cwdIn;
    // Variables the line assigns literal values to (`D=/; rm -rf "$D"`), substituted into later words.
    let vars = varsIn;
    this.#vars = vars;
    const saved: WorkingDirectory[] = [];
    let pipeline: Stage[] = [];
    let stage: Stage = { words: [], redirects: [] };
    const endStage = () => {
      if (stage.words.length > 0 || stage.redirects.length > 0) pipeline.push(stage);
      stage = { words: [], redirects: [] };
    };
    const endPipeline = () => {
      endStage();
      if (pipeline.length === 0) return;
      const prepared = pipeline.map((s) => this.#prepare(s));
      // One array of the pipeline's programs, shared by the flows of all its stages (linear in the pipeline's length).
      const programs: string[] = [];
      if (prepared.length > 1) for (const p of prepared) if (p.program !== "") programs.push(p.program);
      let seen = 0;
      for (let k = 0; k < prepared.length; k++) {
        if (prepared.length > 1 && prepared[k]!.program !== "") seen++;
        const flow = seen < programs.length ? { programs, from: seen, outer: outerFlow } : outerFlow;
        const previous = k > 0 ? { stage: pipeline[k - 1]!, prepared: prepared[k - 1]! } : undefined;
        this.#stage(pipeline[k]!, prepared[k]!, depth, flow, cwd, previous);
      }
      // `cd` changes the directory of the commands after it, unless it ran in a pipeline (a subshell).
      if (prepared.length === 1) {
        const p = prepared[0]!;
        if (p.program === "" || DECLARERS.has(p.program)) {
          vars = assign(vars, pipeline[0]!.words, p.program === "" ? 0 : commandStart(p.texts) + 1);
          this.#vars = vars;
        }
        if (p.program === "cd" || p.program === "pushd")
          cwd = changeDirectory(
            cwd,
            p.argv.slice(1).find((w) => !w.startsWith("-") || w === "-"),
          );
        else if (p.program === "popd") cwd = null;
      }
      pipeline = [];
    };
    for (const tok of toks) {
      if (tok.kind === "word") stage.words.push(vars === undefined || !tok.expands ? tok : substitute(tok, vars));
      else if (tok.kind === "redir") stage.redirects.push(entry(vars === undefined ? tok : substituteTarget(tok, vars)));
      else if (tok.op === "|" || tok.op === "|&") endStage();
      else {
        endPipeline();
        if (tok.op === "(") saved.push(cwd);
        else if (tok.op === ")" && saved.length > 0) cwd = saved.pop();
      }
    }
    endPipeline();
    this.#vars = varsIn;
  }

  #prepare(stage: Stage): Prepared {
    const texts = stage.words.map((w) => w.text);
    const start = commandStart(texts);
    if (start < 0 || start >= texts.length) return { program: "", argv: [], tokens: [], wrappers: [], texts };
    const u = unwrap(start === 0 ? texts : texts.slice(start));
    const first = start + u.offset;
    const tokens: (WordToken | undefined)[] = stage.words.slice(first, first + u.argv.length);
    // `python -mpip`: the module word is not a token of its own.
    if (tokens.length > 0 && tokens[0]!.text !== u.argv[0]) tokens[0] = undefined;
    const token = tokens[0];
    const program = token !== undefined && token.subs.length > 0 ? "eval" : programName(u.argv[0]!);
    const prepared: Prepared = { program, argv: u.argv, tokens, wrappers: u.wrappers, texts };
    if (u.chdir !== undefined) prepared.chdir = u.chdir;
    return prepared;
  }

  #stage(
    stage: Stage,
    prepared: Prepared,
    depth: number,
    flow: Flow | undefined,
    cwdIn: WorkingDirectory,
    previous: { stage: Stage; prepared: Prepared } | undefined,
  ): void {
    const { program, wrappers } = prepared;
    let argv = prepared.argv;
    const cwd = prepared.chdir === undefined ? cwdIn : changeDirectory(cwdIn, prepared.chdir);
    const redirects = stage.redirects.length === 0 ? [] : stage.redirects.map((r) => r.redirect);
    const opaque: OpaqueReason[] = [];
    if (dynamicProgram(prepared.tokens[0])) opaque.push("dynamic-command");

    // `xargs CMD` appends what it reads; when that is literal text (or the roots of a find), it is known.
    if (wrappers.includes("xargs") && argv.length > 0) {
      const input = literalInput(stage, previous, true);
      if (input !== undefined) argv = [...argv, ...input.split(/\s+/).filter((w) => w.length > 0)];
    }
    const allWords = prepared.texts;
    const words = redirects.length === 0 ? allWords : [...allWords, ...redirects.map((r) => r.target)];
    const command = new Command(program, argv, redirects, words, flow, wrappers, depth, cwd, opaque);
    if (argv.length > 0 || redirects.length > 0) this.commands.push(command);

    // Substitutions run first; their output becomes part of this command.
    let subFlow = flow;
    if (program !== "" && (stage.words.some((w) => w.subs.length > 0) || stage.redirects.some((r) => r.subs.length > 0)))
      subFlow = { programs: [program], from: 0, outer: flow };
    for (const word of stage.words) for (const sub of word.subs) this.script(sub.text, depth + 1, subFlow, cwd, this.#vars);
    for (const r of stage.redirects) for (const sub of r.subs) this.script(sub.text, depth + 1, subFlow, cwd, this.#vars);
    if (argv.length === 0) return;

    if (SHELLS.has(program)) this.#shell(stage, prepared, argv, depth, flow, cwd, previous, opaque);
    else if (program === "eval" && argv[0] === "eval") this.script(argv.slice(1).join(" "), depth + 1, flow, cwd, this.#vars);
    else if (program === "source" || program === ".") {
      if (prepared.tokens[1]?.subs.length) pushOnce(opaque, "dynamic-script");
    } else if (program === "su") {
      const script = optionValue(argv, "c", "command");
      if (script !== undefined) this.script(script, depth + 1, flow, cwd, this.#vars);
    } else if (program === "cmd") {
      const k = argv.findIndex((a) => /^\/[cCkK]$/.test(a));
      if (k > 0) this.script(argv.slice(k + 1).join(" "), depth + 1, flow, cwd, this.#vars);
    } else if (program === "powershell" || program === "pwsh") {
      const k = argv.findIndex((a) => /^-(c|command)$/i.test(a));
      if (argv.some((a) => /^-(e|ec|enc|encodedcommand)$/i.test(a))) pushOnce(opaque, "dynamic-script");
      else if (k > 0) this.script(argv.slice(k + 1).join(" "), depth + 1, flow, cwd, this.#vars);
    } else if (program === "find") this.#findExec(argv, depth, flow, cwd);
    else {
      const interpreter = interpreterOf(program);
      if (interpreter !== undefined) this.#interpreter(interpreter, stage, prepared, argv, previous, opaque);
    }
    if (wrappers.includes("env") || program === "env") {
      const split = optionValue(
        stage.words.map((w) => w.text),
        "S",
        "split-string",
      );
      if (split !== undefined) this.script(split, depth + 1, flow, cwd, this.#vars);
    }
  }

  /** A shell: its `-c` text, here-document, here-string or piped literal input is a script. */
  #shell(
    stage: Stage,
    prepared: Prepared,
    argv: string[],
    depth: number,
    flow: Flow | undefined,
    cwd: WorkingDirectory,
    previous: { stage: Stage; prepared: Prepared } | undefined,
    opaque: OpaqueReason[],
  ): void {
    const inline = shellScriptArg(argv);
    if (inline !== undefined) {
      this.script(inline.text, depth + 1, flow, cwd, this.#vars);
      return;
    }
    const script = firstPositional(argv, 1);
    const fromStdin = script === undefined || argv[script] === "-" || argv.slice(1).some((w) => /^-[A-Za-z]*s[A-Za-z]*$/.test(w));
    if (script !== undefined && prepared.tokens[script]?.subs.length) {
      pushOnce(opaque, "dynamic-script"); // bash <(curl …)
      return;
    }
    if (!fromStdin) return;
    const input = literalInput(stage, previous, false);
    if (input === undefined) {
      if (previous !== undefined) pushOnce(opaque, "dynamic-script");
      return;
    }
    this.script(input, depth + 1, flow, cwd, this.#vars);
  }

  /** An interpreter: program text on its command line, or read from a literal input, is checked for dangerous primitives. */
  #interpreter(
    spec: InterpreterSpec,
    stage: Stage,
    prepared: Prepared,
    argv: string[],
    previous: { stage: Stage; prepared: Prepared } | undefined,
    opaque: OpaqueReason[],
  ): void {
    const language = codeLanguage(prepared.program);
    const { code, runs, positional } = interpreterCode(spec, argv);
    if (code.length > 0) {
      for (const k of code) {
        if (prepared.tokens[k]?.expands) pushOnce(opaque, "dynamic-script");
        else if (callsDangerousPrimitive(argv[k]!, language)) pushOnce(opaque, "inline-code");
      }
      return;
    }
    if (runs || spec.positionalCode) return;
    if (positional !== undefined && argv[positional] !== "-") {
      if (prepared.tokens[positional]?.subs.length) pushOnce(opaque, "dynamic-script");
      return;
    }
    const input = literalInput(stage, previous, false);
    if (input === undefined) {
      if (previous !== undefined) pushOnce(opaque, "dynamic-script");
      return;
    }
    if (callsDangerousPrimitive(input, language)) pushOnce(opaque, "inline-code");
  }

  #findExec(argv: string[], depth: number, flow: Flow | undefined, cwd: WorkingDirectory): void {
    for (let k = 1; k < argv.length; k++) {
      if (argv[k] === "-exec" || argv[k] === "-execdir" || argv[k] === "-ok" || argv[k] === "-okdir") {
        let end = k + 1;
        while (end < argv.length && argv[end] !== ";" && argv[end] !== "+") end++;
        const inner = argv.slice(k + 1, end);
        if (inner.length > 0 && depth + 1 <= this.maxDepth) {
          const innerStage: Stage = { words: inner.map(synthetic), redirects: [] };
          this.#stage(innerStage, this.#prepare(innerStage), depth + 1, flow, cwd, undefined);
        }
        k = end;
      }
    }
  }
}

/**
 * Where a command's output flows: the programs of its pipeline after it (a suffix of one array
 * shared by every stage), then the flow of the command that holds it in a substitution or
 * runs it as a script. Sharing keeps a pipeline of n stages at O(n) space and time.
 */
interface Flow {
  readonly programs: readonly string[];
  readonly from: number;
  readonly outer: Flow | undefined;
}

function flowPrograms(flow: Flow | undefined): string[] {
  const out: string[] = [];
  for (let f = flow; f !== undefined; f = f.outer) for (let k = f.from; k < f.programs.length; k++) out.push(f.programs[k]!);
  return out;
}

/**
 * A simple command as the parser builds it: `args`, `flags`, `options`, `paths`, `writes`,
 * `reads` and `consumers` are computed on first read, so that a command nobody asks about costs
 * no option splitting or path resolution and a long pipeline no per-stage copies of the programs
 * after it.
 */
class Command implements SimpleCommand {
  #flow: Flow | undefined;
  #consumers: string[] | undefined;
  #paths: string[] | undefined;
  #split: SplitOptions | undefined;
  #writes: string[] | undefined;
  #reads: string[] | undefined;
  constructor(
    public program: string,
    public argv: string[],
    public redirects: Redirect[],
    public words: string[],
    flow: Flow | undefined,
    public wrappers: string[],
    public depth: number,
    public cwd: WorkingDirectory,
    public opaque: OpaqueReason[],
  ) {
    this.#flow = flow;
  }

  /** Output redirections first, then the files the program changes through its arguments. */
  get writes(): string[] {
    if (this.#writes === undefined) {
      const writes: string[] = [];
      const cwd = this.cwd;
      for (const r of this.redirects) {
        if (OUTPUT_OPS.has(r.op)) writes.push(resolveShellPath(cwd, r.target));
        else if (r.op === ">&" && !/^(\d+|-)$/.test(r.target)) writes.push(resolveShellPath(cwd, r.target));
      }
      this.#writes = writes;
      changedFiles(this, writes);
    }
    return this.#writes;
  }
  set writes(value: string[]) {
    this.#writes = value;
  }

  get reads(): string[] {
    if (this.#reads === undefined) {
      const reads: string[] = [];
      for (const r of this.redirects) if (r.op === "<" || r.op === "<>") reads.push(resolveShellPath(this.cwd, r.target));
      this.#reads = reads;
    }
    return this.#reads;
  }
  set reads(value: string[]) {
    this.#reads = value;
  }

  /** Computes what is derived from the arguments before one of them is replaced, so that it describes the command as parsed. */
  #settle(): void {
    void this.writes;
  }

  get consumers(): string[] {
    this.#consumers ??= flowPrograms(this.#flow);
    return this.#consumers;
  }
  set consumers(value: string[]) {
    this.#consumers = value;
  }

  /** Arguments, flags and options, split on first read of any of them. */
  #options(): SplitOptions {
    this.#split ??= splitOptions(this.argv, this.program);
    return this.#split;
  }
  get args(): string[] {
    return this.#options().args;
  }
  set args(value: string[]) {
    this.#settle();
    this.#options().args = value;
  }
  get flags(): Set<string> {
    return this.#options().flags;
  }
  set flags(value: Set<string>) {
    this.#settle();
    this.#options().flags = value;
  }
  get options(): Map<string, string[]> {
    return this.#options().options;
  }
  set options(value: Map<string, string[]>) {
    this.#settle();
    this.#options().options = value;
  }

  get paths(): string[] {
    if (this.#paths === undefined) {
      const cwd = this.cwd;
      // Arguments are normalized already; without a directory to resolve against they are the paths.
      this.#paths = cwd === undefined || cwd === null ? this.args.slice() : this.args.map((a) => resolveShellPath(cwd, a));
    }
    return this.#paths;
  }
  set paths(value: string[]) {
    this.#settle();
    this.#paths = value;
  }

  static flowOf(command: Command): Flow | undefined {
    return command.#consumers === undefined ? command.#flow : { programs: command.#consumers, from: 0, outer: undefined };
  }
}

/** Per pipeline (its shared programs array) and test: whether a program at index k or after passes. */
const SUFFIX_MATCHES = new WeakMap<readonly string[], Map<(program: string) => boolean, Uint8Array>>();

/**
 * True when the output of `command` flows into a program that passes `test` (a later pipeline
 * stage, or a command holding it in a substitution): `command.consumers.some(test)`, without
 * building the list. For commands from {@link parseShell}, the answers for one pipeline and one
 * `test` function are computed once, so asking for every stage of a long pipeline stays linear.
 */
export function pipesInto(command: SimpleCommand, test: (program: string) => boolean): boolean {
  if (!(command instanceof Command)) return command.consumers.some(test);
  for (let f = Command.flowOf(command); f !== undefined; f = f.outer) {
    const { programs, from } = f;
    if (programs.length - from <= 8) {
      for (let k = from; k < programs.length; k++) if (test(programs[k]!)) return true;
      continue;
    }
    let byTest = SUFFIX_MATCHES.get(programs);
    if (byTest === undefined) {
      byTest = new Map();
      SUFFIX_MATCHES.set(programs, byTest);
    }
    let suffix = byTest.get(test);
    if (suffix === undefined) {
      suffix = new Uint8Array(programs.length + 1);
      for (let k = programs.length - 1; k >= 0; k--) suffix[k] = suffix[k + 1]! | (test(programs[k]!) ? 1 : 0);
      byTest.set(test, suffix);
    }
    if (suffix[from] === 1) return true;
  }
  return false;
}

const entry = (tok: RedirectToken): RedirectEntry => ({ redirect: tok.redirect, subs: tok.subs });

/** Literal values of shell variables assigned earlier in the line. */
type Variables = ReadonlyMap<string, string>;
/** Builtins whose `NAME=value` arguments assign variables of the current shell. */
const DECLARERS = new Set(["export", "declare", "typeset", "local", "readonly"]);
const ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * The variables after a statement of assignments (`A=1 B=2`, `export A=1`): a literal value is
 * recorded, a computed one (`A=$(cmd)`, `A=$B` with `B` unknown) forgets the name.
 */
function assign(vars: Variables | undefined, words: readonly WordToken[], from: number): Variables | undefined {
  let out: Map<string, string> | undefined;
  for (let k = from; k < words.length; k++) {
    const w = words[k]!;
    const m = ASSIGN.exec(w.text);
    if (m === null) continue;
    out ??= new Map(vars);
    // `$HOME` stays as written: paths normalize it to `~`.
    if (w.subs.length > 0 || (w.expands && m[2]!.replace(/\$\{?HOME\}?/g, "").includes("$"))) out.delete(m[1]!);
    else out.set(m[1]!, m[2]!);
  }
  return out ?? vars;
}

/** `$NAME` and `${NAME}` replaced by known values; the rest as written. */
const expand = (text: string, vars: Variables): string =>
  text.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) => vars.get(braced ?? bare!) ?? whole);

/** A word with known variables substituted; it no longer counts as expanding when nothing computed is left. */
function substitute(tok: WordToken, vars: Variables): WordToken {
  const text = expand(tok.text, vars);
  if (text === tok.text) return tok;
  // Still expanding when a substitution or a reference to an unknown parameter is left (a `$` in a value is literal).
  const left = tok.text.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) =>
    vars.has(braced ?? bare!) ? "" : whole,
  );
  return { ...tok, text, expands: tok.subs.length > 0 || left.includes("$") };
}

function substituteTarget(tok: RedirectToken, vars: Variables): RedirectToken {
  const target = expand(tok.redirect.target, vars);
  return target === tok.redirect.target ? tok : { ...tok, redirect: { ...tok.redirect, target } };
}

function pushOnce(list: OpaqueReason[], reason: OpaqueReason): void {
  if (!list.includes(reason)) list.push(reason);
}

/**
 * Text a command reads on its standard input when the line shows it literally: its own
 * here-document or here-string, else an `echo`/`printf` or a `cat` of a here-document in front
 * of it in the pipeline (with `findRoots`, also the starting points of a `find`).
 */
function literalInput(stage: Stage, previous: { stage: Stage; prepared: Prepared } | undefined, findRoots: boolean): string | undefined {
  for (const { redirect } of stage.redirects) {
    if ((redirect.op === "<<" || redirect.op === "<<-") && redirect.body !== undefined) return redirect.body;
    if (redirect.op === "<<<") return redirect.target;
  }
  if (stage.redirects.some((r) => r.redirect.op === "<")) return undefined;
  if (previous === undefined) return undefined;
  const { prepared, stage: prevStage } = previous;
  if (PRINTERS.has(prepared.program)) {
    const words = prepared.argv.slice(1);
    // printf with a format directive does not print its words as they are.
    if (prepared.program === "printf" && words.some((w) => w.includes("%"))) return undefined;
    const body = prepared.program === "echo" ? words.filter((w) => !/^-[neE]+$/.test(w)) : words;
    return body.join(" ").replace(/\\n/g, "\n");
  }
  if (prepared.program === "cat" && prepared.argv.length === 1) {
    for (const { redirect } of prevStage.redirects) {
      if ((redirect.op === "<<" || redirect.op === "<<-") && redirect.body !== undefined) return redirect.body;
      if (redirect.op === "<<<") return redirect.target;
    }
  }
  if (findRoots && prepared.program === "find") {
    const roots: string[] = [];
    for (const w of prepared.argv.slice(1)) {
      if (w.startsWith("-") || w === "(" || w === "!") break;
      roots.push(w);
    }
    // What find prints is below its starting points.
    return (roots.length > 0 ? roots : ["."]).map((r) => `${r}/*`).join(" ");
  }
  return undefined;
}

/** Index of the first positional argument at or after `from` (options and their clusters skipped). */
function firstPositional(argv: readonly string[], from: number): number | undefined {
  for (let k = from; k < argv.length; k++) {
    const w = argv[k]!;
    if (w === "--") return k + 1 < argv.length ? k + 1 : undefined;
    if (w === "-o" || w === "+o" || w === "-O" || w === "+O") {
      k++;
      continue;
    }
    if ((w.startsWith("-") || w.startsWith("+")) && w.length > 1) continue;
    return k;
  }
  return undefined;
}

/** `-c script` of a shell (also clustered, as in `-ec` or `-lc`). */
function shellScriptArg(argv: readonly string[]): { text: string } | undefined {
  for (let k = 1; k < argv.length; k++) {
    const w = argv[k]!;
    if (w === "--") return undefined;
    if (w.startsWith("--")) continue;
    if ((w.startsWith("-") || w.startsWith("+")) && w.length > 1) {
      if (w.startsWith("-") && w.slice(1).includes("c")) {
        const text = argv[k + 1];
        return text === undefined ? undefined : { text };
      }
      if (w === "-o" || w === "+o" || w === "-O" || w === "+O") k++;
      continue;
    }
    return undefined;
  }
  return undefined;
}

/** Where an interpreter's program comes from: indexes of inline code words, a module/file option, or the first positional. */
function interpreterCode(
  spec: InterpreterSpec,
  argv: readonly string[],
): { code: number[]; runs: boolean; positional: number | undefined } {
  const code: number[] = [];
  let runs = false;
  for (let k = 1; k < argv.length; k++) {
    const w = argv[k]!;
    if (w === "--" || w === "-" || !w.startsWith("-") || w.length === 1) {
      const positional = w === "--" ? (k + 1 < argv.length ? k + 1 : undefined) : k;
      if (spec.positionalCode && code.length === 0 && !runs && positional !== undefined) code.push(positional);
      return { code, runs, positional };
    }
    if (w.startsWith("--")) {
      const eq = w.indexOf("=");
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      if (spec.codeLong.includes(name)) {
        if (eq >= 0) code.push(k);
        else if (k + 1 < argv.length) code.push(++k);
      }
      continue;
    }
    for (let j = 1; j < w.length; j++) {
      const letter = w[j]!;
      const isCode = spec.codeShort.includes(letter);
      const isRun = spec.runShort.includes(letter);
      if (!isCode && !isRun && !spec.valueShort.includes(letter)) continue;
      if (isRun) runs = true;
      if (j < w.length - 1) {
        // The value is attached (`-cprint(1)`, `-mpip`).
        if (isCode) code.push(k);
      } else if (k + 1 < argv.length) {
        k++;
        if (isCode) code.push(k);
      }
      break;
    }
  }
  return { code, runs, positional: undefined };
}

function optionValue(argv: readonly string[], short: string, long: string): string | undefined {
  for (let k = 1; k < argv.length; k++) {
    const w = argv[k]!;
    if (w === `-${short}` || w === `--${long}`) return argv[k + 1];
    if (w.startsWith(`--${long}=`)) return w.slice(long.length + 3);
    if (w.startsWith(`-${short}`) && !w.startsWith("--")) return w.slice(2);
  }
  return undefined;
}

/** Files a command changes through its arguments, resolved against its working directory, appended to `out`. */
function changedFiles(command: SimpleCommand, out: string[]): void {
  // Options are split only for the programs that need them (see the accessors of Command).
  const { program, argv, cwd } = command;
  const skip = CHANGES_ALL.get(program);
  if (skip !== undefined) {
    let from = skip;
    if (program === "chmod" && (command.options.has("reference") || !CHMOD_MODE.test(command.args[0] ?? ""))) from = 0;
    if ((program === "chown" || program === "chgrp") && command.options.has("reference")) from = 0;
    const paths = command.paths;
    for (let k = from; k < paths.length; k++) {
      if (program === "chattr" && /^[-+=]/.test(command.args[k]!)) continue;
      out.push(paths[k]!);
    }
    return;
  }
  if (COPIERS.has(program)) {
    const paths = command.paths;
    const target = command.options.get("t") ?? command.options.get("target-directory");
    if (target !== undefined && target.length > 0) for (const t of target) out.push(resolveShellPath(cwd, t));
    else if (paths.length >= 2 || (program === "ln" && paths.length === 1)) out.push(paths[paths.length - 1]!);
    if (program === "mv") for (let k = 0; k < paths.length - (target === undefined ? 1 : 0); k++) out.push(paths[k]!);
    return;
  }
  if (program === "dd") {
    for (const a of argv) if (a.startsWith("of=")) out.push(resolveShellPath(cwd, a.slice(3)));
    return;
  }
  if ((program === "sed" && (command.flags.has("i") || command.flags.has("in-place"))) || (program === "perl" && command.flags.has("i"))) {
    // The files after the script (sed: the first positional is the script unless -e/-f gave it).
    const paths = command.paths;
    const scripted =
      command.options.has("e") || command.options.has("f") || command.options.has("expression") || command.options.has("file");
    for (let k = program === "sed" && !scripted ? 1 : 0; k < paths.length; k++) out.push(paths[k]!);
    return;
  }
  if (program === "tar" && (command.flags.has("x") || command.flags.has("extract") || command.flags.has("get"))) {
    const dir = command.options.get("C") ?? command.options.get("directory");
    out.push(resolveShellPath(cwd, dir?.[dir.length - 1] ?? "."));
    return;
  }
  // Interpreter one-liners: literal paths the program text opens for writing (`python3 -c "open('/etc/hosts', 'w')"`).
  const spec = interpreterOf(program);
  if (spec !== undefined) {
    for (const k of interpreterCode(spec, argv).code) for (const p of codeWrites(argv[k]!)) out.push(resolveShellPath(cwd, p));
  }
}

/** Splits a command line into simple commands (including those in substitutions and nested scripts). */
export function parseShell(text: string, options: ParseShellOptions = {}): SimpleCommand[] {
  const builder = new Builder(options.maxDepth ?? 4);
  builder.script(text, 0, undefined, options.cwd);
  return builder.commands;
}
