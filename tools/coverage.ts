/**
 * `npm run docs` (also `npm run coverage`): docs/api-coverage.md, the coverage table of the API. One row per route of
 * the contract (provider/api/routes.ts, which a test holds equal to the spec's endpoint tables), and for each what
 * calls it: the resource kinds, the data functions and the internal uses (sign-in, job polling, credential checks).
 * Those are derived from the code, never kept by hand: the TypeScript compiler reads provider/ and finds every call of
 * a route (`api.<route>(...)` on a CloudClient, or a route name passed where a route name is expected, as
 * `listAll("listVms", ...)`, `invoke("queryJobs", ...)` or a lookup's `route: "listNetworks"`), then attributes each
 * call to the kind whose files hold it, the data function whose code it is in (followed through the helpers a lookup
 * uses), or the client module. A route nothing calls gives the reason from {@link uncalledReasons}; a test fails when
 * a route has neither, or both.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { routes, type RouteName } from "../provider/api";
import { kinds } from "../provider/resources";
import { dataFunctions, lookupKindNames, lookupNames } from "../provider/resources/lookups";
import { repositoryRoot } from "./pulumi-cli";

/** Why nothing calls a route. */
export type ReasonKind = "humanOnly" | "notShown" | "platformAdmin" | "notYetOffered";

/** How each kind of reason reads in the table. */
export const reasonTexts: Record<ReasonKind, string> = {
  humanOnly: "human-only flow",
  notShown: "not shown in the spec",
  platformAdmin: "platform administrators only",
  notYetOffered: "not yet offered",
};

/**
 * The routes nothing in provider/ calls, and why. Declared: a test fails when a route is neither called nor here, and
 * when a route here is called (then drop its entry).
 */
export const uncalledReasons: Partial<Record<RouteName, { kind: ReasonKind; note?: string }>> = {
  enableTwoFactor: { kind: "humanOnly", note: "2FA enrolment" },
  sendOtp: { kind: "humanOnly", note: "email fallback of the 2FA step; the provider signs in with TOTP" },
  verifyOtp: { kind: "humanOnly", note: "email fallback of the 2FA step; the provider signs in with TOTP" },
  verifyBackupCode: { kind: "humanOnly", note: "last-resort 2FA step; the provider signs in with TOTP" },
  disableTwoFactor: { kind: "humanOnly", note: "2FA management" },
  generateBackupCodes: { kind: "humanOnly", note: "2FA management" },
  twoFactorStatus: { kind: "humanOnly", note: "2FA management" },
  changePassword: { kind: "humanOnly", note: "password change, by the user themselves" },
  forgetPassword: { kind: "humanOnly", note: "password reset by email" },
  resetPassword: { kind: "humanOnly", note: "password reset by email" },
  usersForgotPassword: { kind: "humanOnly", note: "password reset by email" },
  setApiKeyRateLimit: { kind: "platformAdmin", note: "its body is not shown either" },
  cidrDetails: { kind: "notShown", note: "its query parameters; Network checks CIDR blocks itself" },
  me: { kind: "notYetOffered", note: "getCaller reads `GET /auth/check`, which says more" },
  userTeams: { kind: "notYetOffered", note: "a user's groups are read from `GET /users/{id}`" },
  userRoles: { kind: "notYetOffered", note: "a user's roles are read from `GET /users/{id}`" },
  bulkResendInvite: { kind: "notYetOffered" },
  bulkAssignTeams: { kind: "notShown", note: "whether it adds groups or replaces them; memberships use add-members" },
  jobStatus: { kind: "notShown", note: "its response; jobs are polled with `POST /resource/jobs`" },
};

/**
 * Names of the internal uses, by file and the declaration the call is in (`Class.member` for class members); a call
 * elsewhere outside kinds and data functions is named by its file and declaration.
 */
export const internalUseNames: Record<string, string> = {
  "provider/client/auth.ts › Authenticator.performSignIn": "sign-in (email, password, TOTP)",
  "provider/client/client.ts › CloudClientBase.constructor": "job polling (client.jobs)",
  "provider/client/client.ts › CloudClientBase.sendSignOut": "sign-out (when the provider process ends)",
  "provider/resources/context.ts › checkedCaller": "credentials check (once per run)",
  "provider/resources/preflight.ts › RunReads.gpuInventory": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › RunReads.nameHolder": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › RunReads.attachableVms": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › RunReads.volume": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › RunReads.volumeSizes": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › RunReads.volumesOn": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › RunReads.keysNamed": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › attachable": "preview checks (preflight.ts)",
  "provider/resources/preflight.ts › warnOfOwnKey": "preview checks (preflight.ts)",
};

/** One call of a route found in provider/. */
export interface CallSite {
  route: RouteName;
  /** Repository-relative file. */
  file: string;
  line: number;
  /** The declaration the call is in, e.g. `verifyCredentials` or `Authenticator.signIn`. */
  unit: string;
}

/** What calls a route: kinds, data functions, internal uses (each sorted), and the sites. */
export interface RouteUse {
  kinds: string[];
  dataFunctions: string[];
  internal: string[];
  sites: CallSite[];
}

const posix = (p: string) => p.split(path.sep).join("/");

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(full);
  }
  return out.sort();
}

/** The TypeScript program of provider/, with the compiler options of tsconfig.json. */
function providerProgram(root: string): ts.Program {
  const configPath = path.join(root, "tsconfig.json");
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram(sourceFiles(path.join(root, "provider")), { ...parsed.options, noEmit: true });
}

/** The name of a declaration node, if it has a plain one. */
function nameOf(node: ts.Node): string | undefined {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const name = (node as { name?: ts.Node }).name;
  if (name && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name))) return name.text;
  return undefined;
}

/** The top-level declaration a node is in (its statement in the file) and its name (`Class.member` in a class). */
function unitOf(node: ts.Node): { decl: ts.Node; name: string } | undefined {
  let member: ts.Node | undefined;
  let current: ts.Node = node;
  while (current.parent && !ts.isSourceFile(current.parent)) {
    if (ts.isClassElement(current) && ts.isClassLike(current.parent)) member = current;
    current = current.parent;
  }
  const statement = current;
  let decl: ts.Node = statement;
  if (ts.isVariableStatement(statement)) {
    decl =
      statement.declarationList.declarations.find((d) => d.pos <= node.pos && node.end <= d.end) ??
      statement.declarationList.declarations[0]!;
  }
  const name = nameOf(decl);
  if (name === undefined) return undefined;
  return { decl, name: member && nameOf(member) ? `${name}.${nameOf(member)}` : name };
}

/** The declaration a name refers to, through imports. */
function declarationOf(checker: ts.TypeChecker, node: ts.Node): ts.Declaration | undefined {
  let symbol = checker.getSymbolAtLocation(node);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
}

/** Strips casts and parentheses. */
function bare(expression: ts.Expression): ts.Expression {
  let e = expression;
  while (ts.isAsExpression(e) || ts.isParenthesizedExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
  return e;
}

function isCloudClient(checker: ts.TypeChecker, expression: ts.Expression): boolean {
  const type = checker.getTypeAtLocation(expression);
  return ["listAll", "waitForJob", "jobs"].every((member) => type.getProperty(member) !== undefined);
}

/** Is this string literal's expected type made of route names only (a route name argument or property)? */
function expectsRouteName(checker: ts.TypeChecker, literal: ts.StringLiteral, names: ReadonlySet<string>): boolean {
  let type = checker.getContextualType(literal);
  if (!type) return false;
  if (type.flags & ts.TypeFlags.TypeParameter) type = checker.getBaseConstraintOfType(type) ?? type;
  const parts = type.isUnion() ? type.types : [type];
  return parts.every((t) => t.isStringLiteral() && names.has(t.value));
}

/** Is this name called (`f(...)`, `x.f(...)`, `new F(...)`): only calls make a helper's requests its caller's. */
function isCalled(name: ts.Identifier): boolean {
  const callee = ts.isPropertyAccessExpression(name.parent) && name.parent.name === name ? name.parent : name;
  const call = callee.parent;
  return (ts.isCallExpression(call) || ts.isNewExpression(call)) && call.expression === callee;
}

/** Every call of a route in provider/ (provider/api, the contract itself, aside), with its node. */
function callSites(program: ts.Program, root: string): { site: CallSite; node: ts.Node }[] {
  const checker = program.getTypeChecker();
  const names: ReadonlySet<string> = new Set(Object.keys(routes));
  const sites: { site: CallSite; node: ts.Node }[] = [];
  const contract = path.join(root, "provider", "api") + path.sep;
  for (const file of program.getSourceFiles()) {
    const full = path.resolve(file.fileName);
    if (!full.startsWith(path.join(root, "provider") + path.sep) || full.startsWith(contract)) continue;
    const add = (route: string, node: ts.Node) => {
      const unit = unitOf(node);
      const site: CallSite = {
        route: route as RouteName,
        file: posix(path.relative(root, full)),
        line:
          file.getLineAndCharacterOfPosition((ts.isPropertyAccessExpression(node) ? node.name : node).getStart(file))
            .line + 1,
        unit: unit?.name ?? "(top level)",
      };
      sites.push({ site, node });
    };
    const visit = (node: ts.Node): void => {
      if (
        ts.isPropertyAccessExpression(node) &&
        names.has(node.name.text) &&
        ts.isCallExpression(node.parent) &&
        node.parent.expression === node &&
        isCloudClient(checker, node.expression)
      ) {
        add(node.name.text, node);
      } else if (
        ts.isStringLiteral(node) &&
        names.has(node.text) &&
        ((ts.isCallExpression(node.parent) && node.parent.arguments.includes(node)) ||
          (ts.isPropertyAssignment(node.parent) && node.parent.initializer === node)) &&
        expectsRouteName(checker, node, names)
      ) {
        add(node.text, node);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return sites;
}

/** Every call of a route in provider/ (provider/api, the contract itself, aside). */
export function findCallSites(root: string = repositoryRoot()): CallSite[] {
  return callSites(providerProgram(root), root).map(({ site }) => site);
}

/** What calls each route, derived from the call sites in provider/. */
export function routeUses(root: string = repositoryRoot()): Map<RouteName, RouteUse> {
  const program = providerProgram(root);
  const checker = program.getTypeChecker();
  const sites = callSites(program, root);
  const fileOf = (node: ts.Node) => posix(path.relative(root, path.resolve(node.getSourceFile().fileName)));

  // The files of each kind: the file that declares it, or its whole folder below provider/resources.
  const kindOfFile = (file: string): string | undefined => {
    for (const [name, files] of kindFiles) if (files.some((f) => file === f || file.startsWith(`${f}/`))) return name;
    return undefined;
  };
  const kindFiles = new Map<string, string[]>();
  const index = program.getSourceFile(path.join(root, "provider", "resources", "index.ts"));
  index?.forEachChild(function visit(node): void {
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && node.name.text in kinds) {
      const declaration = declarationOf(checker, node.initializer);
      if (declaration) {
        const file = fileOf(declaration);
        const folder = path.posix.dirname(file);
        kindFiles.set(node.name.text, [folder === "provider/resources" ? file : folder]);
      }
    }
    node.forEachChild(visit);
  });

  // Roots of the data functions: an object literal registered under a data function's name (and the function its
  // `call` names), and the members of the lookups' kinds, which lookupOne and lookupList use as said below.
  const dataRoots = new Map<ts.Node, string[]>();
  const lookupMembers = new Map<ts.Node, string[]>();
  const lookupKindSet: ReadonlySet<string> = new Set(lookupKindNames);
  for (const file of program.getSourceFiles()) {
    if (!path.resolve(file.fileName).startsWith(path.join(root, "provider", "resources"))) continue;
    file.forEachChild(function visit(node): void {
      if (
        ts.isPropertyAssignment(node) &&
        (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) &&
        node.name.text in dataFunctions &&
        ts.isObjectLiteralExpression(bare(node.initializer))
      ) {
        const name = node.name.text;
        dataRoots.set(node, [name]);
        for (const member of (bare(node.initializer) as ts.ObjectLiteralExpression).properties) {
          if (ts.isPropertyAssignment(member) && nameOf(member) === "call") {
            const declaration = declarationOf(checker, bare(member.initializer));
            if (declaration) dataRoots.set(declaration, [...(dataRoots.get(declaration) ?? []), name]);
          }
        }
      }
      if (
        ts.isVariableDeclaration(node) &&
        nameOf(node) === "lookupKinds" &&
        node.initializer &&
        ts.isObjectLiteralExpression(bare(node.initializer))
      ) {
        for (const kind of (bare(node.initializer) as ts.ObjectLiteralExpression).properties) {
          const kindName = nameOf(kind);
          if (!kindName || !lookupKindSet.has(kindName) || !ts.isPropertyAssignment(kind)) continue;
          const { single, list } = lookupNames(kindName as (typeof lookupKindNames)[number]);
          const members = bare(kind.initializer);
          if (!ts.isObjectLiteralExpression(members)) continue;
          for (const member of members.properties) {
            // lookupOne reads by id with `byId` (and after a name search when `readFound`); the name search and
            // lookupList read the list `route` and map its items with `outputsOfItem`.
            lookupMembers.set(member, nameOf(member) === "byId" ? [single] : [single, list]);
          }
        }
      }
      node.forEachChild(visit);
    });
  }

  // References to each top-level declaration of the kinds' and data functions' files, by declaration.
  const followed = (file: string) => file.startsWith("provider/resources/");
  const references = new Map<ts.Node, ts.Node[]>();
  for (const file of program.getSourceFiles()) {
    if (!followed(fileOf(file))) continue;
    file.forEachChild(function visit(node): void {
      if (ts.isIdentifier(node) && isCalled(node)) {
        const declaration = declarationOf(checker, node);
        if (declaration && followed(fileOf(declaration))) {
          const unit = unitOf(declaration);
          if (unit && unit.decl !== unitOf(node)?.decl) {
            references.set(unit.decl, [...(references.get(unit.decl) ?? []), node]);
          }
        }
      }
      node.forEachChild(visit);
    });
  }

  /**
   * Adds what the code at `node` is part of to `use`: the data function it is in, else a named internal use, else the
   * kind whose files hold it; in provider/resources, also what calls the declaration it is in (a helper's requests
   * are its callers'). Code nothing attributes is named by its file and declaration.
   */
  const attribute = (node: ts.Node, use: RouteUse, seen: Set<ts.Node>): void => {
    for (let at: ts.Node | undefined = node; at; at = at.parent) {
      const roots = dataRoots.get(at) ?? lookupMembers.get(at);
      if (roots) {
        use.dataFunctions.push(...roots);
        return;
      }
    }
    const file = fileOf(node);
    const unit = unitOf(node);
    const key = `${file} › ${unit?.name ?? "(top level)"}`;
    const internal = internalUseNames[key];
    if (internal) {
      use.internal.push(internal);
      return;
    }
    if (unit) {
      if (seen.has(unit.decl)) return;
      seen.add(unit.decl);
    }
    const kind = kindOfFile(file);
    if (kind) use.kinds.push(kind);
    const callers = followed(file) && unit ? (references.get(unit.decl) ?? []) : [];
    for (const caller of callers) attribute(caller, use, seen);
    if (!kind && callers.length === 0) use.internal.push(key);
  };

  const uses = new Map<RouteName, RouteUse>();
  for (const name of Object.keys(routes) as RouteName[]) {
    uses.set(name, { kinds: [], dataFunctions: [], internal: [], sites: [] });
  }
  for (const { site, node } of sites) {
    const use = uses.get(site.route)!;
    use.sites.push(site);
    attribute(node, use, new Set());
  }
  const sorted = (values: string[]) => [...new Set(values)].sort();
  for (const use of uses.values()) {
    use.kinds = sorted(use.kinds);
    use.dataFunctions = sorted(use.dataFunctions);
    use.internal = sorted(use.internal);
  }
  return uses;
}

/** The spec's form of a contract path: `{id}` for `:id`. */
export const specPath = (routePath: string) => routePath.replace(/:(\w+)/g, "{$1}");

const code = (text: string) => `\`${text}\``;
const cell = (values: string[]) => (values.length > 0 ? values.join(", ") : "");

/** The counts of the table: routes called, routes given a reason, all routes. */
export function coverageCounts(uses: ReadonlyMap<RouteName, RouteUse>): {
  called: number;
  reasoned: number;
  total: number;
} {
  const all = [...uses.entries()];
  return {
    called: all.filter(([, use]) => use.sites.length > 0).length,
    reasoned: all.filter(([name]) => uncalledReasons[name] !== undefined).length,
    total: all.length,
  };
}

/** docs/api-coverage.md, formatted as committed (Prettier's Markdown). */
export async function coverageMarkdown(uses: ReadonlyMap<RouteName, RouteUse> = routeUses()): Promise<string> {
  const { called, reasoned, total } = coverageCounts(uses);
  const lines = [
    "# API coverage",
    "",
    "<!-- Generated by `npm run docs` (tools/coverage.ts) from provider/api/routes.ts and the calls in provider/: " +
      "never edit by hand; test/tools/coverage.test.ts fails when it is stale. -->",
    "",
    "Every endpoint of the API ([the spec](spec/cloud-api.md)), as the contract's route table " +
      "(`provider/api/routes.ts`) names it, and what in the provider calls it: the resource kinds, the data functions, " +
      "or an internal use. These are found in the code (each call of the route in `provider/`, attributed to the kind " +
      "or data function whose code it is in), not kept by hand; a route nothing calls says why.",
    "",
    `${called} of ${total} routes are called; ${reasoned} are not, for the reason given.`,
    "",
    "| Method | Path | Route | Resource kinds | Data functions | Internal use | Not called because |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const [name, use] of uses) {
    const route = routes[name];
    const reason = uncalledReasons[name];
    lines.push(
      `| ${route.method} | ${code(specPath(route.path))} | ${code(name)} | ${cell(use.kinds)} | ${cell(
        use.dataFunctions.map(code),
      )} | ${cell(use.internal)} | ${reason ? reasonTexts[reason.kind] + (reason.note ? `: ${reason.note}` : "") : ""} |`,
    );
  }
  const prettier = await import("prettier");
  const file = path.join(repositoryRoot(), "docs", "api-coverage.md");
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(`${lines.join("\n")}\n`, { ...options, parser: "markdown" });
}

/** Where the table is written. */
export const coverageFile = (root: string = repositoryRoot()) => path.join(root, "docs", "api-coverage.md");

async function main(): Promise<void> {
  const root = repositoryRoot();
  const uses = routeUses(root);
  fs.writeFileSync(coverageFile(root), await coverageMarkdown(uses));
  const { called, reasoned, total } = coverageCounts(uses);
  process.stdout.write(
    `wrote ${posix(path.relative(root, coverageFile(root)))} (${total} routes: ${called} called, ${reasoned} not, with a reason)\n`,
  );
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
