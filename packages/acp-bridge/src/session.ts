/** One bridged session as the bridge keeps it, and the client connection it is bound to. */
import type { AgentContext } from "@agentclientprotocol/sdk";
import type { DeadlineTimer } from "./clock.js";
import type { Initiator, InitiatorDetail, ResumeCause, SuspendMode } from "./constants.js";
import type { ParkSpec } from "./harness.js";
import type { Refusal } from "./permission.js";
import type { BridgeState } from "./state-machine.js";
import type { ResumeConditions } from "./validation.js";

/** What a client advertised in `clientCapabilities._meta["ahpHarness/suspend"]` and `session.notices`. */
export interface ClientCaps {
  /** Advertised the descriptor at all. */
  aware: boolean;
  notices: boolean;
  firstClassLifecycle: boolean;
  awaitResumption: boolean;
  agentInitiatedTurns: boolean;
}

/** An upstream ACP connection (the bridge is the agent on it). */
export interface ClientLink {
  readonly id: number;
  readonly ctx: AgentContext;
  caps: ClientCaps;
  closed: boolean;
  /**
   * Writes a notification straight to the client's stream when nothing the SDK was asked to send
   * is still on its way (so it cannot overtake it); false when it did not write. Set over streams
   * made by `nodeStream`/`processStdioStream`; absent in memory.
   */
  write?: (message: unknown) => boolean;
  /** As `write`, for a notification that is already one JSON line. */
  writeLine?: (line: string) => boolean;
}

/**
 * The result of `session/suspend` and its tunnel: the handle to resume with, when it was suspended,
 * the echoed conditions and the bridge's own `_meta`.
 */
export interface SuspendResult {
  handle: string;
  reason?: string;
  suspendedAt: string;
  resumeWhen?: ResumeConditions;
  summary?: string;
  _meta: Record<string, unknown>;
}

/** The suspension a session holds (reserved while suspending, valid while suspended). */
export interface Suspension {
  handle: string;
  reason?: string;
  initiator: Initiator;
  initiatorDetail: InitiatorDetail;
  mode: SuspendMode;
  resumeWhen?: ResumeConditions;
  timeoutInput?: unknown;
  summary?: string;
  suspendedAtMs?: number;
  stopReason?: string;
  escalated?: boolean;
  emulated?: boolean | "cancel";
  emulatedBoundary?: boolean;
  downstreamHandle?: string;
  park?: ParkSpec;
  /** The client accepted the conditions of an await_resumption (it arms them, §5.7). */
  clientOwnsConditions?: boolean;
}

/** A suspend being drained (T2/T7), shared by coalesced requests (T3). */
export interface PendingSuspend {
  waiters: Array<{ resolve: (r: SuspendResult) => void; reject: (e: unknown) => void }>;
  deadline?: DeadlineTimer;
}

/**
 * What the bridge tracks of the prompt turn running in a session (to find step boundaries for an
 * emulated `finish_step`).
 */
export interface Turn {
  /** Tool calls seen in this turn and their last status. */
  toolCalls: Map<string, string>;
  cancelSent: boolean;
}

/**
 * A wake-up that arrived while the session could not take it yet (a suspend still committing); it
 * runs once the commit is done.
 */
export interface HeldWake {
  cause: ResumeCause;
  input?: unknown;
  hasInput: boolean;
  continueTranscript: boolean;
}

/**
 * Everything the bridge holds about one ACP session: state, the agent's session id, the client
 * link, handles issued and consumed, the suspension, timers, the running turn and the AHP run.
 */
export interface Session {
  readonly id: string;
  /** The agent's id of the session (differs after a fresh-transcript resume). */
  downstreamId: string;
  cwd: string;
  additionalDirectories?: string[];
  mcpServers: unknown[];
  state: BridgeState;
  /** Compare-and-set counter of the `suspended → resuming` move (§5.5). */
  version: number;
  link?: ClientLink;
  issued: Set<string>;
  consumed: Set<string>;
  suspension?: Suspension;
  pending?: PendingSuspend;
  timers: DeadlineTimer[];
  pollTimer?: DeadlineTimer;
  held?: HeldWake;
  turn?: Turn;
  runId?: string;
  runStartedAt?: string;
  /** Input queued for the next prompt (P2 `on_next_prompt`). */
  queuedInput?: { input?: unknown; hasInput: boolean; digest?: string };
  /** The agent no longer holds the session (its process or connection was replaced). */
  downstreamLost: boolean;
  /** Recent agent text, for a digest when a resume starts a fresh transcript. */
  digest: string;
  /** Single-use harness approvals of re-asked actions (key: tool + arguments). */
  approvals: Set<string>;
  /** An idle suspend is being written to the store: wake-ups wait for it. */
  committing?: Promise<unknown>;
  /** `session/load` is replaying (forward), or a re-attach replay is being discarded. */
  replaying?: "forward" | "discard";
  /**
   * Updates of the agent held back until the answer that opened the session (new, or resume of a
   * session the bridge had not seen) has gone to the client; forwarded in order right after it.
   */
  early?: EarlyUpdate[];
  /** Tool calls the harness refused: the agent's later updates of them keep the reason in view. */
  refused?: Map<string, Refusal>;
  /**
   * Tool calls the harness let through (`pre_action` allowed), by id, with the payload it saw:
   * when the agent reports one completed or failed, the harness gets its `post_action`.
   */
  allowedTools?: Map<string, Record<string, unknown>>;
}

/** An agent `session/update` as it arrived: its params and, when it may be forwarded as is, its line. */
export interface EarlyUpdate {
  params: unknown;
  line?: string;
}

/** A fresh session in `active.idle`, held under the same id by the agent. */
export function newSession(id: string, cwd: string, mcpServers: unknown[] = [], additionalDirectories?: string[]): Session {
  return {
    id,
    downstreamId: id,
    cwd,
    ...(additionalDirectories === undefined ? {} : { additionalDirectories }),
    mcpServers,
    state: "active.idle",
    version: 0,
    issued: new Set(),
    consumed: new Set(),
    timers: [],
    downstreamLost: false,
    digest: "",
    approvals: new Set(),
  };
}

/** The capabilities of a client that advertised nothing of the suspend extension (a stock client). */
export const NO_CLIENT_CAPS: ClientCaps = {
  aware: false,
  notices: false,
  firstClassLifecycle: false,
  awaitResumption: false,
  agentInitiatedTurns: false,
};
export type { ResumeCause };
