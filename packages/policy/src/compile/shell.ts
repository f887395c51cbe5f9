/** The `shell` matcher: conditions on the simple commands of the command lines in an event. */
import { mayRunFile, pipesInto, runsDownload, runsOneOfFiles } from "@ahp/shell";
import { hasGlobSyntax } from "../glob.js";
import type { ShellMatch } from "../schema.js";
import { normalizeShellPath, type OpaqueReason, type SimpleCommand } from "../shell.js";
import { asList, compileFieldCondition, nameMatcher, type DocPath, type Issues, type Predicate } from "./conditions.js";
import type { EvalContext } from "./context.js";
import { compileFieldList, stringsAt } from "./fields.js";

/** Opaque reasons a shell condition may name: the parser's, and `too-long` for a line that was not analysed. */
export type ShellOpaqueReason = OpaqueReason | "too-long";

const OUTPUT_REDIRECTS = new Set([">", ">>", ">|", "&>", "&>>", "<>"]);

/** Whether a command of the line runs a file an earlier allowed action of the session downloaded. */
function runsEarlierDownload(ctx: EvalContext, commands: readonly SimpleCommand[]): boolean {
  // The session is read only for a line that could run a file by name (most lines cannot): with a
  // shared store reading it is a round trip, in memory a lookup.
  let may = false;
  for (const c of commands)
    if (mayRunFile(c) || c.program.includes(".")) {
      may = true;
      break;
    }
  if (!may) return false;
  const known = ctx.session().downloads;
  return known.length > 0 && runsOneOfFiles(commands, new Set(known));
}

export function compileShell(m: ShellMatch, at: DocPath, issues: Issues, maxLen: number): Predicate {
  const fields = m.fields === undefined ? undefined : compileFieldList(m.fields, [...at, "fields"], issues);
  const line = m.line === undefined ? undefined : compileFieldCondition(m.line, [...at, "line"], issues, maxLen);
  const per: ((cmd: SimpleCommand) => boolean)[] = [];
  /** Plain program names of the condition: a line whose programs include none of them is not looked at further. */
  let programSet: ReadonlySet<string> | undefined;
  if (m.program !== undefined) {
    const names = asList(m.program);
    if (!names.some(hasGlobSyntax)) {
      // Plain names (most rules): one Set lookup per command, no matcher call in between.
      const set = new Set(names.map((n) => n.toLowerCase()));
      programSet = set;
      per.push((cmd) => set.has(cmd.program));
    } else {
      const re = issues.guard([...at, "program"], () => nameMatcher(names));
      per.push(re === undefined ? () => false : (cmd) => re(cmd.program));
    }
  }
  if (m.flags_any !== undefined) {
    const flags = m.flags_any;
    per.push((cmd) => {
      for (const f of flags) if (cmd.flags.has(f)) return true;
      return false;
    });
  }
  if (m.flags_all !== undefined) {
    const groups = m.flags_all.map((g) => asList(g));
    per.push((cmd) => groups.every((g) => g.some((f) => cmd.flags.has(f))));
  }
  if (m.option !== undefined) {
    const names = asList(m.option.name);
    const value =
      m.option.value === undefined ? undefined : compileFieldCondition(m.option.value, [...at, "option", "value"], issues, maxLen);
    per.push((cmd) =>
      names.some((name) => {
        const values = cmd.options.get(name);
        if (values === undefined) return false;
        if (value === undefined) return true;
        return values.length === 0 ? value(undefined) : values.some(value);
      }),
    );
  }
  if (m.args !== undefined) {
    const tests = m.args.map((c, k) => compileFieldCondition(c, [...at, "args", k], issues, maxLen));
    per.push((cmd) => {
      for (const t of tests) if (!cmd.args.some(t)) return false;
      return true;
    });
  }
  if (m.argv !== undefined) {
    const t = compileFieldCondition(m.argv, [...at, "argv"], issues, maxLen);
    per.push((cmd) => t(cmd.argv.join(" ")));
  }
  if (m.redirect !== undefined) {
    const t = compileFieldCondition(m.redirect, [...at, "redirect"], issues, maxLen);
    per.push((cmd) => cmd.redirects.some((r) => OUTPUT_REDIRECTS.has(r.op) && t(normalizeShellPath(r.target))));
  }
  /** Plain names of `piped_to`: output flows only into programs of the line, so one of them must be among them. */
  let consumerSet: ReadonlySet<string> | undefined;
  if (m.piped_to !== undefined) {
    const consumers = asList(m.piped_to);
    if (!consumers.some(hasGlobSyntax)) consumerSet = new Set(consumers.map((n) => n.toLowerCase()));
    const re = issues.guard([...at, "piped_to"], () => nameMatcher(asList(m.piped_to!)));
    per.push(re === undefined ? () => false : (cmd) => pipesInto(cmd, re));
  }
  if (m.paths !== undefined) {
    const tests = m.paths.map((c, k) => compileFieldCondition(c, [...at, "paths", k], issues, maxLen));
    per.push((cmd) => {
      for (const t of tests) if (!cmd.paths.some(t)) return false;
      return true;
    });
  }
  if (m.writes !== undefined) {
    const t = compileFieldCondition(m.writes, [...at, "writes"], issues, maxLen);
    per.push((cmd) => cmd.writes.some(t));
  }
  const reasons: ReadonlySet<ShellOpaqueReason> | undefined =
    m.opaque === undefined || m.opaque === false
      ? undefined
      : new Set(m.opaque === true ? (["dynamic-command", "dynamic-script", "inline-code", "too-long"] as const) : m.opaque);
  if (m.opaque === false) per.push((cmd) => cmd.opaque.length === 0);
  else if (reasons !== undefined) per.push((cmd) => cmd.opaque.some((r) => reasons.has(r)));
  if (m.word !== undefined) {
    const t = compileFieldCondition(m.word, [...at, "word"], issues, maxLen);
    per.push((cmd) => {
      for (const w of cmd.words) if (t(w)) return true;
      return false;
    });
  }
  const staged = m.runs_download === true;
  if (line === undefined && per.length === 0 && !staged)
    issues.add(
      at,
      "empty shell condition: give line, program, flags_any, flags_all, option, args, paths, argv, redirect, writes, piped_to, opaque, word or runs_download",
    );
  // One test is called directly: rules are matched per command of every line, so a wrapper call counts.
  const command =
    per.length === 0
      ? undefined
      : per.length === 1
        ? per[0]!
        : per.length === 2
          ? (
              (a, b) => (cmd: SimpleCommand) =>
                a(cmd) && b(cmd)
            )(per[0]!, per[1]!)
          : (cmd: SimpleCommand) => {
              for (const t of per) if (!t(cmd)) return false;
              return true;
            };
  // A line that was not analysed matches only a condition that asks for `too-long` (alone or with `line`).
  const tooLong = reasons?.has("too-long") === true && per.length === 1;
  // The default texts only: the program list covers them (a `fields` list may name other texts).
  const gates = fields === undefined && line === undefined ? [programSet, consumerSet].filter((g) => g !== undefined) : [];
  return (ctx) => {
    for (const gate of gates) {
      let present = false;
      for (const p of ctx.programs) {
        if (gate.has(p)) {
          present = true;
          break;
        }
      }
      if (!present) return false;
    }
    for (const text of fields === undefined ? ctx.shellTexts : stringsAt(fields, ctx)) {
      if (line !== undefined && !line(text)) continue;
      if (command === undefined && !staged) return true;
      const commands = ctx.shell(text);
      if (commands === undefined) {
        if (tooLong) return true;
        continue;
      }
      if (staged && !((ctx.hasDownloader && runsDownload(commands)) || runsEarlierDownload(ctx, commands))) continue;
      if (command === undefined) return true;
      for (const cmd of commands) if (command(cmd)) return true;
    }
    return false;
  };
}
