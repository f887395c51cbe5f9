/**
 * The inspector page in a real browser for the real-host tests: Debian's chromium driven headless
 * by playwright-core (the inspector's own test dependency; it never downloads a browser), and the
 * part of its API these tests use.
 */
import { createRequire } from "node:module";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface Locator {
  waitFor(options?: { timeout?: number }): Promise<void>;
  locator(selector: string): Locator;
  filter(options: { hasText: string }): Locator;
  click(options?: { timeout?: number }): Promise<void>;
}
export interface Page {
  goto(url: string): Promise<unknown>;
  locator(selector: string): Locator;
  screenshot(options: { path: string; fullPage: boolean }): Promise<unknown>;
  context(): { close(): Promise<void> };
}
export interface Browser {
  newContext(options: { viewport: { width: number; height: number } }): Promise<{
    newPage(): Promise<Page>;
    setDefaultTimeout(ms: number): void;
    close(): Promise<void>;
  }>;
  close(): Promise<void>;
}

export const { chromium } = createRequire(new URL("../../../apps/inspector/package.json", import.meta.url))("playwright-core") as {
  chromium: { launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<Browser> };
};

/** Headless chromium (without its sandbox when run as root, which it refuses otherwise). */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
