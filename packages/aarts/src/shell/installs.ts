/**
 * `package_install` derivation (adapter spec §3.4): which shell segments install packages, and
 * the url / file_path / package artifacts of their targets. Pure and deterministic; the install
 * forms are data (`INSTALL_FORMS`), not `if` chains.
 */
import { parseShell, stripWrappers } from "@ahp/shell";
import type { Artifact } from "../types.js";

/** Maximum nesting of `$( … )`, backquotes and `sh -c` re-entry that is parsed (spec §3.4). */
export const MAX_SHELL_NESTING = 2;

/**
 * How one package manager's command line installs or fetches-and-runs packages (a row of the spec §3.4
 * table), as data; see {@link INSTALL_FORMS}.
 */
export interface InstallForm {
  /** Registry id used as artifact `context` (spec §3.4 table). */
  readonly registry: string;
  /** Install subcommands, each a word sequence; `?` matches one optional word (dotnet `add [project] package`). */
  readonly install?: readonly (readonly string[])[];
  /** Fetch-and-run subcommands (`:exec` forms). */
  readonly exec?: readonly (readonly string[])[];
  /** The binary itself is the form (`npx`: exec; `cpanm`: install). */
  readonly self?: "install" | "exec";
  /** An option word that acts as the install subcommand (`pacman -S…`, `nix-env -i`). */
  readonly flagSubcommand?: RegExp;
  /** `go run`: an exec form only when a target contains `@`. */
  readonly execNeedsAt?: boolean;
  /** Value-taking flags: their next word is not a target. */
  readonly valueFlags: ReadonlySet<string>;
  /** pip/uv: `-r`/`-c` files and `-e` editables become artifacts. */
  readonly pipFiles?: boolean;
  /** Requirement level in the spec (informative). */
  readonly level: "MUST" | "SHOULD";
}

const flags = (...names: string[]) => new Set(names);
const NPM_FLAGS = flags(
  "--registry",
  "--tag",
  "--workspace",
  "-w",
  "--prefix",
  "--cache",
  "--userconfig",
  "--globalconfig",
  "--omit",
  "--include",
  "--filter",
  "-F",
  "--cwd",
  "-C",
  "--dir",
  "--loglevel",
);
const PIP_FLAGS = flags(
  "-r",
  "--requirement",
  "-c",
  "--constraint",
  "-e",
  "--editable",
  "-t",
  "--target",
  "--prefix",
  "--root",
  "--src",
  "-i",
  "--index-url",
  "--extra-index-url",
  "-f",
  "--find-links",
  "--platform",
  "--python-version",
  "--implementation",
  "--abi",
  "--python",
  "-p",
  "--with",
  "--index",
  "--default-index",
);
const CARGO_FLAGS = flags(
  "--version",
  "--vers",
  "--git",
  "--branch",
  "--tag",
  "--rev",
  "--path",
  "--root",
  "--registry",
  "--index",
  "--features",
  "-F",
  "--target",
  "-j",
  "--jobs",
);
const GO_FLAGS = flags("-o", "-tags", "-ldflags", "-gcflags", "-mod", "-modfile", "-C");
const GEM_FLAGS = flags("-v", "--version", "-s", "--source", "-i", "--install-dir", "--group", "--git", "--branch");
const SYS_FLAGS = flags("-o", "-t", "--target-release", "--repo", "--enablerepo", "--disablerepo", "-c");
const APK_FLAGS = flags("-X", "--repository", "-p", "--root", "-t", "--virtual");
const CONDA_FLAGS = flags("-c", "--channel", "-n", "--name", "-p", "--prefix", "--file");
const NONE = flags();

const w = (...sequences: string[]) => sequences.map((s) => s.split(" "));

const npm = (install: string[][], exec?: string[][]): InstallForm => ({
  registry: "npm",
  install,
  ...(exec === undefined ? {} : { exec }),
  valueFlags: NPM_FLAGS,
  level: "MUST",
});

/** Install forms by binary name (spec §3.4 table). */
export const INSTALL_FORMS: Readonly<Record<string, InstallForm>> = {
  npm: npm(
    w(
      "install",
      "i",
      "in",
      "ins",
      "inst",
      "insta",
      "instal",
      "isnt",
      "isnta",
      "isntal",
      "isntall",
      "add",
      "ci",
      "install-test",
      "it",
      "install-ci-test",
      "cit",
    ),
    w("exec", "x"),
  ),
  npx: { registry: "npm", self: "exec", valueFlags: NPM_FLAGS, level: "MUST" },
  pnpx: { registry: "npm", self: "exec", valueFlags: NPM_FLAGS, level: "MUST" },
  pnpm: npm(w("add", "install", "i"), w("dlx")),
  yarn: npm(w("add", "install", "global add"), w("dlx")),
  bun: npm(w("add", "a", "install", "i"), w("x")),
  bunx: { registry: "npm", self: "exec", valueFlags: NPM_FLAGS, level: "MUST" },
  pip: { registry: "pypi", install: w("install"), valueFlags: PIP_FLAGS, pipFiles: true, level: "MUST" },
  uv: {
    registry: "pypi",
    install: w("pip install", "add", "tool install"),
    exec: w("tool run"),
    valueFlags: PIP_FLAGS,
    pipFiles: true,
    level: "MUST",
  },
  uvx: { registry: "pypi", self: "exec", valueFlags: PIP_FLAGS, level: "MUST" },
  pipx: { registry: "pypi", install: w("install", "inject"), exec: w("run"), valueFlags: PIP_FLAGS, level: "MUST" },
  poetry: { registry: "pypi", install: w("add", "install"), valueFlags: PIP_FLAGS, level: "MUST" },
  pdm: { registry: "pypi", install: w("add", "install"), valueFlags: PIP_FLAGS, level: "MUST" },
  conda: { registry: "conda", install: w("install"), valueFlags: CONDA_FLAGS, level: "SHOULD" },
  mamba: { registry: "conda", install: w("install"), valueFlags: CONDA_FLAGS, level: "SHOULD" },
  micromamba: { registry: "conda", install: w("install"), valueFlags: CONDA_FLAGS, level: "SHOULD" },
  cargo: { registry: "cargo", install: w("install", "add", "binstall"), valueFlags: CARGO_FLAGS, level: "MUST" },
  go: { registry: "golang", install: w("install", "get"), exec: w("run"), execNeedsAt: true, valueFlags: GO_FLAGS, level: "MUST" },
  gem: { registry: "gem", install: w("install"), valueFlags: GEM_FLAGS, level: "MUST" },
  bundle: { registry: "gem", install: w("add", "install"), valueFlags: GEM_FLAGS, level: "MUST" },
  apt: { registry: "deb", install: w("install"), valueFlags: SYS_FLAGS, level: "MUST" },
  "apt-get": { registry: "deb", install: w("install"), valueFlags: SYS_FLAGS, level: "MUST" },
  aptitude: { registry: "deb", install: w("install"), valueFlags: SYS_FLAGS, level: "MUST" },
  dnf: { registry: "rpm", install: w("install"), valueFlags: SYS_FLAGS, level: "MUST" },
  yum: { registry: "rpm", install: w("install"), valueFlags: SYS_FLAGS, level: "MUST" },
  microdnf: { registry: "rpm", install: w("install"), valueFlags: SYS_FLAGS, level: "MUST" },
  zypper: { registry: "rpm", install: w("install", "in"), valueFlags: SYS_FLAGS, level: "SHOULD" },
  apk: { registry: "apk", install: w("add"), valueFlags: APK_FLAGS, level: "MUST" },
  pacman: { registry: "alpm", flagSubcommand: /^-S/, valueFlags: flags("--config", "--dbpath", "-r", "--root", "-b"), level: "SHOULD" },
  brew: { registry: "brew", install: w("install", "reinstall"), valueFlags: NONE, level: "MUST" },
  port: { registry: "macports", install: w("install"), valueFlags: NONE, level: "SHOULD" },
  snap: { registry: "snap", install: w("install"), valueFlags: flags("--channel"), level: "SHOULD" },
  flatpak: { registry: "flatpak", install: w("install"), valueFlags: NONE, level: "SHOULD" },
  choco: { registry: "chocolatey", install: w("install"), valueFlags: flags("--version", "-s", "--source"), level: "SHOULD" },
  // `--id X` names the package itself, so it is not a value-taking flag here.
  winget: { registry: "winget", install: w("install"), valueFlags: flags("--version", "-v", "-s", "--source"), level: "SHOULD" },
  scoop: { registry: "scoop", install: w("install"), valueFlags: NONE, level: "SHOULD" },
  // `-iA` (install by attribute) is accepted alongside the spec's `-i` / `--install`.
  "nix-env": {
    registry: "nix",
    flagSubcommand: /^(-i[A-Za-z]*|--install)$/,
    valueFlags: flags("-f", "--file", "-p", "--profile"),
    level: "SHOULD",
  },
  nix: { registry: "nix", install: w("profile install"), exec: w("run", "shell"), valueFlags: NONE, level: "SHOULD" },
  composer: { registry: "composer", install: w("require", "install"), valueFlags: flags("-d", "--working-dir"), level: "SHOULD" },
  dotnet: {
    registry: "nuget",
    install: w("add ? package"),
    valueFlags: flags("-v", "--version", "-s", "--source", "-f", "--framework"),
    level: "SHOULD",
  },
  nuget: { registry: "nuget", install: w("install"), valueFlags: flags("-Version", "-Source", "-OutputDirectory"), level: "SHOULD" },
  deno: { registry: "deno", install: w("add", "install"), valueFlags: flags("--config", "-c", "--root", "-n", "--name"), level: "SHOULD" },
  cabal: { registry: "hackage", install: w("install"), valueFlags: NONE, level: "SHOULD" },
  stack: { registry: "hackage", install: w("install"), valueFlags: NONE, level: "SHOULD" },
  opam: { registry: "opam", install: w("install"), valueFlags: NONE, level: "SHOULD" },
  luarocks: { registry: "luarocks", install: w("install"), valueFlags: flags("--tree", "--server"), level: "SHOULD" },
  cpanm: { registry: "cpan", self: "install", valueFlags: flags("-l", "--local-lib", "--mirror"), level: "SHOULD" },
};

/** Binaries matched by pattern (`pip3.11`). */
const PATTERN_FORMS: readonly (readonly [RegExp, string])[] = [[/^pip(3(\.[0-9]+)?)?$/, "pip"]];

/**
 * The install form of a binary name (already reduced by {@link binaryName}), including versioned names
 * such as `pip3.11`; `undefined` when it is no package manager.
 */
export function installFormOf(binary: string): InstallForm | undefined {
  if (Object.prototype.hasOwnProperty.call(INSTALL_FORMS, binary)) return INSTALL_FORMS[binary];
  for (const [re, name] of PATTERN_FORMS) if (re.test(binary)) return INSTALL_FORMS[name];
  return undefined;
}

// ------------------------------------------------------------------ segment normalisation

/** Last path component with a Windows executable suffix removed (spec §3.4 per-segment rule 4). */
export function binaryName(word: string): string {
  const base = word.split(/[\\/]/).pop() ?? word;
  return base.replace(/\.(exe|cmd|bat|ps1)$/i, "");
}

/** The binary a segment runs after normalisation (rules 1–2, `@ahp/shell`'s wrapper table), for pipe-target checks. */
export function segmentBinary(words: readonly string[]): string | undefined {
  const rest = stripWrappers(words);
  return rest[0] === undefined ? undefined : binaryName(rest[0]);
}

// ------------------------------------------------------------------ install analysis

/** One target word of an install command, after quote removal. */
export interface InstallTarget {
  /** The word verbatim (package spec, URL or path). */
  readonly word: string;
  /** `requirements` for pip/uv `-r`/`-c` files, `editable` for `-e` values. */
  readonly role: "target" | "requirements" | "editable";
}

/** One package-manager invocation found in a command by {@link findInstalls}. */
export interface InstallSegment {
  /** The package manager's binary name (e.g. `npm`, `pip`). */
  readonly binary: string;
  /** Its install form. */
  readonly form: InstallForm;
  /** A fetch-and-run form (`npx`, `pnpm dlx`, `uvx`, …): package artifacts get the context `<registry>:exec`. */
  readonly exec: boolean;
  /** What it installs, in command-line order. */
  readonly targets: readonly InstallTarget[];
}

/** Matches `sequence` against the non-flag words starting at `from`; returns the index after it, or -1. */
function matchSequence(words: readonly string[], from: number, sequence: readonly string[], valueFlags: ReadonlySet<string>): number {
  let i = from;
  for (let s = 0; s < sequence.length; s++) {
    const expected = sequence[s]!;
    while (i < words.length && words[i]!.startsWith("-")) i += valueFlags.has(words[i]!) ? 2 : 1;
    if (i >= words.length) return -1;
    if (expected === "?") {
      // Optional wildcard: try without it first, then consuming one word.
      const without = matchSequence(words, i, sequence.slice(s + 1), valueFlags);
      if (without !== -1) return without;
      i++;
      continue;
    }
    if (words[i] !== expected) return -1;
    i++;
  }
  return i;
}

function collectTargets(words: readonly string[], from: number, form: InstallForm): InstallTarget[] {
  const targets: InstallTarget[] = [];
  for (let i = from; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith("-")) {
      targets.push({ word, role: "target" });
      continue;
    }
    const eq = word.indexOf("=");
    const name = eq === -1 ? word : word.slice(0, eq);
    const inline = eq === -1 ? undefined : word.slice(eq + 1);
    if (form.pipFiles && (name === "-r" || name === "--requirement" || name === "-c" || name === "--constraint")) {
      const file = inline ?? words[++i];
      if (file !== undefined) targets.push({ word: file, role: "requirements" });
      continue;
    }
    if (form.pipFiles && (name === "-e" || name === "--editable")) {
      const value = inline ?? words[++i];
      if (value !== undefined) targets.push({ word: value, role: "editable" });
      continue;
    }
    if (inline === undefined && form.valueFlags.has(word)) i++;
  }
  return targets;
}

/** Analyses one normalised segment (binary first) for an install form (rules 4–7). */
function installOf(words: readonly string[]): InstallSegment | undefined {
  let binary = binaryName(words[0]!);
  let args = words.slice(1);
  // Rule 5: python -m pip / pip3 / uv.
  if (/^(python[0-9.]*|py|pythonw)$/.test(binary)) {
    const m = args.findIndex((a) => a === "-m" || /^-m(pip3?|uv)$/.test(a));
    if (m === -1) return undefined;
    const mod = args[m] === "-m" ? args[m + 1] : args[m]!.slice(2);
    if (mod !== "pip" && mod !== "pip3" && mod !== "uv") return undefined;
    binary = mod === "uv" ? "uv" : "pip";
    args = args.slice(args[m] === "-m" ? m + 2 : m + 1);
  }
  const form = installFormOf(binary);
  if (form === undefined) return undefined;
  const all = [binary, ...args];
  if (form.self !== undefined) {
    return { binary, form, exec: form.self === "exec", targets: firstIfExec(collectTargets(all, 1, form), form.self === "exec") };
  }
  if (form.flagSubcommand !== undefined) {
    if (!args.some((a) => form.flagSubcommand!.test(a))) return undefined;
    const targets = collectTargets(
      all.map((a) => (form.flagSubcommand!.test(a) ? "-" : a)),
      1,
      form,
    );
    return { binary, form, exec: false, targets };
  }
  for (const sequence of form.install ?? []) {
    const end = matchSequence(all, 1, sequence, form.valueFlags);
    if (end !== -1) return { binary, form, exec: false, targets: collectTargets(all, end, form) };
  }
  for (const sequence of form.exec ?? []) {
    const end = matchSequence(all, 1, sequence, form.valueFlags);
    if (end === -1) continue;
    const targets = collectTargets(all, end, form);
    if (form.execNeedsAt && !targets.some((t) => t.word.includes("@"))) return undefined;
    return { binary, form, exec: true, targets: firstIfExec(targets, true) };
  }
  return undefined;
}

function firstIfExec(targets: InstallTarget[], exec: boolean): InstallTarget[] {
  if (!exec) return targets;
  const first = targets.find((t) => t.role === "target");
  return first === undefined ? [] : [first];
}

/**
 * Every install segment of a command, including nested commands up to {@link MAX_SHELL_NESTING}
 * (substitutions, `sh -c`, `cmd /c`, `powershell -Command`, scripts piped into a shell). The
 * command is parsed by `@ahp/shell`, which also unwraps `sudo`/`env`/`nohup`/… and `python -m`.
 */
export function findInstalls(command: string, depth = 0): InstallSegment[] {
  const out: InstallSegment[] = [];
  if (depth > MAX_SHELL_NESTING) return out;
  for (const cmd of parseShell(command, { maxDepth: MAX_SHELL_NESTING - depth })) {
    if (cmd.argv.length === 0) continue;
    const install = installOf(cmd.argv);
    if (install !== undefined) out.push(install);
  }
  return out;
}

// ------------------------------------------------------------------ artifacts

const URL_PREFIXES = ["http://", "https://", "git+", "git://", "ssh://"];
const PATH_PREFIXES = ["./", "../", "/", "~/", "file:"];

/** Result of {@link parseInstalls}. */
export interface ParseInstallsResult {
  /** The command installs a package somewhere: the tool call is `package_install` (spec §3.2). */
  readonly isInstall: boolean;
  /** The §3.4 artifacts (url / file_path / package), without the verbatim `command` artifact. */
  readonly artifacts: Artifact[];
}

/**
 * `parseInstalls(command)` (spec §3.4): whether the command contains a package-install
 * invocation, and the artifacts of its targets. `sourceField` is the event path of the command
 * (default `tool_input.command`).
 */
export function parseInstalls(command: string, options: { sourceField?: string } = {}): ParseInstallsResult {
  const sourceField = options.sourceField ?? "tool_input.command";
  const installs = findInstalls(command);
  const artifacts: Artifact[] = [];
  const seen = new Set<string>();
  const add = (type: Artifact["type"], value: string, context: string) => {
    const key = `${type}\u0000${value}\u0000${context}`;
    if (seen.has(key)) return;
    seen.add(key);
    artifacts.push({ type, value, context, source_field: sourceField });
  };
  for (const install of installs) {
    const registry = install.form.registry;
    for (const target of install.targets) {
      const word = target.word;
      if (target.role === "requirements") {
        add("file_path", word, "requirements_file");
        continue;
      }
      if (URL_PREFIXES.some((p) => word.startsWith(p))) add("url", word, registry);
      else if (word === "." || PATH_PREFIXES.some((p) => word.startsWith(p)) || target.role === "editable") {
        add("file_path", word, "local_package");
      } else add("package", word, install.exec ? `${registry}:exec` : registry);
    }
  }
  return { isInstall: installs.length > 0, artifacts };
}
