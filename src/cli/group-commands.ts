/**
 * `conch group list|describe|reset-offsets|delete`: consumer group administration (docs/groups.md).
 * Data goes to stdout; confirmations of a change go to stderr.
 */
import { type Command, Option } from "commander";
import type { Conch } from "../client/conch.js";
import type { GroupInfo, GroupSummary, ResetPosition } from "../client/group-admin.js";
import type { GroupConsumer } from "../client/group-consumer.js";
import { withBroker } from "./client-options.js";
import { withClient } from "./client-session.js";
import { parseStartPosition, type StartPosition } from "./options.js";
import { printLine, printStatus } from "./output.js";
import { planLines, planReset } from "./reset-plan.js";
import { table } from "./table.js";
import { UsageError } from "./usage-error.js";

interface BrokerFlags {
  broker: string;
}

export function registerGroupCommands(program: Command): void {
  const group = program
    .command("group")
    .description("list, describe, reset the offsets of, and delete consumer groups");

  withBroker(
    group
      .command("list")
      .description("print every group: name, kind (native or Kafka), state and member count")
      .option("--json", "print one JSON object a line"),
  ).action(async (o: BrokerFlags & { json?: boolean }) => {
    const groups = await withClient(o, (client) => client.groups().listGroups());
    if (o.json) for (const g of groups) printLine(JSON.stringify(g));
    else for (const line of listLines(groups)) printLine(line);
  });

  withBroker(
    group
      .command("describe")
      .description("print a group's members and, per partition, its owner, committed offset and lag")
      .argument("<group>")
      .option("--json", "print one JSON object instead of tables"),
  ).action(async (name: string, o: BrokerFlags & { json?: boolean }) => {
    const info = await withClient(o, (client) => client.groups().describeGroup(name));
    if (o.json) printLine(JSON.stringify(info));
    else for (const line of describeLines(info)) printLine(line);
  });

  withBroker(
    group
      .command("reset-offsets")
      .description(
        "move a group's committed offsets for every partition of a topic (the group must have no members)",
      )
      .argument("<group>")
      .requiredOption("--topic <topic>", "the topic whose offsets move")
      .addOption(
        new Option("--to <position>", "earliest, latest, an offset, or @<timestamp-ms>")
          .argParser(parseStartPosition)
          .makeOptionMandatory(),
      )
      .option(
        "--dry-run",
        "print the plan only: each partition's committed offset and where it would move (the default)",
      )
      .option("--execute", "move the offsets")
      .addHelpText(
        "after",
        "\nWithout --execute nothing changes: the plan is printed (TOPIC PARTITION CURRENT NEW). The\n" +
          "committed offset is the next one the group reads. An offset is brought into the log's\n" +
          "range; @<timestamp-ms> picks the first message at or after that time. The group must exist.\n\n" +
          "Examples:\n  conch group reset-offsets billing --topic orders --to earliest\n" +
          "  conch group reset-offsets billing --topic orders --to earliest --execute",
      ),
  ).action(
    async (
      name: string,
      o: BrokerFlags & { topic: string; to: StartPosition; dryRun?: boolean; execute?: boolean },
    ) => {
      if (o.dryRun && o.execute) throw new UsageError("--dry-run and --execute do not go together");
      const to = resetPosition(o.to);
      if (!o.execute) {
        const plan = await withClient(o, (client) => planReset(client, name, o.topic, to));
        for (const line of planLines(plan)) printLine(line);
        printStatus("dry run: nothing changed; add --execute to move the offsets");
        return;
      }
      const offsets = await withClient(o, (client) => client.groups().resetOffsets(name, o.topic, to));
      for (const p of offsets) printLine(`${p.topic} ${p.partition} ${p.offset}`);
      printStatus(`reset the offsets of group ${name} on ${o.topic}`);
    },
  );

  withBroker(
    group
      .command("delete")
      .description("forget a group and its committed offsets (the group must have no members)")
      .argument("<group>"),
  ).action(async (name: string, o: BrokerFlags) => {
    await withClient(o, (client) => client.groups().deleteGroup(name));
    printStatus(`deleted group ${name}`);
  });
}

/**
 * The consumer of `conch consume TOPIC --group GROUP`: a member of the group reading the partitions
 * the group gives it from the group's committed offsets; `--from earliest|latest` is where a
 * partition without a commit starts.
 */
export function groupConsumer(
  client: Conch,
  topic: string,
  o: { group: string; from: StartPosition; partition?: number | undefined },
): GroupConsumer {
  return client.consumer({ group: o.group, topics: [topic], resetPolicy: checkGroupFlags(o) });
}

/**
 * Refuses the flags that do not go with --group (a usage error, before anything is sent); returns
 * where a partition the group never committed starts.
 */
export function checkGroupFlags(o: {
  from: StartPosition;
  partition?: number | undefined;
}): "earliest" | "latest" {
  if (o.partition !== undefined) {
    throw new UsageError("--group and --partition do not go together: the group assigns partitions");
  }
  if (o.from.kind !== "earliest" && o.from.kind !== "latest") {
    throw new UsageError(
      "with --group, --from is earliest or latest: where a partition the group never committed starts",
    );
  }
  return o.from.kind;
}

function resetPosition(to: StartPosition): ResetPosition {
  switch (to.kind) {
    case "offset":
      return { offset: to.offset };
    case "timestamp":
      return { timestamp: to.timestampMs };
    default:
      return to.kind;
  }
}

export function listLines(groups: readonly GroupSummary[]): string[] {
  return table([
    ["GROUP", "KIND", "STATE", "MEMBERS"],
    ...groups.map((g) => [g.group, kindText(g), g.state, `${g.members}`]),
  ]);
}

/** "native", "kafka (consumer)", or "-" from a broker that does not say. */
function kindText(g: Pick<GroupSummary, "kind" | "protocolType">): string {
  if (g.kind === undefined) return "-";
  return g.protocolType ? `${g.kind} (${g.protocolType})` : g.kind;
}

/** A header, the members and what each owns, then one row per partition. */
export function describeLines(info: GroupInfo): string[] {
  const lines = [
    `group: ${info.group}`,
    `kind: ${kindText(info)}`,
    `state: ${info.state}`,
    `generation: ${info.generation}`,
    `strategy: ${info.strategy === "" ? "-" : info.strategy}`,
    `members: ${info.members.length}`,
  ];
  if (info.members.length > 0) {
    const rows = [["MEMBER", "CLIENT", "ASSIGNMENT"]];
    for (const m of info.members) {
      const owned = m.assignment.map((a) => `${a.topic}:${a.partitions.join(",")}`).join(" ");
      rows.push([m.memberId, m.clientId, owned === "" ? "-" : owned]);
    }
    lines.push(...table(rows));
  }
  const rows = [["TOPIC", "PARTITION", "OWNER", "COMMITTED", "END", "LAG"]];
  for (const p of info.partitions) {
    rows.push([
      p.topic,
      `${p.partition}`,
      p.owner === "" ? "-" : p.owner,
      p.committed < 0 ? "-" : `${p.committed}`,
      `${p.highWatermark}`,
      p.lag < 0 ? "-" : `${p.lag}`,
    ]);
  }
  lines.push(...table(rows));
  return lines;
}
