/** The plugin's package name: the `cloudinfra` of `pulumi:providers:cloudinfra` and of every token. */
export const PACKAGE = "cloudinfra";

/** Prefix of the plugin's type tokens: `cloudinfra:index:<Kind>` (and of its function tokens). */
export const TYPE_PREFIX = `${PACKAGE}:index:`;

/** The token of a kind or function, e.g. `cloudinfra:index:Network`, `cloudinfra:index:getVolumeSizes`. */
export const token = (name: string) => `${TYPE_PREFIX}${name}`;
