export { type AnthropicStub, type Step, startAnthropicStub, type ToolResult } from "./anthropic-stub.js";
export { type ClaudeRun, claudeEnv, type RunClaudeOptions, runClaude } from "./claude.js";
export { cacheDir, claudeCliPath, ensureHost, HOSTS, type HostKey, type InstalledHost } from "./hosts.js";
