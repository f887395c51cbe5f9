export { AuditError, type AuditErrorCode } from "./errors.js";
export { canonicalJson } from "./canonical.js";
export {
  AuditKey,
  AUDIT_KEY_ENV,
  MIN_AUDIT_KEY_BYTES,
  loadAuditKey,
  toAuditKey,
  type AuditKeyInput,
  type LoadAuditKeyOptions,
} from "./key.js";
export {
  AUDIT_FORMAT_VERSION,
  checkRecordMac,
  digestJson,
  formatAuditHead,
  genesisHash,
  parseAuditHead,
  parseRecord,
  recordHash,
  recordLine,
  sealRecord,
  sha256Hex,
  type AuditConnectionInfo,
  type AuditEntry,
  type AuditHead,
  type AuditRecord,
  type AuditRecordKind,
  type TornLine,
} from "./record.js";
export { MemoryAuditSink, type AuditSink, type AuditSinkState } from "./sink.js";
export { FileAuditSink, auditLogFiles, type FileAuditSinkOptions, type FsyncPolicy } from "./file-sink.js";
export { AuditLog, openAuditLog, type AuditLogOptions } from "./log.js";
export { withAudit, auditMiddleware, type AuditRecorder, type WithAuditOptions } from "./with-audit.js";
export {
  verifyAuditLog,
  formatVerifyReport,
  type AuditBreak,
  type AuditBreakKind,
  type AuditVerifyReport,
  type VerifyAuditOptions,
} from "./verify.js";
export {
  auditHead,
  auditStats,
  formatAuditRecord,
  formatAuditStats,
  tailAuditLog,
  type AuditStats,
  type AuditTailEntry,
  type LatencySummary,
  type TailFollowOptions,
} from "./inspect.js";
