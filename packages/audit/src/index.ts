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
  type AuditWriterInfo,
  type TornLine,
} from "./record.js";
export { MemoryAuditSink, type AuditSink, type AuditSinkIncident, type AuditSinkState } from "./sink.js";
export { FileAuditSink, auditLogFiles, type FileAuditSinkOptions, type FsyncPolicy } from "./file-sink.js";
export {
  AUDIT_SYNC_MODES,
  AuditLog,
  DEFAULT_CHECKPOINT_INTERVAL_MS,
  type AuditIncident,
  type AuditLogOptions,
  type AuditLogStats,
  type AuditSyncMode,
} from "./log.js";
export { openAuditLog } from "./open.js";
export { DEFAULT_ANCHOR_TIMEOUT_MS, readAuditAnchor, toAuditAnchor, type AuditAnchor } from "./anchor.js";
export {
  ROTATION_SUFFIX,
  checkRotationManifestMac,
  parseRotationManifest,
  readRotationManifest,
  rotationPathFor,
  sealRotationManifest,
  writeRotationManifest,
  type AuditRotationManifest,
} from "./manifest.js";
export {
  CHECKPOINT_SUFFIX,
  checkCheckpointMac,
  checkpointPathFor,
  parseCheckpoint,
  readCheckpoint,
  sealCheckpoint,
  writeCheckpoint,
  type AuditCheckpoint,
} from "./checkpoint.js";
export {
  withAudit,
  auditMiddleware,
  type AuditFailureMode,
  type AuditRecorder,
  type UnauditedCall,
  type WithAuditOptions,
} from "./with-audit.js";
export {
  verifyAuditLog,
  verifyAuditLogs,
  formatVerifyReport,
  formatVerifySummary,
  type AuditBreak,
  type AuditBreakKind,
  type AuditCheckpointFinding,
  type AuditLogsReport,
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
