export {
  lex,
  shellWords,
  type Redirect,
  type Substitution,
  type Token,
  type WordToken,
  type OperatorToken,
  type RedirectToken,
} from "./lex.js";
export { parseShell, pipesInto, OPAQUE_REASONS, type OpaqueReason, type ParseShellOptions, type SimpleCommand } from "./parse.js";
export { tokenizeShell, type ShellSegment, type ShellSubstitution, type TokenizedShell } from "./segments.js";
export { normalizeShellPath, resolveShellPath, changeDirectory, type WorkingDirectory } from "./paths.js";
export { programName, stripWrappers, unwrap, splitOptions, commandStart, type Unwrapped, type SplitOptions } from "./words.js";
export { callsDangerousPrimitive, codeWrites, type CodeLanguage } from "./inline-code.js";
export {
  toolCalls,
  shellCommands,
  quoteArg,
  isShellToolName,
  SHELL_TOOL_NAMES,
  COMMAND_KEYS,
  type ToolCall,
  type ShellCommandField,
} from "./tool-call.js";
export {
  fileToolWrites,
  isFileWriteToolName,
  FILE_WRITE_TOOL_NAMES,
  CODE_TOOL_NAMES,
  codeToolLanguage,
  codeCommands,
  patchPaths,
} from "./file-tools.js";
export {
  runsDownload,
  downloadedFiles,
  downloadsOf,
  runsOneOfFiles,
  mayRunFile,
  fileBaseName,
  DOWNLOADERS,
  overwrittenFiles,
  fileOrigins,
  copiedFiles,
  FILE_COPIERS,
  type FileOrigins,
} from "./staged.js";
export { SHELLS, WRAPPERS, INTERPRETERS, VALUE_OPTIONS, type WrapperSpec, type InterpreterSpec } from "./tables.js";
