/**
 * Promise wrappers over `node:fs` callbacks. `node:fs/promises` costs several milliseconds to
 * load, which a hook command spawned for every tool call would pay each time; `node:fs` is
 * already loaded when Node starts. Named imports: a bundle copies every property of a namespace
 * import (`import * as fs`) at start-up.
 */
import { mkdir, readFile, writeFile } from "node:fs";

export const readText = (path: string): Promise<string> =>
  new Promise((resolve, reject) => readFile(path, "utf8", (e, data) => (e ? reject(e) : resolve(data))));
export const writeText = (path: string, data: string, mode?: number): Promise<void> =>
  new Promise((resolve, reject) => writeFile(path, data, { mode: mode ?? 0o666 }, (e) => (e ? reject(e) : resolve())));
export const mkdirp = (path: string, mode?: number): Promise<void> =>
  new Promise((resolve, reject) =>
    mkdir(path, { recursive: true, ...(mode === undefined ? {} : { mode }) }, (e) => (e ? reject(e) : resolve())),
  );
