/**
 * Conformance level computation (adapter spec §2.6) and the capability profiles of our native
 * adapters (§4.9) as data.
 */
import {
  BASIC_TOOL_COVERAGE,
  CANONICAL_TOOL_NAMES,
  HOOK_CATALOG,
  LEVEL_HOOKS,
  type CanonicalToolName,
  type ConformanceLevel,
  type HookPoint,
  type HostId,
} from "../catalog.js";
import { tableCoverage, tableCoversAllCategories } from "../taxonomy/canonicalize.js";

/** What a host can do with one hook point (spec §2.6 [PROJECT]). */
export interface HookCapability {
  /** The host fires the hook. */
  readonly fired: boolean;
  /** The host can enforce `deny` on it. */
  readonly canDeny: boolean;
  /** The host can prompt the user on `ask`. */
  readonly canAsk?: boolean;
}

/** A host's capabilities as {@link computeLevel} reads them (spec §2.6 [PROJECT]); our adapters' profiles are in {@link HOST_PROFILES}. */
export interface HostProfile {
  /** Per hook point, whether it is fired and can deny or ask; a missing hook is not fired. */
  readonly hooks: Partial<Record<HookPoint, HookCapability>>;
  /** Canonical names the host's tool map can emit. */
  readonly toolCoverage: readonly string[];
  /** PreToolUse events carry the Provenance extension (§1.3 [PROJECT]). */
  readonly provenance: boolean;
  /** Every built-in tool maps to a category or is marked "no category fits". Default true. */
  readonly allCategories?: boolean;
  /** `suggested_resolutions` rendered and PostAskResolution fired. Default: PostAskResolution counts and PreToolUse can ask. */
  readonly askResolution?: boolean;
  /** `permitted_tools` enforced for sub-agents. Default true. */
  readonly permittedTools?: boolean;
}

/** A hook counts for a level only if fired and (deniable or a Notification hook). */
export function hookCounts(profile: HostProfile, hook: HookPoint): boolean {
  const c = profile.hooks[hook];
  return c !== undefined && c.fired && (c.canDeny || HOOK_CATALOG[hook].blocking === "notification");
}

/** `computeLevel(profile)` (§2.6): the highest level whose every requirement holds, else `none`. */
export function computeLevel(profile: HostProfile): ConformanceLevel | "none" {
  const counts = (hooks: readonly HookPoint[]) => hooks.every((h) => hookCounts(profile, h));
  const covers = (names: readonly string[]) => names.every((n) => profile.toolCoverage.includes(n));
  if (!counts(LEVEL_HOOKS.basic) || !covers(BASIC_TOOL_COVERAGE)) return "none";
  const interactiveAsk = profile.hooks.PreToolUse?.canAsk === true;
  const askResolution = profile.askResolution ?? (interactiveAsk && hookCounts(profile, "PostAskResolution"));
  const standard = counts(LEVEL_HOOKS.standard) && profile.allCategories !== false && interactiveAsk && askResolution && profile.provenance;
  if (!standard) return "basic";
  if (!counts(LEVEL_HOOKS.comprehensive) || profile.permittedTools === false) return "standard";
  return "comprehensive";
}

const on = (canDeny: boolean, canAsk = false): HookCapability => ({ fired: true, canDeny, canAsk });
const ALL_TOOLS: readonly CanonicalToolName[] = CANONICAL_TOOL_NAMES;

/**
 * Profiles of our native adapters as specified (§4.9, §4). Hosts whose details are unverified
 * are profiled conservatively (Q8), e.g. Cursor's SessionStart counts as not deniable.
 */
export const HOST_PROFILES: { readonly [H in HostId]: HostProfile } = {
  "claude-code": {
    hooks: {
      SessionStart: on(true),
      PreUserInput: on(true),
      PreToolUse: on(true, true),
      PreSubAgentSpawn: on(true, true),
      PreSkillLoad: on(true, true),
      PostToolUse: on(true),
      PreCompact: on(true),
      PostCompact: on(false),
      PostSubAgentResult: on(true),
      PreOutputDeliver: on(false),
      SessionEnd: on(false),
      PostAskResolution: on(false),
    },
    toolCoverage: tableCoverage("claude-code"),
    provenance: true,
    allCategories: tableCoversAllCategories("claude-code"),
  },
  cursor: {
    hooks: {
      SessionStart: on(false),
      PreUserInput: on(true),
      PreToolUse: on(true, true),
      PreSubAgentSpawn: on(true, true),
      PostToolUse: on(true),
      PostSubAgentResult: on(true),
      PreCompact: on(false),
      PreOutputDeliver: on(false),
      SessionEnd: on(false),
    },
    toolCoverage: tableCoverage("cursor"),
    provenance: true,
    allCategories: tableCoversAllCategories("cursor"),
  },
  "copilot-cli": {
    hooks: {
      SessionStart: on(false),
      PreUserInput: on(false),
      PreToolUse: on(true, true),
      PostToolUse: on(false),
      PostSubAgentResult: on(false),
      PreOutputDeliver: on(false),
      SessionEnd: on(false),
    },
    toolCoverage: tableCoverage("copilot-cli"),
    provenance: true,
    allCategories: tableCoversAllCategories("copilot-cli"),
  },
  "copilot-sdk": {
    hooks: { SessionStart: on(false), PreUserInput: on(true), PreToolUse: on(true, true), PostToolUse: on(true), SessionEnd: on(false) },
    toolCoverage: ALL_TOOLS,
    provenance: true,
  },
  vscode: {
    hooks: {
      SessionStart: on(true),
      PreUserInput: on(true),
      PreToolUse: on(true, true),
      PostToolUse: on(true),
      PreCompact: on(true),
      PostSubAgentResult: on(true),
      PreOutputDeliver: on(false),
    },
    toolCoverage: tableCoverage("vscode"),
    provenance: true,
    allCategories: tableCoversAllCategories("vscode"),
  },
  cline: {
    hooks: {
      SessionStart: on(true),
      PreUserInput: on(true),
      PreToolUse: on(true),
      PostToolUse: on(false),
      PreCompact: on(true),
      SessionEnd: on(false),
    },
    toolCoverage: tableCoverage("cline"),
    provenance: true,
    allCategories: tableCoversAllCategories("cline"),
  },
  windsurf: {
    hooks: { PreUserInput: on(true), PreToolUse: on(true), PostToolUse: on(false), PreOutputDeliver: on(false) },
    toolCoverage: tableCoverage("windsurf"),
    provenance: true,
  },
  openclaw: {
    hooks: { SessionStart: on(false), PreToolUse: on(true, true), PostAskResolution: on(false) },
    toolCoverage: ALL_TOOLS,
    provenance: true,
  },
  opencode: {
    hooks: { PreToolUse: on(true) },
    toolCoverage: ALL_TOOLS,
    provenance: true,
  },
  "openai-agents": {
    hooks: {
      SessionStart: on(true),
      PreUserInput: on(true),
      PreLLMRequest: on(true),
      PreToolUse: on(true, true),
      PostToolUse: on(true),
      PreOutputDeliver: on(true),
      PreSubAgentSpawn: on(false),
      PostAskResolution: on(false),
    },
    toolCoverage: ALL_TOOLS,
    provenance: true,
  },
  langchain: {
    hooks: {
      SessionStart: on(true),
      PreUserInput: on(true),
      PreLLMRequest: on(true),
      PostLLMResponse: on(true),
      PreToolUse: on(true, true),
      PostToolUse: on(true),
      PreOutputDeliver: on(true),
      PostAskResolution: on(false),
    },
    toolCoverage: ALL_TOOLS,
    provenance: true,
  },
};

/** The levels §4.9 states for each host (what {@link computeLevel} must give for {@link HOST_PROFILES}). */
export const HOST_LEVELS: { readonly [H in HostId]: ConformanceLevel | "none" } = {
  "claude-code": "basic",
  cursor: "none",
  "copilot-cli": "none",
  "copilot-sdk": "none",
  vscode: "basic",
  cline: "basic",
  windsurf: "none",
  openclaw: "none",
  opencode: "none",
  "openai-agents": "basic",
  langchain: "basic",
};
