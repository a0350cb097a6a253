/**
 * The dynamic SDK's lifecycle through the real CLI is the lifecycle table's (test/lifecycle/table.ts, run by
 * test/lifecycle/cli-dynamic.test.ts): drift, deletion behind the stack, both replacement orders, failed jobs, bad
 * inputs. What stays here: a check failure of an existing resource's changed input, with the fix in its message.
 */
import * as pulumi from "@pulumi/pulumi";
import { CommandError } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { cliWorld, describeCli } from "./helpers";

const world = await cliWorld();
const [fra] = world.datacenters;

/** A custom network whose block comes from `app:cidr`. */
async function program() {
  const network = new cloudinfra.Network("net", {
    name: "lc-net",
    datacenterId: fra.id,
    networkType: "custom",
    cidrBlock: new pulumi.Config("app").get("cidr") ?? "10.40.0.0/24",
  });
  return { networkId: network.id };
}

describeCli("the lifecycle through the real CLI", () => {
  it("a check failure fails preview naming the property and the fix, and nothing changes", async () => {
    const stack = await world.stack("drift", program, world.config);
    await stack.up({ color: "never" });
    const since = world.mark();
    const before = (await stack.exportStack()).deployment as unknown;
    await stack.setConfig("app:cidr", { value: "10.40.0.1/24" });
    const failed = await stack.preview({ color: "never" }).catch((e: unknown) => e);
    await stack.removeConfig("app:cidr");
    expect(failed).toBeInstanceOf(CommandError);
    const message = String(failed);
    expect(message).toContain("cidrBlock");
    expect(message).toContain("use 10.40.0.0/24");
    expect((await stack.exportStack()).deployment).toEqual(before);
    const writes = (await world.requests(since)).filter((r) => r.method !== "GET" && !r.path.endsWith("/jobs"));
    expect(writes).toEqual([]);
    await stack.destroy({ color: "never" });
    expect((await world.api.listNetworks({ query: { search: "lc-" } })).data).toEqual([]);
  });
});
