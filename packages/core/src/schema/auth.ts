/** Authentication configuration objects (spec §10). Configuration format, not sent on the wire as such. */
import { z } from "zod";
import { opt } from "./common.js";

/** Validates a credential configuration: `none`, `api_key` (sent as `X-API-Key`) or `bearer` (sent as `Authorization: Bearer`). */
export const AuthConfigSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("none") }),
  z.object({ type: z.literal("api_key"), key: z.string() }),
  z.object({ type: z.literal("bearer"), token: z.string() }),
  /** Accepted but ignored by every reference transport. */
  z.object({ type: z.literal("mutual_tls"), cert_path: z.string(), key_path: z.string(), ca_path: opt(z.string()) }),
  /** Accepted but ignored by every reference transport. The tag really is `o_auth`. */
  z.object({ type: z.literal("o_auth"), client_id: z.string(), client_secret: z.string(), token_url: z.string() }),
]);
/**
 * A credential configuration tagged by `type` (spec §10): `none`, `api_key`, `bearer`, `mutual_tls` or `o_auth`. A configuration
 * format; never sent as such.
 */
export type AuthConfig = z.infer<typeof AuthConfigSchema>;
/** What a caller passes where an AuthConfig is expected, e.g. a client transport's `auth` option (see `ClientAuth`). */
export type AuthConfigInput = z.input<typeof AuthConfigSchema>;
