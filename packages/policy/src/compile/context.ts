/**
 * What one evaluation knows about its event, computed on first use and shared by every rule:
 * strings at field lists, the tool name, the normalized tool calls, shell texts and their
 * analysis, session counters.
 */
import type { AhpEvent } from "@ahp/core";
import { DOWNLOADERS, FILE_COPIERS, fileBaseName, fileOrigins } from "@ahp/shell";
import { parseShell, toolCalls, type SimpleCommand, type ToolCall } from "../shell.js";
import type { CounterDelta, SessionState } from "../state.js";
import { collectStrings, DEFAULT_SHELL_FIELD_LIST, FIELD_LIST_IDS, type FieldList } from "./field-lists.js";

/** The live counters a `session` condition reads (see {@link SessionMatch}). */
export interface SessionCounters {
  actions: number;
  tokens: number;
  errors: number;
  duration_ms: number;
  events: number;
  prompts: number;
  background_runs: number;
  background_ms: number;
}

/** Longest command line the shell matchers analyse, whatever `max_match_length` says. */
export const MAX_SHELL_ANALYSIS_LENGTH = 65_536;

/** Parses a command line within the limits; `undefined` when it is too long or too deeply nested to analyse. */
function analyse(text: string, maxLen: number, cwd: string | undefined): SimpleCommand[] | undefined {
  if (text.length > Math.min(maxLen, MAX_SHELL_ANALYSIS_LENGTH)) return undefined;
  try {
    return parseShell(text, cwd === undefined ? {} : { cwd });
  } catch (err) {
    // Nesting deep enough to exhaust the stack (`"$("$("…`): not analysable, never a crash.
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}

const NO_NAMES: ReadonlySet<string> = new Set();

/** Per-evaluation facts, computed lazily and cached for the rules that need them. */
export class EvalContext {
  #shell: Map<string, SimpleCommand[] | undefined> | undefined;
  #tool: string | null | undefined;
  #counters: SessionCounters | undefined;
  constructor(
    readonly event: AhpEvent,
    readonly now: number,
    readonly settings: CompiledSettings,
    readonly session: () => SessionState,
  ) {}

  #strings: (string[] | undefined)[] | undefined;

  /** The strings at a field list, read once per evaluation however many rules use the list. */
  strings(list: FieldList): string[] {
    // Packed (no holes): one slot per field list known when the evaluation started.
    this.#strings ??= new Array<string[] | undefined>(FIELD_LIST_IDS.size).fill(undefined);
    let value = this.#strings[list.id];
    if (value === undefined) {
      value = collectStrings(list, this.event);
      this.#strings[list.id] = value;
    }
    return value;
  }

  /** The tool name in lower case (tool globs are case-insensitive). */
  get toolNameLower(): string | undefined {
    if (this.#toolLower === undefined) this.#toolLower = this.toolName?.toLowerCase() ?? null;
    return this.#toolLower ?? undefined;
  }
  #toolLower: string | null | undefined;

  /**
   * The tool name: `payload.tool_name`, `payload.tool`, `payload.name`, else the name found by
   * tool-call normalization (OpenAI `function.name`, MCP `params.name`, ACP `kind` …).
   */
  get toolName(): string | undefined {
    if (this.#tool === undefined) {
      const payload = this.event.payload as Record<string, unknown> | null;
      this.#tool = null;
      if (payload !== null && typeof payload === "object") {
        for (const key of ["tool_name", "tool", "name"]) {
          const v = Object.prototype.hasOwnProperty.call(payload, key) ? payload[key] : undefined;
          if (typeof v === "string") {
            this.#tool = v;
            break;
          }
        }
      }
      if (this.#tool === null) this.#tool = this.calls.find((c) => c.name !== undefined)?.name ?? null;
    }
    return this.#tool ?? undefined;
  }

  /** The payload's tool calls in one view, whatever shape the agent framework sent (see `toolCalls` of `@ahp/shell`). */
  get calls(): readonly ToolCall[] {
    this.#calls ??= toolCalls(this.event.payload);
    return this.#calls;
  }
  #calls: readonly ToolCall[] | undefined;

  /** Shell command texts of the payload: the strings at the default shell fields plus the commands tool-call normalization finds. */
  get shellTexts(): readonly string[] {
    if (this.#shellTexts === undefined) {
      // Distinct texts, fields first. Usually the normalized calls find the same text as the
      // fields (or none), and the fields' array (shared, never changed) is the answer.
      const fields = this.strings(DEFAULT_SHELL_FIELD_LIST);
      let texts = fields.length < 2 ? fields : [...new Set(fields)];
      for (const call of this.calls) {
        for (const c of call.commands) {
          if (texts.includes(c)) continue;
          if (texts === fields) texts = [...fields];
          texts.push(c);
        }
      }
      this.#shellTexts = texts;
    }
    return this.#shellTexts;
  }
  #shellTexts: readonly string[] | undefined;

  /**
   * The simple commands of a command line, or `undefined` when it is not analysed: longer than
   * `settings.maxMatchLength`, or too deeply nested for the parser. Rules see such a line through
   * the `too-long` opaque reason.
   */
  shell(text: string): SimpleCommand[] | undefined {
    // Nearly every event has one command text: it gets a slot of its own (no hashing per rule).
    if (this.#firstText === undefined) {
      const commands = analyse(text, this.settings.maxMatchLength, this.calls[0]?.cwd);
      this.#firstText = text;
      this.#firstCommands = commands;
      return commands;
    }
    if (text === this.#firstText) return this.#firstCommands;
    this.#shell ??= new Map();
    let commands = this.#shell.get(text);
    if (commands === undefined && !this.#shell.has(text)) {
      commands = analyse(text, this.settings.maxMatchLength, this.calls[0]?.cwd);
      this.#shell.set(text, commands);
    }
    return commands;
  }
  #firstText: string | undefined;
  #firstCommands: SimpleCommand[] | undefined;

  /**
   * The programs of every analysed command line of the event (distinct); `undefined` until a rule
   * asks. A shell condition naming programs skips its per-command work when none of them is here.
   */
  get programs(): readonly string[] {
    if (this.#programs === undefined) {
      const out: string[] = [];
      for (const text of this.shellTexts) {
        const commands = this.shell(text);
        if (commands === undefined) continue;
        for (const cmd of commands) if (!out.includes(cmd.program)) out.push(cmd.program);
      }
      this.#programs = out;
    }
    return this.#programs;
  }
  #programs: readonly string[] | undefined;

  /** Whether a tool call of the event changes files (file tools, code writing files). */
  get hasCallWrites(): boolean {
    if (this.#callWrites === undefined) {
      this.#callWrites = false;
      for (const c of this.calls) if (c.writes.length > 0) this.#callWrites = true;
    }
    return this.#callWrites;
  }
  #callWrites: boolean | undefined;

  /** Whether the event holds a code-execution tool call. */
  get hasCode(): boolean {
    if (this.#code === undefined) {
      this.#code = false;
      for (const c of this.calls) if (c.code !== undefined) this.#code = true;
    }
    return this.#code;
  }
  #code: boolean | undefined;

  /** Whether an analysed command of the event writes a file (redirections included). */
  get hasShellWrites(): boolean {
    if (this.#shellWrites === undefined) {
      this.#shellWrites = false;
      for (const text of this.shellTexts) {
        const commands = this.shell(text);
        if (commands !== undefined) for (const cmd of commands) if (cmd.writes.length > 0) this.#shellWrites = true;
      }
    }
    return this.#shellWrites;
  }
  #shellWrites: boolean | undefined;

  /** Whether a command of the event cannot be analysed: an opaque reason, or a line that was not analysed. */
  get hasOpaque(): boolean {
    if (this.#opaque === undefined) {
      this.#opaque = false;
      for (const text of this.shellTexts) {
        const commands = this.shell(text);
        if (commands === undefined) this.#opaque = true;
        else for (const cmd of commands) if (cmd.opaque.length > 0) this.#opaque = true;
      }
    }
    return this.#opaque;
  }
  #opaque: boolean | undefined;

  /** Whether a command line of the event runs a downloader. */
  get hasDownloader(): boolean {
    for (const p of this.programs) if (DOWNLOADERS.has(p)) return true;
    return false;
  }

  /** Whether a command line of the event copies, moves, links or installs a file (`cp`, `mv`, `install`, `ln`, `dd`). */
  get hasCopier(): boolean {
    for (const p of this.programs) if (FILE_COPIERS.has(p)) return true;
    return false;
  }

  /**
   * What an allowed action changes in the session's downloads (see `CounterDelta`), following
   * its command lines in order from the session's downloads (`fileOrigins` of `@ahp/shell`):
   * files it downloads or copies from a download, and files its file tools, code tools or
   * command lines replace with content of their own. Undefined when nothing changes; a session
   * that remembers no download learns only from a line that downloads.
   */
  learned(session: { downloads: readonly string[] } | undefined): Pick<CounterDelta, "downloads" | "rewritten"> | undefined {
    const downloader = this.shellTexts.length > 0 && this.hasDownloader;
    // Nothing to forget or copy in a session that remembers no download (when the session is not known, it is sent).
    if (!downloader && session !== undefined && session.downloads.length === 0) return undefined;
    const known: ReadonlySet<string> = session === undefined || session.downloads.length === 0 ? NO_NAMES : new Set(session.downloads);
    let downloads: string[] | undefined;
    let rewritten: string[] | undefined;
    for (const call of this.calls) {
      for (const w of call.writes) {
        rewritten ??= [];
        rewritten.push(fileBaseName(w));
      }
    }
    for (const text of this.shellTexts) {
      // Only a line with a `>`, a downloader, `tee` or a copier can change what a file holds.
      if (!downloader && !text.includes(">") && !text.includes("tee") && !this.hasCopier) continue;
      const commands = this.shell(text);
      if (commands === undefined) continue;
      const origins = fileOrigins(commands, known);
      for (const f of origins.downloaded) {
        downloads ??= [];
        if (!downloads.includes(f)) downloads.push(f);
        if (rewritten !== undefined) rewritten = rewritten.filter((r) => r !== f);
      }
      for (const f of origins.own) {
        rewritten ??= [];
        rewritten.push(f);
        if (downloads !== undefined) downloads = downloads.filter((d) => d !== f);
      }
    }
    if (rewritten?.length === 0) rewritten = undefined;
    if (downloads?.length === 0) downloads = undefined;
    if (downloads === undefined && rewritten === undefined) return undefined;
    return { ...(downloads === undefined ? {} : { downloads }), ...(rewritten === undefined ? {} : { rewritten }) };
  }

  /** The workspace root the event names (`payload.working_directory` …), once looked up; null when none. */
  eventRoot: string | null | undefined;

  /** The last path resolved against a workspace root in this evaluation (see `resolveOnce`). */
  lastResolved: { file: string; root: string | undefined; resolved: { path: string; inside: boolean | undefined } } | undefined;

  /** The paths file tool calls change, resolved against the workspace root; filled by the `tool_call.writes` matchers. */
  resolvedWrites: Map<ToolCall, readonly { path: string; inside: boolean | undefined }[]> | undefined;

  get counters(): SessionCounters {
    if (this.#counters === undefined) {
      const s = this.session();
      const stats = this.event.context?.session_stats ?? undefined;
      const reported = s.reported;
      this.#counters = {
        actions: stats?.total_actions ?? Math.max(s.actions, reported?.total_actions ?? 0),
        tokens: stats?.total_tokens ?? Math.max(s.tokens, s.heartbeatTokens, reported?.total_tokens ?? 0),
        errors: stats?.error_count ?? Math.max(s.errors, reported?.error_count ?? 0),
        duration_ms: stats?.duration_ms ?? Math.max(0, this.now - s.firstSeen),
        events: s.events,
        prompts: s.prompts,
        background_runs: s.backgroundRuns,
        background_ms: s.backgroundMs + (s.backgroundSince === undefined ? 0 : Math.max(0, this.now - s.backgroundSince)),
      };
    }
    return this.#counters;
  }
}

export interface CompiledSettings {
  workspaceRoot: string | undefined;
  maxMatchLength: number;
}
