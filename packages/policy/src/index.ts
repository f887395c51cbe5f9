export {
  POLICY_SCHEMA_TYPES,
  POLICY_EVENT_TYPES,
  POLICY_DECISION_TAGS,
  PolicyFileSchema,
  PolicyRuleSchema,
  PolicyMatchSchema,
  PolicyActionSchema,
  PolicySettingsSchema,
  RateLimitSchema,
  FieldConditionSchema,
  NumberConditionSchema,
  SessionMatchSchema,
  ShellMatchSchema,
  PathMatchSchema,
  SecretsMatchSchema,
  type PolicyFile,
  type PolicyFileInput,
  type PolicyRule,
  type PolicyRuleInput,
  type PolicyMatch,
  type PolicyAction,
  type PolicyActionInput,
  type PolicySettings,
  type RateLimit,
  type FieldCondition,
  type NumberCondition,
  type SessionMatch,
  type ShellMatch,
  type PathMatch,
  type SecretsMatch,
} from "./schema.js";
export { PolicyError, formatPath, type PolicyIssue } from "./errors.js";
export {
  CompiledPolicy,
  compilePolicy,
  loadPolicy,
  loadPolicyFile,
  loadPolicyFileSync,
  parsePolicy,
  type LoadPolicyOptions,
  type PolicySource,
} from "./load.js";
export {
  PolicyEngine,
  type DecisionSource,
  type PolicyEngineOptions,
  type PolicyEvaluation,
  type PolicyMatchOutcome,
  type SharedFallback,
} from "./engine.js";
export { ShadowPolicy, decisionTag, type ShadowDisagreement } from "./shadow.js";
export { type RuleOrigin } from "./extends.js";
export {
  explainEvent,
  type ExplainOptions,
  type ExplainEventInput,
  type PolicyExplanation,
  type RuleExplanation,
  type ConditionExplanation,
  type EventAnalysis,
  type ShellLineExplanation,
} from "./explain.js";
export {
  POLICY_TEST_SCHEMA_TYPES,
  PolicyTestFileSchema,
  PolicyTestCaseSchema,
  PolicyTestExpectSchema,
  type PolicyTestFile,
  type PolicyTestCase,
  type PolicyTestExpect,
} from "./policy-test-schema.js";
export {
  caseEvent,
  formatPolicyTestFailure,
  parsePolicyTests,
  runPolicyTestFile,
  runPolicyTests,
  type ParsedPolicyTests,
  type PolicyTestCaseResult,
  type PolicyTestFileResult,
} from "./policy-test.js";
export { PolicyReplay, replayRecords, type ReplayChange, type ReplayOptions, type ReplayRecord, type ReplaySummary } from "./replay.js";
export { createPolicyHandler, composeHandlers, type PolicyHandlers } from "./handlers.js";
export { watchPolicyFile, type PolicyWatcher, type WatchPolicyOptions, type PolicySwapTarget } from "./watch.js";
export { DEFAULT_POLICY } from "./default-policy.js";
export { parseShell, shellWords, normalizeShellPath, type SimpleCommand, type Redirect, type ParseShellOptions } from "./shell.js";
export { compileGlobs, globSource } from "./glob.js";
export { applyMergePatch } from "./json.js";
export {
  DEFAULT_SHELL_FIELDS,
  DEFAULT_PATH_FIELDS,
  DEFAULT_ROOT_FIELDS,
  TOOL_NAME_FIELDS,
  DEFAULT_MAX_MATCH_LENGTH,
  resolveWorkspacePath,
  type SessionCounters,
} from "./compile.js";
export { DEFAULT_STATE_LIMITS, MAX_SESSION_DOWNLOADS } from "./state.js";
export {
  PolicyStateError,
  type PolicyStateStore,
  type StateStep,
  type StateStepResult,
  type BucketTake,
  type CounterDelta,
  type SessionSnapshot,
} from "./state-store.js";
export { MemoryStateStore, type MemoryStateStoreOptions } from "./memory-store.js";
