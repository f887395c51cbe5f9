/**
 * Hot reload: watches a policy file and applies every valid new version. The directory is
 * watched (not the file), so editors that save by writing a temporary file and renaming it
 * over the original are seen; rapid writes are debounced; when `fs.watch` is not available the
 * file is polled with `fs.watchFile`. An invalid new version is reported through `onError`
 * (a PolicyError naming file, line, column and rule) and the policy in force stays.
 */
import { watch, watchFile, unwatchFile, type FSWatcher, type Stats } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { loadPolicy, type CompiledPolicy, type LoadPolicyOptions } from "./load.js";

/** What the watcher swaps new versions into: `PolicyEngine` is one (this module does not depend on it). */
export interface PolicySwapTarget {
  swap(policy: CompiledPolicy): CompiledPolicy;
}

/**
 * Options of {@link watchPolicyFile} and `PolicyEngine.watch`: how each new version is loaded (format,
 * workspace root, match length), where it goes (`engine`, `onReload`), where failures go (`onError`;
 * `PolicyEngine.watch` defaults it to the engine's `onerror`), and how the file is watched. A version that
 * cannot be read or is invalid never replaces the one in force.
 */
export interface WatchPolicyOptions extends Omit<LoadPolicyOptions, "file"> {
  /** Called with each new policy once it is in force. */
  onReload?: (policy: CompiledPolicy) => void;
  /** Called when a new version cannot be read or is invalid (the old policy stays in force). */
  onError?: ((error: Error) => void) | undefined;
  /** The engine to swap new versions into (a `PolicyEngine`, or anything that can swap a compiled policy in). */
  engine?: PolicySwapTarget;
  /** Quiet time after the last change before the file is read. Default 100 ms. */
  debounceMs?: number;
  /** Poll with `fs.watchFile` instead of `fs.watch` (network filesystems). Default false; also the fallback. */
  poll?: boolean;
  /** Poll interval. Default 500 ms. */
  pollIntervalMs?: number;
  /** Keep the process alive while watching. Default false. */
  persistent?: boolean;
}

/**
 * A running watch of a policy file, from {@link watchPolicyFile} or `PolicyEngine.watch`: it applies
 * every valid new version until `close()`. It does not keep the process alive unless `persistent`
 * was set, and switches from `fs.watch` to polling by itself when the directory watcher fails.
 */
export interface PolicyWatcher {
  /** Resolves once watching has started and the current content is known. */
  readonly ready: Promise<void>;
  /** `watch` (directory events) or `poll`. */
  readonly mode: "watch" | "poll";
  /** Reads the file now (as a change would) and resolves when done. */
  check(): Promise<void>;
  /** Stops watching; resolves once an in-flight reload has finished. */
  close(): Promise<void>;
}

/** Watches `file` and reloads it on change. See {@link WatchPolicyOptions}. */
export function watchPolicyFile(file: string, options: WatchPolicyOptions = {}): PolicyWatcher {
  const path = resolve(file);
  const dir = dirname(path);
  const name = basename(path);
  const debounceMs = options.debounceMs ?? 100;
  const persistent = options.persistent ?? false;
  let lastText: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let watcher: FSWatcher | undefined;
  let polling = false;

  const report = (error: unknown) => {
    if (closed) return;
    options.onError?.(error instanceof Error ? error : new Error(String(error)));
  };

  const apply = async (): Promise<void> => {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      report(
        new Error(`policy file ${file} could not be read (${code ?? (error as Error).message}); the current policy stays in force`, {
          cause: error,
        }),
      );
      return;
    }
    if (closed || text === lastText) return;
    const { file: _ignored, ...loadOptions } = options as WatchPolicyOptions & { file?: string };
    let next: CompiledPolicy;
    try {
      next = loadPolicy(text, { ...loadOptions, file });
      if (options.engine !== undefined) next = options.engine.swap(next);
    } catch (error) {
      lastText = text; // do not report the same broken text again
      report(error);
      return;
    }
    lastText = text;
    try {
      options.onReload?.(next);
    } catch (error) {
      report(error);
    }
  };

  const run = (): Promise<void> => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await apply();
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const schedule = () => {
    if (closed) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void run();
    }, debounceMs);
    if (!persistent) timer.unref();
  };

  const onPoll = (curr: Stats, prev: Stats) => {
    if (curr.mtimeMs !== prev.mtimeMs || curr.size !== prev.size || curr.ino !== prev.ino) schedule();
  };
  const startPolling = () => {
    if (polling || closed) return;
    polling = true;
    watchFile(path, { interval: options.pollIntervalMs ?? 500, persistent }, onPoll);
  };

  let mode: "watch" | "poll" = "poll";
  if (options.poll) startPolling();
  else {
    try {
      watcher = watch(dir, { persistent }, (_event, changed) => {
        // Some platforms do not report the name: then any change in the directory is checked.
        if (changed === null || changed === undefined || String(changed) === name) schedule();
      });
      watcher.on("error", (error) => {
        report(error);
        watcher?.close();
        watcher = undefined;
        startPolling();
      });
      mode = "watch";
    } catch {
      startPolling();
    }
  }

  const ready = readFile(path, "utf8").then(
    (text) => {
      lastText ??= text;
    },
    () => undefined,
  );

  return {
    ready,
    get mode() {
      return watcher === undefined ? "poll" : mode;
    },
    async check() {
      await ready;
      await run();
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      watcher?.close();
      watcher = undefined;
      if (polling) unwatchFile(path, onPoll);
      await running;
    },
  };
}
