/** Terminal styling: colour only when the output is a TTY that wants it (NO_COLOR / FORCE_COLOR honoured). */
export interface Style {
  bold: (s: string) => string;
  dim: (s: string) => string;
  green: (s: string) => string;
  red: (s: string) => string;
  yellow: (s: string) => string;
  blue: (s: string) => string;
  magenta: (s: string) => string;
  cyan: (s: string) => string;
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;

export function createStyle(out: NodeJS.WritableStream, env: NodeJS.ProcessEnv, force?: boolean): Style {
  const tty = (out as { isTTY?: boolean }).isTTY === true;
  const enabled =
    force ?? (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" ? true : env.NO_COLOR === undefined && tty && env.TERM !== "dumb");
  const id = (s: string) => s;
  return enabled
    ? {
        bold: wrap(1, 22),
        dim: wrap(2, 22),
        green: wrap(32, 39),
        red: wrap(31, 39),
        yellow: wrap(33, 39),
        blue: wrap(34, 39),
        magenta: wrap(35, 39),
        cyan: wrap(36, 39),
      }
    : { bold: id, dim: id, green: id, red: id, yellow: id, blue: id, magenta: id, cyan: id };
}

/** Visible width of a string (ANSI escapes removed). */
// eslint-disable-next-line no-control-regex -- ANSI colour sequences are what this strips
export const visibleLength = (s: string): number => s.replace(/\u001b\[[0-9;]*m/g, "").length;
export const pad = (s: string, width: number): string => s + " ".repeat(Math.max(0, width - visibleLength(s)));
