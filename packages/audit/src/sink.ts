/** Where sealed records go. The file sink is the default; the memory sink serves tests and embedding. */
import { createHash } from "node:crypto";
import { AuditError } from "./errors.js";
import { parseRecord, recordLine, type AuditRecord, type TornLine } from "./record.js";

/** What a sink already holds when a log is (re)opened. */
export interface AuditSinkState {
  /** The last complete record stored, whose chain the log continues. */
  last?: AuditRecord;
  /** Partial lines a dead writer left after `last` (already terminated, outside the chain). */
  torn?: TornLine[];
}

/** Something a sink survived and the log should put on record (an `incident` record) and report. */
export interface AuditSinkIncident {
  /** `file_replaced`: the live file was deleted while open; writing continues in a new file at the same path. */
  kind: "file_replaced";
  message: string;
  data: Record<string, unknown>;
}

/**
 * A destination for sealed records. Appends arrive one at a time, in chain order (the log
 * serializes them); a sink must store each record completely or fail (and then store nothing).
 */
export interface AuditSink {
  append(record: AuditRecord): Promise<void>;
  close(): Promise<void>;
  /** Optional group commit: all records, in order, all or nothing. */
  appendBatch?(records: readonly AuditRecord[]): Promise<void>;
  /**
   * Optional: {@link appendBatch} that may finish synchronously: returns `undefined` once the
   * records are stored (and throws when they cannot be), or a promise when it has to wait. The
   * log prefers it: a group stored at once releases its decisions without a promise round trip.
   */
  appendBatchNow?(records: readonly AuditRecord[]): Promise<void> | undefined;
  /** Optional: reports what is stored already, so that reopening continues the chain. */
  open?(): Promise<AuditSinkState>;
  /** Optional: makes everything stored so far durable (called before a checkpoint names the head). */
  sync?(): Promise<void>;
  /** Optional: set by the log to learn about incidents the sink survived. */
  onincident?: (incident: AuditSinkIncident) => void;
  /**
   * Optional: set by the log. A sink that deletes records for good (rotation beyond `maxFiles`)
   * calls it first with the last record it is about to delete, and deletes only once it
   * resolved (the log writes its signed rotation manifest there); when it rejects, nothing is
   * deleted.
   */
  onremove?: (last: AuditRecord) => Promise<void>;
}

/** Keeps the lines in memory, exactly as the file sink would write them. */
export class MemoryAuditSink implements AuditSink {
  readonly #lines: string[] = [];
  #closed = false;

  /** Starts from existing text (e.g. to test reopening), which may end in a torn line. */
  constructor(initial = "") {
    if (initial.length > 0) {
      const parts = initial.split("\n");
      const tail = parts.pop() ?? "";
      this.#lines.push(...parts.map((p) => `${p}\n`));
      if (tail.length > 0) this.#lines.push(tail);
    }
  }

  async open(): Promise<AuditSinkState> {
    this.#closed = false;
    const torn: TornLine[] = [];
    for (let i = this.#lines.length - 1; i >= 0; i--) {
      const line = this.#lines[i]!;
      const text = line.endsWith("\n") ? line.slice(0, -1) : line;
      const parsed = parseRecord(text);
      if (parsed.ok) {
        if (!line.endsWith("\n")) this.#lines[i] = `${line}\n`;
        return torn.length > 0 ? { last: parsed.record, torn: torn.reverse() } : { last: parsed.record };
      }
      if (!line.endsWith("\n")) this.#lines[i] = `${line}\n`;
      torn.push({ bytes: Buffer.byteLength(text), sha256: createHash("sha256").update(text, "utf8").digest("hex") });
    }
    return torn.length > 0 ? { torn: torn.reverse() } : {};
  }

  async append(record: AuditRecord): Promise<void> {
    if (this.#closed) throw new AuditError("CLOSED", "audit sink is closed");
    this.#lines.push(recordLine(record));
  }

  async appendBatch(records: readonly AuditRecord[]): Promise<void> {
    if (this.#closed) throw new AuditError("CLOSED", "audit sink is closed");
    this.#lines.push(...records.map(recordLine));
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** The stored text (what a file would contain). */
  text(): string {
    return this.#lines.join("");
  }

  /** The parsed records (lines that are not records are skipped). */
  records(): AuditRecord[] {
    const out: AuditRecord[] = [];
    for (const line of this.#lines) {
      const parsed = parseRecord(line.replace(/\n$/, ""));
      if (parsed.ok) out.push(parsed.record);
    }
    return out;
  }
}
