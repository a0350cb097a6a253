import type * as pulumi from "@pulumi/pulumi";
import type { ResolvedResource } from "@pulumi/pulumi/queryable";
import {
  UnknownValueError,
  type ReportViolation,
  type ResourceRemediation,
  type ResourceValidation,
  type ResourceValidationArgs,
  type StackValidation,
  type StackValidationArgs,
} from "@pulumi/policy";
import type { KindName } from "../provider/resources";
import type {
  ApiKey,
  ApiKeyArgs,
  GpuVirtualMachine,
  GpuVirtualMachineArgs,
  Network,
  NetworkArgs,
  ResourceGroup,
  ResourceGroupArgs,
  ResourceGroupMember,
  ResourceGroupMemberArgs,
  User,
  UserArgs,
  UserRole,
  UserRoleArgs,
  VirtualMachine,
  VirtualMachineArgs,
  Volume,
  VolumeArgs,
  VolumeAttachment,
  VolumeAttachmentArgs,
} from "../sdk";

/** Prefix of the type tokens of the SDK's dynamic resources: `pulumi-nodejs:dynamic/cloudinfra:<Kind>`. */
export const TYPE_PREFIX = "pulumi-nodejs:dynamic/cloudinfra:";

/** Prefix of the type tokens of the provider plugin's resources: `cloudinfra:index:<Kind>`. */
export const PLUGIN_TYPE_PREFIX = "cloudinfra:index:";

/** The host serving a resource: the SDK's dynamic resources, or the provider plugin. */
export type Host = "dynamic" | "plugin";

/** The SDK's classes and their argument types, per resource kind (a kind missing here fails to compile). */
interface Kinds {
  Network: { resource: Network; args: NetworkArgs };
  VirtualMachine: { resource: VirtualMachine; args: VirtualMachineArgs };
  GpuVirtualMachine: { resource: GpuVirtualMachine; args: GpuVirtualMachineArgs };
  Volume: { resource: Volume; args: VolumeArgs };
  VolumeAttachment: { resource: VolumeAttachment; args: VolumeAttachmentArgs };
  ResourceGroup: { resource: ResourceGroup; args: ResourceGroupArgs };
  User: { resource: User; args: UserArgs };
  ApiKey: { resource: ApiKey; args: ApiKeyArgs };
  ResourceGroupMember: { resource: ResourceGroupMember; args: ResourceGroupMemberArgs };
  UserRole: { resource: UserRole; args: UserRoleArgs };
}
type Complete<T extends Record<KindName, unknown>> = T;
type _EveryKind = Complete<Kinds>;

/** A resource kind of this package, by its SDK class name. */
export type Kind = keyof _EveryKind;

/** The inputs of a resource of kind `K` as a policy sees them: the SDK's args with every `Input` resolved. */
export type KindInputs<K extends Kind> = pulumi.Unwrap<Kinds[K]["args"]>;

/** The outputs of a resource of kind `K` as a stack policy sees them (what the provider reported). */
export type KindOutputs<K extends Kind> = ResolvedResource<Kinds[K]["resource"]>;

/**
 * The type token of a kind, e.g. `pulumi-nodejs:dynamic/cloudinfra:VirtualMachine`, or with `host` "plugin"
 * `cloudinfra:index:VirtualMachine`.
 */
export function typeToken(kind: Kind, host: Host = "dynamic"): string {
  return `${host === "plugin" ? PLUGIN_TYPE_PREFIX : TYPE_PREFIX}${kind}`;
}

/** The kind of a type token of this package (either host's), else undefined. */
export function kindOf(type: string): Kind | undefined {
  for (const prefix of [TYPE_PREFIX, PLUGIN_TYPE_PREFIX]) {
    if (type.startsWith(prefix)) return type.slice(prefix.length) as Kind;
  }
  return undefined;
}

// Validations are not tagged with a type for the policy host's fast skip: a tag holds one token, and each kind has
// two (one per host). Each validation tells other types apart itself.
function tagged<F extends object>(_kinds: readonly Kind[], fn: F): F {
  return fn;
}

function notApplicable(args: { notApplicable(reason?: string): never }, kinds: readonly Kind[]): never {
  const tokens = kinds.flatMap((k) => [typeToken(k), typeToken(k, "plugin")]);
  return args.notApplicable(`Policy only applies to resources of type ${tokens.join(", ")}`);
}

/**
 * A resource validation of the given kinds, with their inputs typed through the SDK (resources of other types are
 * reported as not applicable, as `validateResourceOfType` does).
 */
export function validateKinds<K extends Kind>(
  kinds: readonly K[],
  validate: (
    props: KindInputs<K>,
    args: ResourceValidationArgs & { kind: K },
    reportViolation: ReportViolation,
  ) => void | Promise<void>,
): ResourceValidation {
  return tagged(kinds, (args: ResourceValidationArgs, reportViolation: ReportViolation) => {
    const kind = kindOf(args.type);
    if (kind === undefined || !(kinds as readonly Kind[]).includes(kind)) return notApplicable(args, kinds);
    return validate(args.props as KindInputs<K>, { ...args, kind: kind as K }, reportViolation);
  });
}

/**
 * A remediation of the given kinds: `remediate` changes the props it is given and returns true when it changed
 * something (the host then sends the new props to the engine), false to leave the resource as it is.
 */
export function remediateKinds<K extends Kind>(
  kinds: readonly K[],
  remediate: (props: KindInputs<K>, args: ResourceValidationArgs & { kind: K }) => boolean,
): ResourceRemediation {
  return tagged(kinds, (args: ResourceValidationArgs) => {
    const kind = kindOf(args.type);
    if (kind === undefined || !(kinds as readonly Kind[]).includes(kind)) return notApplicable(args, kinds);
    const props = args.props as KindInputs<K>;
    return remediate(props, { ...args, kind: kind as K }) ? props : undefined;
  });
}

/** One resource of the stack as a stack policy of kind `K` sees it. */
export interface StackResourceOf<K extends Kind> {
  kind: K;
  name: string;
  urn: string;
  props: KindOutputs<K>;
}

/** A stack validation over the resources of the given kinds (not applicable when the stack has none). */
export function validateStackKinds<K extends Kind>(
  kinds: readonly K[],
  validate: (
    resources: StackResourceOf<K>[],
    args: StackValidationArgs,
    reportViolation: ReportViolation,
  ) => void | Promise<void>,
): StackValidation {
  return tagged(kinds, (args: StackValidationArgs, reportViolation: ReportViolation) => {
    const resources = args.resources.flatMap((r) => {
      const kind = kindOf(r.type);
      if (kind === undefined || !(kinds as readonly Kind[]).includes(kind)) return [];
      return [{ kind: kind as K, name: r.name, urn: r.urn, props: r.props as KindOutputs<K> }];
    });
    if (resources.length === 0) return notApplicable(args, kinds);
    return validate(resources, args, reportViolation);
  });
}

/** What {@link peek} found: a value, or "not known yet" (a preview, before the resource exists). */
export type Peeked<T> = { known: true; value: T } | { known: false };

/**
 * Reads a value the policy host may hold only as "unknown" during a preview, without failing: the host's props throw
 * `UnknownValueError` on an unknown value (which makes the whole policy "can't run during preview"); a policy that
 * can decide without the value (e.g. "set, to something") reads it through this instead.
 */
export function peek<T>(read: () => T): Peeked<T> {
  try {
    return { known: true, value: read() };
  } catch (error) {
    // By name too: a second copy of @pulumi/policy in the pack's node_modules has its own class.
    if (error instanceof UnknownValueError || (error as Error | undefined)?.constructor?.name === "UnknownValueError") {
      return { known: false };
    }
    throw error;
  }
}
