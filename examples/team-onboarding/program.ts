import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

/** A role a user can hold. */
type RoleName = "tenant-admin" | "tenant-user" | "vm-operator";

/** One member of the team, as given in the `members` stack config. */
export interface TeamMember {
  /** Email address: the invitation goes there, and it identifies the user. */
  email: string;
  /** First name. */
  firstName?: string;
  /** Last name. */
  lastName?: string;
  /** Roles, default `["tenant-user"]`. */
  roles?: RoleName[];
}

/** The stack outputs of the team onboarding. */
export interface TeamOnboardingOutputs {
  /** The resource group's integer id. */
  resourceGroupId: pulumi.Output<number>;
  /** Each member: user id, email, roles and invitation status (`pending` until the invitation is accepted). */
  members: pulumi.Output<{ id: string; email: string; roles: string[]; inviteStatus: string }[]>;
  /** The CI API key's id. */
  ciApiKeyId: pulumi.Output<string>;
  /** The CI API key itself (secret: `pulumi stack output --show-secrets ciApiKey`), for the pipeline's secrets. */
  ciApiKey: pulumi.Output<string | undefined>;
  /** When the CI API key expires (ISO 8601). */
  ciApiKeyExpiresAt: pulumi.Output<string>;
}

const defaultMembers: TeamMember[] = [
  { email: "ana.lopez@example.com", firstName: "Ana", lastName: "Lopez", roles: ["tenant-user", "vm-operator"] },
  { email: "ben.okafor@example.com", firstName: "Ben", lastName: "Okafor", roles: ["tenant-user"] },
];

/**
 * Team onboarding: a resource group for the team, its members invited as users with their roles and put in the
 * group, and an API key for the team's CI pipeline (limited to the `vm-operator` role), exported as a secret.
 *
 * Stack config (all optional): `team` (the group's name, default `ml-platform`), `members` (a list of
 * `{ email, firstName?, lastName?, roles? }`, default two example members), `ciKeyExpiresInDays` (default 90).
 * Creating an API key needs a session with two-factor authentication: set `cloudinfra:email`, `cloudinfra:password`
 * and `cloudinfra:totpSecret` (secrets).
 */
export function teamOnboarding(): TeamOnboardingOutputs {
  const config = new pulumi.Config();
  const team = config.get("team") ?? "ml-platform";
  const members = config.getObject<TeamMember[]>("members") ?? defaultMembers;

  const group = new cloudinfra.ResourceGroup("team", { name: team });

  // Named by email, so adding or removing a member leaves the others alone.
  const users = members.map(
    (member) =>
      new cloudinfra.User(`user-${member.email}`, {
        email: member.email,
        firstName: member.firstName,
        lastName: member.lastName,
        roleNames: member.roles ?? ["tenant-user"],
        teamIds: [group.id],
      }),
  );

  const ciKey = new cloudinfra.ApiKey("ci", {
    name: `${team}-ci`,
    roleId: "vm-operator",
    expiresInDays: config.getNumber("ciKeyExpiresInDays", { min: 1, max: 3650 }) ?? 90,
    metadata: { team, purpose: "ci" },
  });

  return {
    resourceGroupId: group.teamId,
    members: pulumi
      .all(users.map((u) => pulumi.all([u.id, u.email, u.roleNames, u.inviteStatus])))
      .apply((rows) =>
        rows.map(([id, email, roles, inviteStatus]) => ({ id, email, roles: roles ?? [], inviteStatus })),
      ),
    ciApiKeyId: ciKey.id,
    ciApiKey: pulumi.secret(ciKey.key),
    ciApiKeyExpiresAt: ciKey.expiresAt,
  };
}
