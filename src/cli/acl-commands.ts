/**
 * `conch acl add|list|remove`: the ACL rules of `<data-dir>/security/acls.json` (docs/security.md),
 * changed like the users (user-commands.ts): on the data directory, read by a running broker on
 * SIGHUP. `list` prints one rule a line, tab-separated: principal, permission, operation, resource
 * type, pattern type, name.
 */
import { type Command, Option } from "commander";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { AclFilter, AclRule } from "../security/acl-rule.js";
import { dataDirOption } from "./user-commands.js";

interface AclFlags {
  dataDir: string;
  principal?: string;
  permission?: "allow" | "deny";
  operation?: string;
  resourceType?: "topic" | "group" | "cluster";
  pattern?: "literal" | "prefixed";
  name?: string;
}

function withRuleOptions(command: Command, adding: boolean): Command {
  const permission = new Option("--permission <permission>", "allow or deny").choices(["allow", "deny"]);
  const pattern = new Option("--pattern <type>", "literal (the name, or * for all) or prefixed").choices([
    "literal",
    "prefixed",
  ]);
  return command
    .addOption(dataDirOption())
    .addOption(new Option("--principal <principal>", "User:<name>, or User:* for every principal"))
    .addOption(adding ? permission.default("allow") : permission)
    .addOption(new Option("--operation <operation>", "read, write, create, delete, alter, describe or all"))
    .addOption(
      new Option("--resource-type <type>", "topic, group or cluster").choices(["topic", "group", "cluster"]),
    )
    .addOption(adding ? pattern.default("literal") : pattern)
    .addOption(new Option("--name <name>", "topic or group name (or prefix), cluster for the cluster"));
}

function filterOf(o: AclFlags): AclFilter {
  const filter: Record<string, string> = {};
  if (o.principal !== undefined) filter.principal = o.principal;
  if (o.permission !== undefined) filter.permission = o.permission;
  if (o.operation !== undefined) filter.operation = o.operation;
  if (o.resourceType !== undefined) filter.resourceType = o.resourceType;
  if (o.pattern !== undefined) filter.patternType = o.pattern;
  if (o.name !== undefined) filter.name = o.name;
  return filter as AclFilter;
}

async function openAcls(dataDir: string) {
  const { AclStore } = await import("../security/acl-store.js");
  return AclStore.open(dataDir);
}

const line = (r: AclRule): string =>
  `${r.principal}\t${r.permission}\t${r.operation}\t${r.resourceType}\t${r.patternType}\t${r.name}\n`;

export function registerAclCommands(program: Command): void {
  const acl = program.command("acl").description("add, list and remove ACL rules (with --authorization on)");
  withRuleOptions(acl.command("add").description("add a rule"), true).action(async (o: AclFlags) => {
    // The store checks every field and names what is wrong or missing.
    const rule = {
      ...filterOf(o),
      name: o.name ?? (o.resourceType === "cluster" ? "cluster" : ""),
    } as AclRule;
    await (await openAcls(o.dataDir)).add([rule]);
    process.stderr.write(
      `added ${line(rule).trimEnd().replaceAll("\t", " ")} (a running broker uses it after SIGHUP)\n`,
    );
  });
  withRuleOptions(
    acl.command("list").description("print the rules matching the options given"),
    false,
  ).action(async (o: AclFlags) => {
    process.stdout.write((await openAcls(o.dataDir)).list(filterOf(o)).map(line).join(""));
  });
  withRuleOptions(
    acl.command("remove").description("remove the rules matching the options given"),
    false,
  ).action(async (o: AclFlags) => {
    const filter = filterOf(o);
    if (Object.keys(filter).length === 0) {
      throw new ConchError(
        ErrorCode.INVALID_REQUEST,
        "acl remove needs at least one option to match rules by",
      );
    }
    const removed = await (await openAcls(o.dataDir)).remove(filter);
    process.stderr.write(`removed ${removed.length} rule(s) (a running broker uses it after SIGHUP)\n`);
  });
}
