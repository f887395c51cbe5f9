/**
 * The page's credential: the same bearer token as the Agent Host API. It arrives in the URL
 * (`?token=`, which the server needs to hand out the page at all, or `#token=`), is kept in this
 * tab's `sessionStorage` and removed from the address bar at once, so that it stays out of the
 * history, bookmarks and screenshots. The server sends `Referrer-Policy: no-referrer`. A reload
 * of this tab is handed out by the server's page cookie (HttpOnly, never readable here) and finds
 * the token again in `sessionStorage`; the cookie alone opens no API.
 */
const KEY = "ahp-inspector-token";

export function takeToken(): string | undefined {
  const url = new URL(location.href);
  const fromHash = new URLSearchParams(url.hash.slice(1)).get("token");
  const fromQuery = url.searchParams.get("token");
  const token = fromHash ?? fromQuery ?? undefined;
  if (token !== undefined && token !== "") {
    try {
      sessionStorage.setItem(KEY, token);
    } catch {
      // Storage can be disabled; the token then lives in memory for this page only.
    }
    url.searchParams.delete("token");
    // Only the token leaves the fragment: a `#session=` link still opens its session.
    const rest = new URLSearchParams(url.hash.slice(1));
    rest.delete("token");
    const hash = rest.toString();
    history.replaceState(null, "", url.pathname + url.search + (hash === "" ? "" : `#${hash}`));
    return token;
  }
  try {
    return sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export type Role = "viewer" | "approver" | "operator";
export interface WhoAmI {
  principal: string;
  role: Role;
}

/** The principal and role of the token, from the harness's `whoami.json` route (undefined when it has none). */
export async function whoAmI(token: string): Promise<WhoAmI | "unauthorized" | undefined> {
  try {
    const res = await fetch("whoami.json", { headers: { authorization: `Bearer ${token}` }, cache: "no-store" });
    if (res.status === 401) return "unauthorized";
    if (!res.ok) return undefined;
    const body = (await res.json()) as Partial<WhoAmI>;
    return typeof body.principal === "string" && typeof body.role === "string" ? (body as WhoAmI) : undefined;
  } catch {
    return undefined;
  }
}

/** Approving needs the approver or operator role; an unknown role shows the buttons and lets the host decide. */
export const canApprove = (role: Role | undefined): boolean => role !== "viewer";
