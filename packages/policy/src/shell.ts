/**
 * The policy's shell analysis is `@ahp/shell`, shared with the AARTS adapter: one lexer and
 * parser, one set of tests. Re-exported here so `@ahp/policy`'s public API keeps its names.
 */
export {
  parseShell,
  shellWords,
  normalizeShellPath,
  toolCalls,
  OPAQUE_REASONS,
  type SimpleCommand,
  type Redirect,
  type ParseShellOptions,
  type OpaqueReason,
  type ToolCall,
} from "@ahp/shell";
