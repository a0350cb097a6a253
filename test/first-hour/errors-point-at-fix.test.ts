/**
 * Issue 8, item 5: errors that did not point at the fix. A base URL without /v1 gave `No route POST
 * /resource/networks (NOT_FOUND, HTTP 404 ...)`, a host that is not a URL gave `Invalid URL`, and a refused key did
 * not say where it came from. Transport and routing errors now name the full URL and the setting behind it.
 */
import { describe, expect, it } from "vitest";
import { ApiError, CloudClient } from "../../provider/client";
import { clientHarness } from "../client/helpers";

const h = await clientHarness();
const apiKey = h.emulator.bootstrap.users.admin.apiKey;
const origin = h.emulator.baseUrl.replace(/\/v1$/, "");

describe("errors name the URL and the setting to fix", () => {
  it("a base URL without /v1 answered `No route POST /resource/networks`: the error names the full URL and the missing /v1", async () => {
    const client = h.client({ baseUrl: origin, labels: { baseUrl: "cloudinfra:baseUrl (stack config)" } });
    const error = (await client
      .createNetwork({
        body: { name: "x", datacenterId: h.emulator.bootstrap.fixtures.datacenters[0]!.id, networkType: "standard" },
      })
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(404);
    expect(error.message).toContain(`POST ${origin}/resource/networks`);
    expect(error.message).toContain("no API route at this URL");
    expect(error.message).toContain(`The base URL ${origin} comes from cloudinfra:baseUrl (stack config)`);
    expect(error.message).toContain("this one does not end in /v1");
  });

  it("a resource that is gone is still a plain 404, not a routing error", async () => {
    const client = h.client();
    const error = (await client
      .getNetwork({ params: { id: "00000000-0000-4000-8000-000000000000" } })
      .catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(404);
    expect(error.message).not.toContain("no API route");
    expect(error.message).toContain(`GET ${h.emulator.baseUrl}/resource/networks/00000000-0000-4000-8000-000000000000`);
  });

  it("a host that is not a URL gave `Invalid URL`: the error quotes it, names its setting and the expected form", () => {
    expect(
      () =>
        new CloudClient({
          baseUrl: "api.example.com",
          auth: { apiKey },
          labels: { baseUrl: "CLOUDINFRA_BASE_URL (environment)" },
        }),
    ).toThrow(
      /"api\.example\.com" \(CLOUDINFRA_BASE_URL \(environment\)\) is not an http\(s\) URL: give the API's full URL ending in \/v1/,
    );
  });

  it("a refused key said API_KEY_INVALID only: the hint says where it came from and what to do, the key never shown", async () => {
    const wrong = "svc_RefusedRefusedRefusedRefused";
    const client = h.client({
      auth: { apiKey: wrong },
      labels: { authHint: (code) => `hint for ${code}: rotate it, then pulumi config set --secret cloudinfra:apiKey` },
    });
    const error = (await client.check().catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe("API_KEY_INVALID");
    expect(error.message).toContain("hint for API_KEY_INVALID: rotate it");
    expect(error.message).toContain(`GET ${h.emulator.baseUrl}/auth/check`);
    expect(error.message).not.toContain(wrong);
  });
});
