/**
 * A small engine of our own for the plugin: a ProviderServer in this process (its engine log captured) and a gRPC
 * client that speaks to it as the engine does, with plain values in and out (secrets and unknowns in Pulumi's wire
 * form, so tests see exactly what the engine would).
 */
import * as grpc from "@grpc/grpc-js";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import * as provider from "@pulumi/pulumi/proto/provider_pb";
import * as providerRpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import { UNKNOWN } from "../../provider/resources/props";
import { ProviderServer, type EngineLine } from "../../provider/plugin/server";

export { UNKNOWN };

export const SECRET = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
export type Props = Record<string, unknown>;

/** A value as the engine sends a secret. */
export const secret = (value: unknown) => ({ [SECRET]: SECRET_SIG, value });
export const isSecret = (value: unknown) =>
  value !== null && typeof value === "object" && (value as Props)[SECRET] === SECRET_SIG;

export const struct = (props: Props) => Struct.fromJavaScript(JSON.parse(JSON.stringify(props)) as never);
export const plain = (s: Struct | undefined): Props => (s?.toJavaScript() ?? {}) as Props;
export const urnOf = (kind: string, name: string) => `urn:pulumi:test::plugin::cloudinfra:index:${kind}::${name}`;

/** A client method (its overloads erased: the response type is given at the call). */
type Method = (...args: never[]) => unknown;

export interface Driver {
  client: providerRpc.ResourceProviderClient;
  /** Every line the plugin sent to the engine's log. */
  lines: EngineLine[];
  /** Calls one RPC; a gRPC error rejects with its message (and metadata). */
  call<Res>(method: Method, request: unknown): Promise<Res>;
  configure(settings: Props): Promise<provider.ConfigureResponse>;
  checkConfig(news: Props): Promise<{ inputs: Props; failures: { property: string; reason: string }[] }>;
  check(
    kind: string,
    news: Props,
    olds?: Props,
  ): Promise<{ inputs: Props; failures: { property: string; reason: string }[] }>;
  create(
    kind: string,
    name: string,
    inputs: Props,
    options?: { preview?: boolean; timeout?: number },
  ): Promise<{ id: string; outs: Props }>;
  read(
    kind: string,
    name: string,
    id: string,
    props?: Props,
    inputs?: Props,
  ): Promise<{ id: string; outs: Props; inputs: Props }>;
  diff(kind: string, id: string, olds: Props, news: Props, oldInputs?: Props): Promise<provider.DiffResponse>;
  update(kind: string, name: string, id: string, olds: Props, news: Props): Promise<Props>;
  delete(kind: string, name: string, id: string, props: Props): Promise<void>;
  invoke(token: string, args: Props): Promise<{ result: Props; failures: { property: string; reason: string }[] }>;
  close(): void;
}

/** A plugin server in this process and a client of it. */
export async function startDriver(): Promise<Driver> {
  const lines: EngineLine[] = [];
  const server = new ProviderServer({ log: (line) => lines.push(line) });
  const port = await server.listen(0);
  const client = new providerRpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = <Res>(method: Method, request: unknown) =>
    new Promise<Res>((resolve, reject) => {
      const callback = (error: grpc.ServiceError | null, response: Res) => (error ? reject(error) : resolve(response));
      (method as unknown as (r: unknown, cb: typeof callback) => unknown).call(client, request, callback);
    });
  const failuresOf = (list: provider.CheckFailure[]) =>
    list.map((f) => ({ property: f.getProperty(), reason: f.getReason() }));
  return {
    client,
    lines,
    call,
    configure: (settings) =>
      call<provider.ConfigureResponse>(
        client.configure,
        new provider.ConfigureRequest().setArgs(struct(settings)).setAcceptsecrets(true).setAcceptresources(true),
      ),
    async checkConfig(news) {
      const request = new provider.CheckRequest()
        .setUrn("urn:pulumi:test::plugin::pulumi:providers:cloudinfra::default")
        .setType("pulumi:providers:cloudinfra")
        .setOlds(struct({}))
        .setNews(struct(news));
      const response = await call<provider.CheckResponse>(client.checkConfig, request);
      return { inputs: plain(response.getInputs()), failures: failuresOf(response.getFailuresList()) };
    },
    async check(kind, news, olds = {}) {
      const request = new provider.CheckRequest()
        .setUrn(urnOf(kind, "r"))
        .setType(`cloudinfra:index:${kind}`)
        .setOlds(struct(olds))
        .setNews(struct(news));
      const response = await call<provider.CheckResponse>(client.check, request);
      return { inputs: plain(response.getInputs()), failures: failuresOf(response.getFailuresList()) };
    },
    async create(kind, name, inputs, options = {}) {
      const request = new provider.CreateRequest()
        .setUrn(urnOf(kind, name))
        .setType(`cloudinfra:index:${kind}`)
        .setProperties(struct(inputs))
        .setPreview(options.preview ?? false)
        .setTimeout(options.timeout ?? 0);
      const response = await call<provider.CreateResponse>(client.create, request);
      return { id: response.getId(), outs: plain(response.getProperties()) };
    },
    async read(kind, name, id, props = {}, inputs = {}) {
      const request = new provider.ReadRequest()
        .setUrn(urnOf(kind, name))
        .setType(`cloudinfra:index:${kind}`)
        .setId(id)
        .setProperties(struct(props))
        .setInputs(struct(inputs));
      const response = await call<provider.ReadResponse>(client.read, request);
      return { id: response.getId(), outs: plain(response.getProperties()), inputs: plain(response.getInputs()) };
    },
    diff(kind, id, olds, news, oldInputs = {}) {
      const request = new provider.DiffRequest()
        .setUrn(urnOf(kind, "r"))
        .setType(`cloudinfra:index:${kind}`)
        .setId(id)
        .setOlds(struct(olds))
        .setNews(struct(news))
        .setOldInputs(struct(oldInputs));
      return call<provider.DiffResponse>(client.diff, request);
    },
    async update(kind, name, id, olds, news) {
      const request = new provider.UpdateRequest()
        .setUrn(urnOf(kind, name))
        .setType(`cloudinfra:index:${kind}`)
        .setId(id)
        .setOlds(struct(olds))
        .setNews(struct(news));
      return plain((await call<provider.UpdateResponse>(client.update, request)).getProperties());
    },
    async delete(kind, name, id, props) {
      const request = new provider.DeleteRequest()
        .setUrn(urnOf(kind, name))
        .setType(`cloudinfra:index:${kind}`)
        .setId(id)
        .setProperties(struct(props));
      await call<Empty>(client.delete, request);
    },
    async invoke(token, args) {
      const response = await call<provider.InvokeResponse>(
        client.invoke,
        new provider.InvokeRequest().setTok(token).setArgs(struct(args)),
      );
      return { result: plain(response.getReturn()), failures: failuresOf(response.getFailuresList()) };
    },
    close() {
      client.close();
      server.close();
    },
  };
}

/** The error of a promise that must fail. */
export async function failure(promise: Promise<unknown>): Promise<grpc.ServiceError> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: grpc.ServiceError) => error,
  );
}
