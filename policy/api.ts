import type { ResourceValidationArgs } from "@pulumi/policy";
import type { PolicyConfigJSONSchema } from "@pulumi/policy/schema";
import { callerOf, handlerContext, type Caller, type HandlerContext } from "../provider/resources/context";
import { kinds, type KindName } from "../provider/resources";
import { runReadsOf } from "../provider/resources/preflight";
import { configuration, ConfigurationError, type Settings } from "../provider/resources/settings";
import type { GpuInventoryEntry } from "../provider/api";

/**
 * How the policies that read the API reach it. By default with the deploying stack's own settings: the `cloudinfra:*`
 * stack config that the CLI hands to the pack (`PULUMI_CONFIG`, secrets decrypted), else the `CLOUDINFRA_*`
 * environment variables, as the provider reads them, so the permissions judged are the deploying credentials'. Each
 * value given here wins over those.
 */
export interface ApiAccessConfig {
  /** API base URL (ending in /v1). Default: the stack's `cloudinfra:baseUrl`, else CLOUDINFRA_BASE_URL. */
  baseUrl?: string;
  /** Entity (UUID) to act in. Default: the stack's `cloudinfra:entityId`, else CLOUDINFRA_ENTITY_ID, else the key's own. */
  entityId?: string;
  /**
   * Name of an environment variable holding the API key to read with, instead of the stack's credentials (the key
   * itself never goes in policy config, which is not secret). Default none.
   */
  apiKeyVariable?: string;
}

/** The config schema of {@link ApiAccessConfig}, part of each API policy's schema. */
export const apiAccessSchema = {
  baseUrl: {
    type: "string",
    description: "API base URL (default: the stack's cloudinfra:baseUrl, else CLOUDINFRA_BASE_URL).",
  },
  entityId: { type: "string", description: "Entity (UUID) to act in (default: the stack's, else the key's own)." },
  apiKeyVariable: {
    type: "string",
    pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
    description: "Environment variable holding the API key to read with instead of the stack's credentials.",
  },
} satisfies Record<keyof ApiAccessConfig, PolicyConfigJSONSchema>;

/** The stack config the CLI hands to a policy pack (`PULUMI_CONFIG`: the stack's config, secrets decrypted). */
function stackConfig(): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(process.env.PULUMI_CONFIG ?? "{}");
    return parsed !== null && typeof parsed === "object" ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** A context to read the API with, or why there is none (a note naming what to set; never a secret). */
export type ApiAccess = { ctx: HandlerContext; settings: Settings } | { note: string };

/**
 * The context of `access` for resources of `kind` (an ApiKey is created by a signed-in session: its kind's own
 * settings). Clients, and so the reads shared by a run (one inventory, one `GET /auth/check`), are the provider's:
 * one per settings and process, and a policy pack process serves one run.
 */
export function apiAccess(access: ApiAccessConfig, kind?: KindName): ApiAccess {
  const stack = stackConfig();
  const overrides: Record<string, string | undefined> = {
    "cloudinfra:baseUrl": access.baseUrl,
    "cloudinfra:entityId": access.entityId,
  };
  if (access.apiKeyVariable !== undefined) {
    const key = process.env[access.apiKeyVariable];
    if (key === undefined || key === "") {
      return {
        note: `apiKeyVariable names ${access.apiKeyVariable}, which is not set in the policy pack's environment`,
      };
    }
    // An API key wins over the other credentials (as in the provider's settings).
    overrides["cloudinfra:apiKey"] = key;
  }
  const config = configuration((key) => overrides[key] ?? stack[key]);
  let ctx: HandlerContext;
  try {
    ctx = handlerContext({ configuration: config });
  } catch (error) {
    return { note: `the cloudinfra settings are not usable: ${(error as Error).message}` };
  }
  let settings = ctx.settings;
  const settingsFor = kind === undefined ? undefined : kinds[kind].settingsFor;
  if (settingsFor) {
    try {
      settings = settingsFor(config, ctx.settings);
    } catch (error) {
      if (error instanceof ConfigurationError) return { note: error.message };
      throw error;
    }
  }
  if (settings.skipCredentialsValidation) {
    return { note: "cloudinfra:skipCredentialsValidation is set (no network at preview): nothing was read" };
  }
  if ("password" in settings.auth) {
    return {
      note:
        "the credentials would sign in (email, password, TOTP), which spends the TOTP code the deployment needs: " +
        "give the stack an API key or a session token (or the policy `apiKeyVariable`)",
    };
  }
  return { ctx, settings };
}

/** Why a read failed, for the note (the client redacts secrets from its messages). */
const why = (error: unknown) => (error instanceof Error ? error.message : String(error));

const noted = new Set<string>();

/**
 * Reports "not applicable" with `note` (nothing is judged), and writes it once per process to the pack's stderr: a
 * read that fails never fails the pack nor blocks the run.
 */
export function notChecked(args: ResourceValidationArgs, policy: string, note: string): never {
  const text = `${policy}: not checked: ${note}`;
  if (!noted.has(text)) {
    noted.add(text);
    console.error(text);
  }
  return args.notApplicable(text);
}

/** The GPU inventory of the run (read once per pack process and settings), or the note of why it is not known. */
export async function inventoryOf(access: ApiAccess): Promise<{ inventory: GpuInventoryEntry[] } | { note: string }> {
  if ("note" in access) return access;
  try {
    return { inventory: await runReadsOf(access.ctx.api).gpuInventory() };
  } catch (error) {
    return { note: `GET /resource/gpu/inventory failed: ${why(error)}` };
  }
}

/** Who the credentials are (the run's one `GET /auth/check`), or the note of why it is not known. */
export async function callerIn(access: ApiAccess): Promise<{ caller: Caller } | { note: string }> {
  if ("note" in access) return access;
  try {
    const caller = await callerOf(access.ctx, access.settings);
    return caller ? { caller } : { note: "the credentials are not checked (GET /auth/check) with these settings" };
  } catch (error) {
    return { note: `GET /auth/check failed: ${why(error)}` };
  }
}
