/* eslint-disable @typescript-eslint/no-require-imports -- these provider objects are serialized into the stack state
   and run later in Pulumi's dynamic-provider host: they require the implementation by package name at call time
   instead of capturing it. */
import type * as pulumi from "@pulumi/pulumi";
import type { KindName } from "../resources";

/**
 * The dynamic provider of one resource kind. Its methods capture nothing but the kind's name: each requires the
 * package by name when called, so the serialized text holds no secret, no path and no client code. Stacks written by
 * earlier versions hold this object serialized by value, requiring `@cloudinfra/pulumi/provider`: its `dynamicHandlers`
 * stay, and are the ones `@cloudinfra/pulumi/dynamic/host` (./host.ts) gives.
 */
export function providerOf(kind: KindName): pulumi.dynamic.ResourceProvider {
  return {
    async configure(req) {
      require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers.configure(req);
    },
    async check(olds, news) {
      return require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers.check(kind, olds, news);
    },
    async diff(id, olds, news) {
      return require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers.diff(kind, id, olds, news);
    },
    async create(inputs) {
      return require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers.create(kind, inputs);
    },
    async read(id, props) {
      return require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers.read(kind, id, props);
    },
    async update(id, olds, news) {
      return require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers.update(kind, id, olds, news);
    },
    async delete(id, props) {
      return require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers.delete(kind, id, props);
    },
  };
}
