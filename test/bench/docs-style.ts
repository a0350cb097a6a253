/**
 * A measuring stick for the bench: the provider a user would write by following Pulumi's dynamic-provider docs, for
 * the bench's mix (networks, volumes, VMs). One plain `pulumi.dynamic.ResourceProvider` per kind, `fetch` calls:
 * create = POST, then poll that job alone at a fixed interval until it ends; read = GET; delete = DELETE, then poll
 * its job. No pacing, no batching, no diff (the engine compares inputs). One naive retry rule, the one the API's
 * docs suggest: a 429 waits its Retry-After (1 s when absent) and is sent again, up to 10 times. A volume create
 * first reads the data center's volume sizes (the API's "typical use") to find the size id.
 *
 * Credentials come from `configure` (stack config `cloudinfra:baseUrl`, `cloudinfra:apiKey`), as the docs show.
 * Everything a method needs is defined inside it: the closure serializer captures nothing else but `pollMs`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the docs' providers handle the API's JSON untyped; so does this one */
import * as pulumi from "@pulumi/pulumi";

type Kind = "Network" | "Volume" | "VirtualMachine";

/** The provider of one kind, polling jobs every `pollMs`. */
function docsStyleProvider(kind: Kind, pollMs: number): pulumi.dynamic.ResourceProvider {
  const api = { baseUrl: "", apiKey: "" };
  async function call(method: string, path: string, body?: unknown): Promise<any> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers: { "X-API-Key": api.apiKey, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (response.status === 429 && attempt < 10) {
        const seconds = Number(response.headers.get("retry-after") ?? 1);
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        continue;
      }
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
      return text === "" ? undefined : JSON.parse(text);
    }
  }
  async function waitForJob(jobId: string): Promise<any> {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      const job = (await call("POST", "/resource/jobs", { jobIds: [jobId] })).data.jobs[0];
      if (job.status === "completed") return job;
      if (job.status === "failed") throw new Error(`job ${jobId} failed: ${job.error}`);
    }
  }
  const route = {
    Network: "/resource/networks",
    Volume: "/resource/volumes",
    VirtualMachine: "/resource/virtual-machines",
  }[kind];
  return {
    async configure(req: pulumi.dynamic.ConfigureRequest) {
      api.baseUrl = req.config.get("cloudinfra:baseUrl") ?? "";
      api.apiKey = req.config.get("cloudinfra:apiKey") ?? "";
    },
    async create(inputs: any) {
      const { __provider, ...fields } = inputs; // the engine's copy of this provider is not the API's
      let body = fields;
      if (kind === "Volume") {
        const sizes = (await call("GET", `/resource/data-centers/${inputs.datacenterId}/volume-sizes`)).data;
        const type = sizes.volumeTypes.find((t: any) => t.id === inputs.volumeTypeId);
        const size = type.availableSizes.find((s: any) => s.sizeGb === inputs.sizeGb);
        body = { ...fields, volumeSizeId: size.id };
      }
      const data = (await call("POST", route, body)).data;
      const jobId = Array.isArray(data) ? data[0].id : data.jobId;
      const job = await waitForJob(jobId);
      const id = data.id ?? job.resourceId;
      return { id, outs: { ...inputs, id } };
    },
    async read(id: string, props: any) {
      const data = (await call("GET", `${route}/${id}`)).data;
      return { id, props: { ...props, status: data.status } };
    },
    async delete(id: string) {
      const data = (await call("DELETE", `${route}/${id}`))?.data;
      if (data?.jobId) await waitForJob(data.jobId);
    },
  };
}

/** A resource of one of those providers (dynamic.Resource is abstract; the docs subclass it per kind). */
class DocsStyleResource extends pulumi.dynamic.Resource {
  constructor(provider: pulumi.dynamic.ResourceProvider, kind: Kind, name: string, props: Record<string, unknown>) {
    super(provider, name, props, undefined, "docs", kind);
  }
}

/** The bench's resources through the docs-style providers (one provider object per kind, reused). */
export function docsStyleResources(pollMs: number) {
  const providers = {
    Network: docsStyleProvider("Network", pollMs),
    Volume: docsStyleProvider("Volume", pollMs),
    VirtualMachine: docsStyleProvider("VirtualMachine", pollMs),
  };
  return (kind: Kind, name: string, props: Record<string, unknown>): pulumi.CustomResource =>
    new DocsStyleResource(providers[kind], kind, name, props);
}
