/**
 * Promise wrappers over `node:fs` callbacks. `node:fs/promises` costs several milliseconds to
 * load, which a hook command spawned for every tool call would pay each time; `node:fs` is
 * already loaded when Node starts.
 */
import * as fs from "node:fs";

export const readText = (path: string): Promise<string> =>
  new Promise((resolve, reject) => fs.readFile(path, "utf8", (e, data) => (e ? reject(e) : resolve(data))));
export const writeText = (path: string, data: string, mode?: number): Promise<void> =>
  new Promise((resolve, reject) => fs.writeFile(path, data, { mode: mode ?? 0o666 }, (e) => (e ? reject(e) : resolve())));
export const mkdirp = (path: string, mode?: number): Promise<void> =>
  new Promise((resolve, reject) =>
    fs.mkdir(path, { recursive: true, ...(mode === undefined ? {} : { mode }) }, (e) => (e ? reject(e) : resolve())),
  );
