// Written by `npm run sdk-gen` from provider/resources/api-key.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";

const provider = dynamicProvider("ApiKey");

/**
 * Every input and output of an ApiKey, each `undefined`: passed to Pulumi beside the arguments, so that each one is
 * an Output on the resource, set or not.
 */
const outputPlaceholders = {
  name: undefined,
  roleId: undefined,
  expiresInDays: undefined,
  metadata: undefined,
  enabled: undefined,
  rotation: undefined,
  renewBeforeDays: undefined,
  key: undefined,
  start: undefined,
  status: undefined,
  userId: undefined,
  expiresAt: undefined,
  createdAt: undefined,
};

/** The arguments of an {@link ApiKey}. */
export interface ApiKeyArgs {
  /** Display name (1–100 characters; names need not be unique). Changing it replaces the key. */
  name: pulumi.Input<string>;
  /**
   * Role limiting the key: one the API offers the signed-in user for new keys (`GET /auth/api-keys/options/roles`,
   * read once per run; see `getApiKeyOptions`), e.g. `tenant-admin`, `tenant-user` or `vm-operator`; it can never
   * exceed its creator's permissions. Checked before any change is made: against those options with a session token
   * (or a session the provider already holds; a check never signs in, which would spend the TOTP code), otherwise
   * against the roles the spec names. Default: none, the key has every permission of the user who created it.
   * Changing it replaces the key.
   */
  roleId?: pulumi.Input<string>;
  /** Days until the key expires (1–3650). Default 90 (the API's). Changing it replaces the key. */
  expiresInDays?: pulumi.Input<number>;
  /** Free-form object stored with the key. Changing it replaces the key. */
  metadata?: pulumi.Input<Record<string, unknown>>;
  /**
   * Whether the key authenticates: `false` suspends it, `true` resumes it. Default true, so a key suspended behind
   * the stack's back is resumed by the next `up`. Changed in place.
   */
  enabled?: pulumi.Input<boolean>;
  /**
   * Rotation trigger: any change of this value (e.g. a date, a counter) rotates the key, giving it a new secret and
   * invalidating the old one at once; the key keeps its id, expiry and status. Removing it does nothing. Changed in
   * place.
   */
  rotation?: pulumi.Input<string | number>;
  /**
   * Renewal: when the key's `expiresAt` is this many days away or less, `pulumi up` replaces it with a new key of the
   * same inputs (so a fresh `expiresInDays` of validity), created before the old one is deleted, and `pulumi preview`
   * says so. A whole number of days, less than `expiresInDays` (90 by default). Compared with the API's clock (the
   * `Date` header of its answers) where it tells it, else this machine's; the `expiresAt` compared is the state's
   * (`pulumi refresh` updates it). A rotation keeps the expiry date: it does not renew. Default: none, the key is
   * never renewed. Changing it only changes the stack's record.
   */
  renewBeforeDays?: pulumi.Input<number>;
}

/**
 * An API key of the signed-in user, for scripts and pipelines. Creating one needs a session with two-factor
 * authentication: configure `cloudinfra:email`, `cloudinfra:password` and `cloudinfra:totpSecret` (secrets) or
 * `cloudinfra:sessionToken`; an API key alone cannot create keys (it can still read, rotate, suspend and delete
 * them). The full secret, `key`, is only returned by the API on creation and rotation: the stack keeps it as a secret
 * output. API keys have no unique name, so there is no adoption of existing keys.
 */
export class ApiKey extends pulumi.dynamic.Resource {
  /** Display name. */
  declare readonly name: pulumi.Output<string>;
  /** Role limiting the key, if any. */
  declare readonly roleId: pulumi.Output<string | undefined>;
  /** Days of validity asked for at creation, as given in the program. */
  declare readonly expiresInDays: pulumi.Output<number | undefined>;
  /** Object stored with the key. */
  declare readonly metadata: pulumi.Output<Record<string, unknown> | undefined>;
  /** Whether the key is enabled (false: suspended). */
  declare readonly enabled: pulumi.Output<boolean>;
  /** The rotation trigger's value, as given in the program. */
  declare readonly rotation: pulumi.Output<string | number | undefined>;
  /** Days before expiry from which `up` replaces the key, as given in the program. */
  declare readonly renewBeforeDays: pulumi.Output<number | undefined>;
  /**
   * The full secret (`svc_…`, 32 characters), from creation or the last rotation. A secret output. Send it as the
   * `X-API-Key` header. Absent only from the state of a key whose creation did not complete (the next `up` replaces
   * it).
   */
  declare readonly key: pulumi.Output<string | undefined>;
  /** Leading characters of the key (its prefix included), safe to show. */
  declare readonly start: pulumi.Output<string>;
  /** `Active`, `Expiring` (within 30 days of expiry), `Suspended` or `Expired`, as of the last create/refresh. */
  declare readonly status: pulumi.Output<"Active" | "Expiring" | "Suspended" | "Expired">;
  /**
   * The user who created the key (whose permissions it inherits), when the API reports it: the spec does not document
   * it on key records, so an API that sends only the documented fields leaves it undefined.
   */
  declare readonly userId: pulumi.Output<string | undefined>;
  /** Expiry, ISO 8601. */
  declare readonly expiresAt: pulumi.Output<string>;
  /** Creation time, ISO 8601. */
  declare readonly createdAt: pulumi.Output<string>;

  constructor(name: string, args: ApiKeyArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      { ...outputPlaceholders, ...args },
      pulumi.mergeOptions(opts, { additionalSecretOutputs: ["key"] }),
      "cloudinfra",
      "ApiKey",
    );
  }
}
