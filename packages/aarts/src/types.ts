/**
 * TypeScript types of the AARTS data model, inferred from the zod schemas. Type-only: importing
 * this module loads nothing at run time.
 */
import type { z } from "zod";
import type * as S from "./schema/model.js";
import type { HookPoint } from "./catalog.js";

/**
 * A security-relevant value pulled verbatim out of an event (spec §1.6), e.g. a URL, a command or a
 * package.
 *
 * - `type`: one of {@link ARTIFACT_TYPES}.
 * - `value`: the raw value as the agent or tool expressed it (no decoding, no path resolution);
 *   `content` is cut at 65 536 UTF-16 code units.
 * - `context?`: how it was found or used (`piped_to_shell`, …; for `package` the registry id, e.g.
 *   `npm` or `pypi:exec`).
 * - `source_field?`: dotted path of the event field it came from, e.g. `tool_input.command` (always
 *   set by this package).
 */
export type Artifact = z.infer<typeof S.ArtifactSchema>;
/**
 * One hook or processor in a Modification Tracking chain (spec §1.3 ModifierEntry).
 *
 * - `modifier_id`: id of the hook or processor.
 * - `config_source`: where it was configured ({@link ConfigSource}).
 * - `modified`: whether this modifier changed the content.
 */
export type ModifierEntry = z.infer<typeof S.ModifierEntrySchema>;
/**
 * `inject_context` directive (spec §1.8): content a PostCompact `allow` asks the host to add to the
 * compacted context.
 *
 * - `position`: `prepend` / `append` to the conversation context, or `system` for a separate
 *   system-level message.
 * - `content`: the text to add before later LLM requests.
 */
export type InjectContextDirective = z.infer<typeof S.InjectContextDirectiveSchema>;
/**
 * `x-ahp` directive (spec §1.8, §5.5): the original AHP decision, carried on verdicts the bridge
 * produces; hosts that do not understand it ignore it.
 *
 * - `request_id`: JSON-RPC id of the AHP request.
 * - `event_type`: AHP event type the hook was sent as (e.g. `pre_action`).
 * - `decision`: the AHP decision result, verbatim.
 */
export type XAhpDirective = z.infer<typeof S.XAhpDirectiveSchema>;
/**
 * Hook-specific directives of a verdict (spec §1.8); a directive on a hook or decision it does not
 * apply to is ignored.
 *
 * - `inject_context?`: PostCompact `allow`: content to add to the compacted context
 *   ({@link InjectContextDirective}).
 * - `permitted_tools?`: PreSubAgentSpawn `allow`: canonical tool names the sub-agent may use; other
 *   tool calls are denied locally (spec §2.5). A non-canonical entry invalidates the directive, not
 *   the verdict.
 * - `strip_hooks?`: PreSkillLoad: `true` keeps the skill's text but discards the hooks it declares.
 * - `x-ahp?`: the original AHP decision ({@link XAhpDirective}).
 */
export type Directives = z.infer<typeof S.DirectivesSchema>;
/**
 * An engine's answer to a blocking hook event (spec §1.7), as validated (output of
 * {@link VerdictSchema}).
 *
 * - `decision`: `allow` proceeds, `deny` blocks and must surface `reasons`, `ask` prompts the user
 *   (`deny` where the host cannot prompt).
 * - `category`: threat category (open: `tool_execution`, `network_egress`, `supply_chain`, …;
 *   synthetic verdicts use `engine_failure`, `engine_timeout`, `none`).
 * - `severity`: `info`, `warning` or `critical`.
 * - `confidence?`: 0.0–1.0.
 * - `source`: evaluation method or responder (open: `heuristic`, `pattern_match`, `ahp:<harness>`,
 *   `failure_policy`, …).
 * - `artifacts?`: key artifact values behind the verdict.
 * - `matched_rule_id?`: the matched detection rule.
 * - `reasons?`: user-displayable explanations.
 * - `directives?`: hook-specific directives ({@link Directives}).
 * - `suggested_resolutions?`: only for `ask`: extra choices (`allow_always`, `allow_similar`,
 *   `deny_always`, `deny_similar`).
 */
export type Verdict = z.infer<typeof S.VerdictSchema>;
/** Input type of {@link VerdictSchema}: what an engine may return before parsing (same fields as {@link Verdict}). */
export type VerdictInput = z.input<typeof S.VerdictSchema>;
/**
 * Version check request, host → engine, sent before the first hook event (spec §1.1).
 *
 * - `aarts_version`: AARTS major version the host implements (`"0"` or `"1"`; compared by the text
 *   before the first `.`).
 */
export type VersionCheckRequest = z.infer<typeof S.VersionCheckRequestSchema>;
/**
 * Version check response, engine → host (spec §1.1).
 *
 * - `compatible`: whether the engine supports that version; `false` means the host must not send it
 *   hook events.
 * - `engine_id`: engine identifier (the bridge answers `ahp:<harness name>`).
 * - `engine_version?`: engine software version.
 */
export type VersionCheckResponse = z.infer<typeof S.VersionCheckResponseSchema>;

/**
 * Fields every hook event carries (spec §1.2).
 *
 * - `hook_point`: one of the 20 {@link HookPoint}s.
 * - `session_id`: unique id of the agent session.
 * - `timestamp`: when the host generated the event, RFC 3339 (ours: UTC with milliseconds).
 * - `host_id`: host platform id, lowercase kebab-case (e.g. `claude-code`).
 * - `host_version?`: host platform version.
 * - `aarts_version`: AARTS version of the event, e.g. `"0.1"` (recorded verbatim, must not be
 *   empty).
 * - `locale?`: the user's language (BCP 47); engines should answer human-readable text in it.
 */
export type Envelope = z.infer<typeof S.EnvelopeSchema>;
/**
 * Turn extension (spec §1.3).
 *
 * - `turn_id`: id of the conversation turn within the session.
 */
export type TurnExtension = z.infer<typeof S.TurnExtensionSchema>;
/**
 * Tool Context extension (spec §1.3).
 *
 * - `tool_name`: canonical name ({@link CanonicalToolName}); `other` when no category fits.
 * - `tool_name_native`: the host's own tool name; required when `tool_name` is `other` (our adapters
 *   always set it).
 * - `tool_input`: the complete input the agent gave the tool, verbatim.
 * - `artifacts`: {@link Artifact}s extracted from the input (spec §3.5); may be empty.
 */
export type ToolContextExtension = z.infer<typeof S.ToolContextExtensionSchema>;
/**
 * Trust Source extension (spec §1.3): origin of a component crossing a trust boundary.
 *
 * - `source`: `managed`, `project`, `user` or `marketplace`.
 * - `source_id?`: the specific origin (plugin name, file path, server URI, hook id).
 */
export type TrustSourceExtension = z.infer<typeof S.TrustSourceExtensionSchema>;
/**
 * Modification Tracking extension (spec §1.3); `deny` on such a hook rejects the modification (the
 * original is used), not the action.
 *
 * - `original_value`: content before modification (string or object).
 * - `modified_value`: content after modification.
 * - `was_modified`: whether anything changed.
 * - `modifier_chain`: the {@link ModifierEntry}s that handled the content, in order.
 */
export type ModificationExtension = z.infer<typeof S.ModificationExtensionSchema>;
/**
 * Provenance extension (spec §1.3): causal context of a PreToolUse. Optional in the schema; Standard
 * level requires the booleans and the chain (our adapters always set them).
 *
 * - `source_prompt_modified?`: whether hooks altered the user's input before the agent saw it.
 * - `active_skill?`: skill or agent definition active in the context.
 * - `is_sub_agent?`: the event comes from a sub-agent.
 * - `parent_session_id?`: the parent session, when a sub-agent.
 * - `input_modifier_chain?`: hooks that modified this turn's user input.
 */
export type ProvenanceExtension = z.infer<typeof S.ProvenanceExtensionSchema>;

/**
 * Hook 1 `SessionStart` (spec §1.5), Recommended, 10 s: the session is being set up; `deny` aborts
 * the start-up. {@link Envelope} plus:
 *
 * - `plugins?`: installed plugins (`name`, `version?`, `source?`, `file_hashes?`).
 * - `configuration_sources?`: loaded configuration files (`path`, `origin`: `user` / `project` /
 *   `managed`).
 * - `environment?`: `os?`, `shell?`, `working_directory?` (secrets redacted).
 */
export type SessionStartEvent = z.infer<typeof S.SessionStartEventSchema>;
/**
 * Hook 2 `SessionEnd` (spec §1.5), Notification: the session is ending (audit only).
 * {@link Envelope} plus:
 *
 * - `summary?`: `tool_calls`, `verdicts` (`allow` / `deny` / `ask` counts), `denied_actions`.
 */
export type SessionEndEvent = z.infer<typeof S.SessionEndEventSchema>;
/**
 * Hook 3 `PrePluginLoad` (spec §1.5), Required, 10 s: a plugin or extension is about to load; `deny`
 * keeps it unloaded. {@link Envelope}, {@link TrustSourceExtension} plus:
 *
 * - `plugin_id`: plugin identifier (name, version).
 * - `file_paths`: files making up the plugin.
 * - `file_hashes?`: SHA-256 of those files.
 * - `declared_hooks`: hooks it registers (`event`, `matcher?`, `command?`, `type?`).
 * - `declared_permissions?`: permissions it requests (tool access, network, filesystem scopes).
 */
export type PrePluginLoadEvent = z.infer<typeof S.PrePluginLoadEventSchema>;
/**
 * Hook 4 `PreSkillLoad` (spec §1.5), Required, 10 s: a skill or agent-definition file is about to
 * load; `deny` keeps it unloaded; honours `strip_hooks`. {@link Envelope},
 * {@link TrustSourceExtension} plus:
 *
 * - `file_path`: the skill or agent file.
 * - `file_hash?`: its SHA-256.
 * - `frontmatter`: its parsed structured metadata.
 * - `declared_hooks`: hooks defined in that metadata.
 * - `body_content?`: the instruction or knowledge body.
 * - `load_context`: who triggered the load: `main_session`, `sub_agent` or `skill_invocation`.
 */
export type PreSkillLoadEvent = z.infer<typeof S.PreSkillLoadEventSchema>;
/**
 * Hook 5 `PreMCPConnect` (spec §1.5), Required, 10 s: a connection to an MCP server is about to
 * open; `deny` prevents it. {@link Envelope}, {@link TrustSourceExtension} plus:
 *
 * - `server_id`: server name or URI.
 * - `transport`: `stdio`, `sse` or `streamable_http`.
 * - `server_uri?`: network address (remote servers).
 * - `server_command?`: launch command (stdio servers).
 * - `declared_tools?`, `declared_resources?`: what the server advertises.
 */
export type PreMCPConnectEvent = z.infer<typeof S.PreMCPConnectEventSchema>;
/**
 * Hook 6 `PreUserInput` (spec §1.5), Required, 5 s: user input as received, before any processing;
 * `deny` discards it. {@link Envelope}, {@link TurnExtension} plus:
 *
 * - `raw_input`: the unmodified user text.
 * - `input_source?`: open: `keyboard`, `file`, `api`, `automated`.
 * - `attached_files?`: files or images attached to the input.
 */
export type PreUserInputEvent = z.infer<typeof S.PreUserInputEventSchema>;
/**
 * Hook 7 `PostInputProcessing` (spec §1.5), Required, 5 s: the input after processing hooks, before
 * prompt assembly; `deny` uses the raw input. {@link Envelope}, {@link TurnExtension},
 * {@link ModificationExtension} (raw input as `original_value`, processed as `modified_value`); no own
 * fields.
 */
export type PostInputProcessingEvent = z.infer<typeof S.PostInputProcessingEventSchema>;
/**
 * Hook 8 `PreLLMRequest` (spec §1.5), Required, 5 s: the assembled prompt about to go to the model;
 * `deny` does not send it. {@link Envelope}, {@link TurnExtension} plus:
 *
 * - `full_prompt`: the complete prompt (string or message array).
 * - `system_prompt?`: the system prompt alone.
 * - `custom_instructions?`: instructions with provenance (`source`: `user` / `project` / `managed`,
 *   `path?`, `content`).
 * - `context_injections?`: injected content (`source`, `content`).
 * - `user_input?`: the user input as it appears in the prompt.
 * - `model_id?`: target model.
 * - `token_count?`: estimated prompt tokens.
 */
export type PreLLMRequestEvent = z.infer<typeof S.PreLLMRequestEventSchema>;
/**
 * Hook 9 `PostLLMResponse` (spec §1.5), Required, 5 s: the model's response before the host parses
 * or shows it; `deny` discards it. {@link Envelope}, {@link TurnExtension} plus:
 *
 * - `response_text`: full response text.
 * - `planned_actions?`: requested tool calls (`tool_name` canonical, `tool_name_native`,
 *   `tool_input`).
 * - `stop_reason?`: open: `end_turn`, `tool_use`, `max_tokens`.
 */
export type PostLLMResponseEvent = z.infer<typeof S.PostLLMResponseEventSchema>;
/**
 * Hook 10 `PreToolUse` (spec §1.5), Required, 5 s: a tool call about to execute, the primary
 * enforcement point; `deny` skips the call. {@link Envelope}, {@link TurnExtension},
 * {@link ToolContextExtension}, {@link ProvenanceExtension}; no own fields.
 */
export type PreToolUseEvent = z.infer<typeof S.PreToolUseEventSchema>;
/**
 * Hook 11 `PostToolUse` (spec §1.5), Recommended, 5 s: a tool's result before it goes back to the
 * model; `deny` redacts the result. {@link Envelope}, {@link TurnExtension},
 * {@link ToolContextExtension} plus:
 *
 * - `tool_result`: the tool's output (string or object).
 * - `exit_code?`: process exit code, for command execution.
 * - `execution_duration_ms?`: execution time in milliseconds.
 * - `side_effects?`: observed side effects (files modified, connections, processes).
 */
export type PostToolUseEvent = z.infer<typeof S.PostToolUseEventSchema>;
/**
 * Hook 12 `PreToolInputModification` (spec §1.5), Required, 5 s: a hook is about to change a tool's
 * input; `deny` keeps the original input. {@link Envelope}, {@link TrustSourceExtension},
 * {@link ModificationExtension} plus:
 *
 * - `tool_name`: canonical name of the tool (a plain field: this hook has no Turn and no Tool
 *   extension).
 */
export type PreToolInputModificationEvent = z.infer<typeof S.PreToolInputModificationEventSchema>;
/**
 * Hook 13 `PreSubAgentSpawn` (spec §1.5), Required, 10 s: a sub-agent is about to be created; `deny`
 * prevents it; honours `permitted_tools`. {@link Envelope} plus:
 *
 * - `sub_agent_id`: proposed session id of the sub-agent.
 * - `sub_agent_type?`: open: `explore`, `code`, `shell`, `general`.
 * - `delegated_task`: the task or prompt being delegated.
 * - `skill_files?`: skill or agent-definition files the child will load.
 * - `declared_hooks?`: hooks those skills would activate.
 * - `requested_tools?`: tools the sub-agent will get.
 * - `parent_permissions?`: the parent's permission scope (for escalation detection).
 */
export type PreSubAgentSpawnEvent = z.infer<typeof S.PreSubAgentSpawnEventSchema>;
/**
 * Hook 14 `PostSubAgentResult` (spec §1.5), Recommended, 5 s: a sub-agent's result before it reaches
 * the parent; `deny` withholds it. {@link Envelope} plus:
 *
 * - `sub_agent_id`: the sub-agent's session id.
 * - `result`: output returned to the parent (string or object).
 * - `tool_calls_made?`, `verdicts_issued?`: summaries of its session.
 */
export type PostSubAgentResultEvent = z.infer<typeof S.PostSubAgentResultEventSchema>;
/**
 * Hook 15 `PreOutputDeliver` (spec §1.5), Recommended, 5 s: the turn's final response before it is
 * shown; `deny` hides it. {@link Envelope}, {@link TurnExtension} plus:
 *
 * - `output_text`: text to be delivered.
 * - `actions_taken?`: tool calls executed this turn.
 */
export type PreOutputDeliverEvent = z.infer<typeof S.PreOutputDeliverEventSchema>;
/**
 * Hook 16 `PreMemoryWrite` (spec §1.5), Required, 5 s: a write to long-term memory; `deny` writes
 * nothing. {@link Envelope} plus:
 *
 * - `memory_store`: target store id.
 * - `content`: what is written (string or object).
 * - `memory_type?`: open: `fact`, `instruction`, `preference`, `conversation`, `code_snippet`.
 * - `write_source?`: open: `agent_decision`, `user_request`, `automatic`.
 */
export type PreMemoryWriteEvent = z.infer<typeof S.PreMemoryWriteEventSchema>;
/**
 * Hook 17 `PreMemoryRead` (spec §1.5), Recommended, 5 s: persistent memory about to enter the
 * context; `deny` does not load it. {@link Envelope} plus:
 *
 * - `memory_store`: source store id.
 * - `query?`: retrieval query.
 * - `retrieved_content`: content about to enter the context (string or object).
 */
export type PreMemoryReadEvent = z.infer<typeof S.PreMemoryReadEventSchema>;
/**
 * Hook 18 `PreCompact` (spec §1.5), Required, 5 s: the context is about to be compacted; `deny`
 * skips the compaction. {@link Envelope}, {@link TurnExtension} plus:
 *
 * - `context_before`: the full context (string or array).
 * - `token_count_before?`: tokens before.
 * - `compaction_reason?`: open: `token_limit`, `user_triggered`, `automatic`, `policy`.
 * - `compaction_strategy?`: open: `summarization`, `truncation`, `selective`, `hybrid`.
 */
export type PreCompactEvent = z.infer<typeof S.PreCompactEventSchema>;
/**
 * Hook 19 `PostCompact` (spec §1.5), Required, 5 s: the compacted context before use; `deny`
 * restores the old context; honours `inject_context`. {@link Envelope}, {@link TurnExtension},
 * {@link ModificationExtension} (old context as `original_value`, compacted as `modified_value`)
 * plus:
 *
 * - `token_count_after?`: tokens after.
 * - `compaction_strategy_used?`: the method actually used.
 */
export type PostCompactEvent = z.infer<typeof S.PostCompactEventSchema>;
/**
 * Hook 20 `PostAskResolution` (spec §1.5, §2.4), Notification: the user's answer to an `ask`, so the
 * engine can learn from it. {@link Envelope}, {@link TurnExtension} (the original event's turn)
 * plus:
 *
 * - `original_hook_point`: the hook whose verdict was `ask`.
 * - `original_verdict`: the merged verdict shown to the user.
 * - `resolution`: the raw choice ({@link Resolution}); the host never interprets `*_always` /
 *   `*_similar`.
 */
export type PostAskResolutionEvent = z.infer<typeof S.PostAskResolutionEventSchema>;

/** Any AARTS hook event. */
export type AartsEvent = z.infer<typeof S.AartsEventSchema>;
/** The event of one hook point. */
export type AartsEventOf<H extends HookPoint> = Extract<AartsEvent, { hook_point: H }>;
