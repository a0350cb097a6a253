/**
 * The error catalogue (provider/client/error-codes.ts): every code raised in provider/ is in it, every entry is in
 * the generated table of docs/guides/troubleshooting.md (`npm run docs`), and the API's codes are exactly the
 * contract's.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { errorStatus } from "../../provider/api";
import { ApiError } from "../../provider/client/errors";
import { CodedError, errorCatalogue, errorEntry, messageWithCode, withCode } from "../../provider/client/error-codes";
import { errorCodesTable, readmeTableRows } from "../../tools/readme-tables";

const root = path.resolve(__dirname, "../..");
const readme = fs.readFileSync(path.join(root, errorCodesTable.file), "utf8");

function sources(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith(".ts") ? [file] : [];
  });
}

/**
 * The codes the provider's source raises, where: a `code: "X"` (ApiError's init, an error given a code), a
 * `new CodedError("X"`, a `super("X"` (a CodedError subclass), a lookup's `lookupError("X"`, and `` `HTTP_${status}` `` as HTTP_000.
 */
function codesInSource(files: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const patterns = [
    /\bcode:\s*"([A-Z][A-Z0-9_]*)"/g,
    /\bnew CodedError\(\s*"([A-Z][A-Z0-9_]*)"/g,
    /\bsuper\(\s*"([A-Z][A-Z0-9_]*)"/g,
    /\blookupError\(\s*"([A-Z][A-Z0-9_]*)"/g,
    /`([A-Z][A-Z0-9]*)_\$\{status\}`/g,
  ];
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    for (const pattern of patterns) {
      for (const match of text.matchAll(pattern)) {
        const code = pattern.source.startsWith("`") ? `${match[1]}_000` : match[1]!;
        const line = text.slice(0, match.index).split("\n").length;
        found.set(code, [...(found.get(code) ?? []), `${path.relative(root, file)}:${line}`]);
      }
    }
  }
  return found;
}

const raised = codesInSource(sources(path.join(root, "provider")));

describe("the error catalogue", () => {
  it("documents every code raised in provider/ (add an entry to provider/client/error-codes.ts when this fails)", () => {
    const undocumented = [...raised].filter(([code]) => !errorEntry(code)).map(([code, at]) => `${code} at ${at}`);
    expect(undocumented).toEqual([]);
  });

  it("finds the client's codes where they are raised (the scan is not blind)", () => {
    for (const code of [
      "NETWORK_ERROR",
      "INVALID_RESPONSE",
      "INVALID_REQUEST",
      "INVALID_OTP",
      "HTTP_000",
      "BASE_URL_INVALID",
      "SIGN_IN_UNAVAILABLE",
      "JOB_ID_INVALID",
      "JOB_FAILED",
      "JOB_TIMEOUT",
      "JOB_NOT_FOUND",
      "CLIENT_CLOSED",
    ]) {
      expect(raised.get(code), code).toBeDefined();
    }
    expect(raised.get("JOB_TIMEOUT")).toContainEqual(expect.stringMatching(/^provider\/client\/errors\.ts:\d+$/));
  });

  it("leaves no error of provider/client without a code, but for two that never reach a user", () => {
    // Caught a line later (`"not http(s)"`), and an invariant of the route table checked when the module loads.
    const exempt = [/^new TypeError\("not http\(s\)"\)/, /collides with a CloudClient member/];
    const uncoded = sources(path.join(root, "provider/client")).flatMap((file) => {
      const text = fs.readFileSync(file, "utf8");
      return [...text.matchAll(/new (?:Type|Range)?Error\(/g)]
        .map((match) => text.slice(match.index, text.indexOf(";", match.index)))
        .filter((statement) => !/\bcode:\s*"/.test(statement) && !exempt.some((e) => e.test(statement)))
        .map((statement) => `${path.relative(root, file)}: ${statement.split("\n")[0]}`);
    });
    expect(uncoded).toEqual([]);
  });

  it("leaves no error of the resource kinds, the lookups or either host without a code, but for the gRPC statuses", () => {
    // The plugin's own gRPC errors carry a gRPC status as `code` (the engine's wire format), not a catalogue code.
    const exempt = [/code: grpc\.status\./, /^new Error\(message\), \{ code: grpc\.status\.UNKNOWN/];
    const files = [
      ...sources(path.join(root, "provider/resources")),
      ...sources(path.join(root, "provider/plugin")),
      path.join(root, "provider/dynamic.ts"),
    ];
    const uncoded = files.flatMap((file) => {
      const text = fs.readFileSync(file, "utf8");
      return [...text.matchAll(/new (?:Type|Range)?Error\(/g)]
        .map((match) => text.slice(match.index, text.indexOf(";", match.index)))
        .filter((statement) => !exempt.some((e) => e.test(statement)))
        .map((statement) => `${path.relative(root, file)}: ${statement.split("\n")[0]}`);
    });
    expect(uncoded).toEqual([]);
    // The scan sees the codes given there.
    for (const code of ["NAME_TAKEN", "STATE_CONFLICT", "UNKNOWN_TOKEN", "LOOKUP_AMBIGUOUS", "SESSION_REQUIRED"]) {
      expect(raised.get(code), code).toBeDefined();
    }
  });

  it("holds the API's codes exactly as the contract lists them, marked as the API's", () => {
    const apiCodes = Object.entries(errorCatalogue)
      .filter(([, entry]) => entry.origin === "api")
      .map(([code]) => code);
    expect(apiCodes.sort()).toEqual(Object.keys(errorStatus).sort());
  });

  it("uses upper-case names clear of the environment variables' CLOUDINFRA_ prefix, each with a summary and a fix", () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(code.startsWith("CLOUDINFRA_"), code).toBe(false);
      expect(entry.summary.length, code).toBeGreaterThan(20);
      expect(entry.fix.length, code).toBeGreaterThan(20);
    }
  });

  it("maps an HTTP_<status> code to its entry, and leaves unknown codes undocumented", () => {
    expect(errorEntry("HTTP_502")).toMatchObject({ code: "HTTP_STATUS", origin: "provider" });
    expect(errorEntry("JOB_TIMEOUT")).toMatchObject({ code: "JOB_TIMEOUT", origin: "provider" });
    expect(errorEntry("NOT_A_CODE")).toBeUndefined();
    expect(errorEntry("toString")).toBeUndefined();
  });
});

describe("the code in a message as the hosts hand it to the engine", () => {
  it("follows the message in brackets, once: a tag of a wrapped error is replaced, a text in brackets is kept", () => {
    expect(withCode("Timed out after 5 s", "JOB_TIMEOUT")).toBe("Timed out after 5 s [JOB_TIMEOUT]");
    expect(withCode("Timed out after 5 s [JOB_TIMEOUT]", "JOB_TIMEOUT")).toBe("Timed out after 5 s [JOB_TIMEOUT]");
    expect(withCode("was created but: Timed out [JOB_TIMEOUT]", "JOB_FAILED")).toBe(
      "was created but: Timed out [JOB_FAILED]",
    );
    // Not a documented code: the message's own text, kept.
    expect(withCode("image [UBUNTU]", "INPUT_INVALID")).toBe("image [UBUNTU] [INPUT_INVALID]");
    expect(withCode("no code", undefined)).toBe("no code");
  });

  it("is the error's documented code: a package error's, the API's (HTTP_<status> too), none for other errors", () => {
    expect(messageWithCode(new CodedError("NAME_TAKEN", 'Network "a" exists'))).toBe('Network "a" exists [NAME_TAKEN]');
    const api = new ApiError({ status: 502, code: "HTTP_502", message: "Bad gateway", method: "GET", path: "/vms" });
    expect(messageWithCode(api)).toBe(`${api.message} [HTTP_502]`);
    expect(messageWithCode(new TypeError("x is undefined"))).toBe("x is undefined");
    // A code that is not in the catalogue is data, not a code: it never enters the message.
    expect(messageWithCode(Object.assign(new Error("refused"), { code: "svc_secret-looking" }))).toBe("refused");
    expect(messageWithCode("a string")).toBe("a string");
  });
});

describe("the table of the error codes (docs/guides/troubleshooting.md)", () => {
  it("is the catalogue (run `npm run docs` when this fails)", () => {
    expect(readmeTableRows(readme, errorCodesTable)).toEqual(errorCodesTable.rows());
  });

  it("has a row for every catalogue code, and so for every code raised", () => {
    const documented = readmeTableRows(readme, errorCodesTable).map(([code]) => code!.replaceAll("`", ""));
    expect(documented).toEqual(
      Object.keys(errorCatalogue).map((code) => (code === "HTTP_STATUS" ? "HTTP_<status>" : code)),
    );
    expect(documented).toContain("JOB_TIMEOUT");
  });
});
