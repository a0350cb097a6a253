import { CodedError } from "../../client/error-codes";
import { diffInputs, type DiffResult } from "../diff";
import { containsUnknown, type Props } from "../props";
import { diffSpec } from "./declaration";
import { comparableInterfaces } from "./interfaces";
import { isSize, shrinks } from "./sizes";

const comparableKeys = (value: unknown) =>
  Array.isArray(value) && !containsUnknown(value) ? [...(value as string[])].sort() : value;

export function comparable(props: Props): Props {
  const out: Props = { ...props };
  if (props.networkInterfaces !== undefined) out.networkInterfaces = comparableInterfaces(props.networkInterfaces);
  if (props.sshKeyIds !== undefined) out.sshKeyIds = comparableKeys(props.sshKeyIds);
  return out;
}

/**
 * `olds` are the outputs. A configuration change is in place, unless it is a known shrink and the program allows
 * replacement; a VM whose creation failed (status Error) can only be replaced.
 */
export function diff(id: string, olds: Props, news: Props): DiffResult {
  const result = diffInputs(comparable(olds), comparable(news), diffSpec);
  const replaces = [...result.replaces];
  const current = { cpu: olds.cpu, ram: olds.ram, disk: olds.disk };
  if (
    news.configurationId !== olds.configurationId &&
    news.allowReplaceOnShrink === true &&
    isSize(news.configurationSize) &&
    isSize(current) &&
    shrinks(current, news.configurationSize).length > 0
  ) {
    replaces.push("configurationId");
  }
  if (replaces.length > 0 && news.adoptId === id) {
    throw new CodedError(
      "REPLACE_BLOCKED",
      `VM ${id} was taken over with \`adoptId\` and must now be replaced (${replaces.join(", ")} changed): remove ` +
        "`adoptId` from the program first, else the new VM would take over this one, which the replacement deletes",
    );
  }
  return {
    changes: result.changes || replaces.length > 0,
    replaces,
    stables: result.stables.filter((k) => !replaces.includes(k)),
    deleteBeforeReplace: false,
  };
}
