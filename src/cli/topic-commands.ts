/**
 * `conch topic create|delete|list|describe|alter|reassign`: topic administration (alter adds
 * partitions and changes configs; reassign moves partitions between brokers in cluster mode). Data (names, descriptions) goes to stdout; the confirmation of a change goes to
 * stderr, so scripts can rely on stdout.
 */
import { type Command, Option } from "commander";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { PartitionDescription } from "../protocol/describe-topic.js";
import type { PartitionReassignment } from "../protocol/reassign-partitions.js";
import { withBroker } from "./client-options.js";
import { withClient } from "./client-session.js";
import { collectConfig, integerParser } from "./options.js";
import { printLine, printStatus } from "./output.js";
import { parseReplicaList, readReassignPlan } from "./reassign-plan.js";
import { table } from "./table.js";
import { UsageError } from "./usage-error.js";

const CLEANUP_POLICIES = ["delete", "compact", "compact,delete"] as const;

interface BrokerFlags {
  broker: string;
}

export interface TopicView {
  topic: string;
  partitions: readonly PartitionDescription[];
  configs: Readonly<Record<string, string>>;
}

export function registerTopicCommands(program: Command): void {
  const topic = program.command("topic").description("create, delete, list, describe and alter topics");

  withBroker(
    topic
      .command("create")
      .description("create a topic")
      .argument("<topic>", "topic name: 1-249 characters of [A-Za-z0-9._-]")
      .addOption(
        new Option("-p, --partitions <n>", "number of partitions")
          .argParser(integerParser(1, 10_000))
          .default(1),
      )
      .addOption(
        new Option("--cleanup-policy <policy>", "cleanup.policy of the topic").choices(CLEANUP_POLICIES),
      )
      .addOption(
        new Option(
          "--replication-factor <n>",
          "cluster mode: replicas of each partition (default: the broker's --default-replication-factor)",
        ).argParser(integerParser(1, 1000)),
      )
      .addOption(configOption())
      .option(
        "--if-not-exists",
        "succeed without change when the topic exists (its settings are not compared)",
      )
      .addHelpText(
        "after",
        "\nExample:\n  conch topic create orders --partitions 3 --config retention.ms=86400000",
      ),
  ).action(
    async (
      name: string,
      o: BrokerFlags & {
        partitions: number;
        cleanupPolicy?: string;
        replicationFactor?: number;
        config?: Record<string, string>;
        ifNotExists?: boolean;
      },
    ) => {
      const configs = { ...o.config };
      if (o.cleanupPolicy !== undefined) configs["cleanup.policy"] = o.cleanupPolicy;
      if (o.replicationFactor !== undefined) configs["replication.factor"] = String(o.replicationFactor);
      try {
        await withClient(o, (c) => c.admin().createTopic(name, { partitions: o.partitions, configs }));
      } catch (err) {
        if (!(o.ifNotExists && err instanceof ConchError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) {
          throw err;
        }
        printStatus(`topic ${name} already exists`);
        return;
      }
      printStatus(`created topic ${name} with ${plural(o.partitions, "partition")}`);
    },
  );

  withBroker(
    topic.command("delete").description("delete a topic and all its data").argument("<topic>"),
  ).action(async (name: string, o: BrokerFlags) => {
    await withClient(o, (c) => c.admin().deleteTopic(name));
    printStatus(`deleted topic ${name}`);
  });

  withBroker(
    topic
      .command("list")
      .description("print the names of all topics (of the cluster, in cluster mode), one a line"),
  ).action(async (o: BrokerFlags) => {
    const names = await withClient(o, (c) => c.admin().listTopics());
    for (const name of [...names].sort()) printLine(name);
  });

  withBroker(
    topic
      .command("describe")
      .description(
        "print a topic's configs and each partition's earliest and latest offsets (in a cluster, also its leader, replicas and ISR)",
      )
      .argument("<topic>")
      .option("--json", "print one JSON object instead of a table"),
  ).action(async (name: string, o: BrokerFlags & { json?: boolean }) => {
    const view = await withClient(o, (c) => c.admin().describeTopic(name));
    if (o.json) printLine(JSON.stringify(describeJson(view)));
    else for (const line of describeLines(view)) printLine(line);
  });

  withBroker(
    topic
      .command("alter")
      .description("add partitions to a topic, or change its configs")
      .argument("<topic>")
      .addOption(
        new Option("-p, --partitions <n>", "grow the topic to this many partitions in all").argParser(
          integerParser(1, 10_000),
        ),
      )
      .addOption(configOption())
      .addHelpText(
        "after",
        "\nAt least one of --partitions and --config. A topic only grows: its partitions keep their data,\n" +
          "and keyed messages may map to other partitions from then on.\n\n" +
          "Examples:\n  conch topic alter orders --partitions 6\n" +
          "  conch topic alter orders --config retention.ms=3600000 --config flush=sync",
      ),
  ).action(
    async (name: string, o: BrokerFlags & { partitions?: number; config?: Record<string, string> }) => {
      const configs = o.config;
      if (o.partitions === undefined && configs === undefined) {
        throw new UsageError("topic alter needs --partitions or --config");
      }
      await withClient(o, async (c) => {
        if (o.partitions !== undefined) {
          await c.admin().createPartitions(name, o.partitions);
          printStatus(`topic ${name} now has ${plural(o.partitions, "partition")}`);
        }
        if (configs !== undefined) {
          await c.admin().alterTopic(name, configs);
          printStatus(`altered topic ${name}: ${Object.keys(configs).join(", ")}`);
        }
      });
    },
  );
  withBroker(
    topic
      .command("reassign")
      .description("move partitions to other brokers (cluster mode)")
      .argument("[topic]")
      .addOption(new Option("--partition <p>", "the partition to move").argParser(integerParser(0, 9_999)))
      .option(
        "--replicas <ids>",
        "its new replicas, broker ids separated by commas, the preferred leader first",
      )
      .option("--plan <file>", 'a JSON plan: {"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]}')
      .addHelpText(
        "after",
        "\nThe new replicas copy the partition while producers and consumers keep running; once they are\n" +
          "in sync the old ones are dropped (their data deleted), and the first replica leads.\n\n" +
          "Examples:\n  conch topic reassign orders --partition 0 --replicas 4,2,3\n" +
          "  conch topic reassign --plan moves.json",
      ),
  ).action(
    async (
      name: string | undefined,
      o: BrokerFlags & { partition?: number; replicas?: string; plan?: string },
    ) => {
      let moves: PartitionReassignment[];
      if (o.plan !== undefined) {
        if (name !== undefined || o.partition !== undefined || o.replicas !== undefined)
          throw new UsageError("--plan goes alone: the plan names the topics, partitions and replicas");
        moves = await readReassignPlan(o.plan);
      } else {
        if (name === undefined || o.partition === undefined || o.replicas === undefined)
          throw new UsageError(
            "topic reassign needs <topic> --partition <p> --replicas <ids>, or --plan <file>",
          );
        moves = [{ topic: name, partition: o.partition, replicas: parseReplicaList(o.replicas) }];
      }
      await withClient(o, (c) => c.admin().reassignPartitions(moves));
      for (const m of moves)
        printStatus(`reassigning ${m.topic}/${m.partition} to brokers ${m.replicas.join(",")}`);
    },
  );
}

function configOption(): Option {
  return new Option(
    "-c, --config <key=value>",
    "topic config (repeatable), e.g. retention.ms=3600000",
  ).argParser(collectConfig);
}

/**
 * The human form: a header, the configs, one row per partition, then a line per quarantined range
 * (stored data that failed its check; none for a healthy topic).
 */
export function describeLines(view: TopicView): string[] {
  const lines = [`topic: ${view.topic}`, `partitions: ${view.partitions.length}`];
  const keys = Object.keys(view.configs).sort();
  for (const key of keys) lines.push(`config: ${key}=${view.configs[key]}`);
  const placement = placed(view);
  const rows = [["PARTITION", "EARLIEST", "LATEST", ...(placement ? ["LEADER", "REPLICAS", "ISR"] : [])]];
  for (const p of view.partitions) {
    const known = p.figuresKnown !== false;
    const row = [`${p.partition}`, known ? `${p.logStartOffset}` : "-", known ? `${p.highWatermark}` : "-"];
    if (placement) row.push(leaderText(p.leaderId), (p.replicas ?? []).join(","), (p.isr ?? []).join(","));
    rows.push(row);
  }
  lines.push(...table(rows));
  const unknown = view.partitions.filter((p) => p.figuresKnown === false).map((p) => p.partition);
  if (unknown.length > 0) {
    const list = partitionList(unknown);
    // A single-node broker lacks a partition's offsets only while recovering it after a crash.
    lines.push(
      placement
        ? `offsets not known here: ${list} (no leader, or it did not answer in time)`
        : `offsets not known yet: ${list} (still being recovered after a crash; ask again)`,
    );
  }
  for (const p of view.partitions) {
    for (const q of p.quarantined ?? []) {
      lines.push(
        `quarantined: partition ${p.partition} offsets ${q.firstOffset}-${q.lastOffset} in ${q.segment}: ${q.reason}`,
      );
    }
  }
  return lines;
}

export function describeJson(view: TopicView): object {
  const placement = placed(view);
  return {
    topic: view.topic,
    partitions: view.partitions.map((p) => ({
      partition: p.partition,
      // null: not known here (cluster mode: its leader did not answer in time; a single node: the
      // partition is still being recovered after a crash).
      earliest: p.figuresKnown === false ? null : p.logStartOffset,
      latest: p.figuresKnown === false ? null : p.highWatermark,
      ...(placement ? { leader: p.leaderId ?? -1, replicas: p.replicas ?? [], isr: p.isr ?? [] } : {}),
      // Only a partition with damaged data gets the key, so a healthy topic's JSON is unchanged.
      ...(p.quarantined !== undefined && p.quarantined.length > 0
        ? {
            quarantined: p.quarantined.map((q) => ({
              firstOffset: q.firstOffset,
              lastOffset: q.lastOffset,
              segment: q.segment,
              reason: q.reason,
            })),
          }
        : {}),
    })),
    configs: view.configs,
  };
}

/**
 * Whether to show each partition's leader, replicas and ISR: for a cluster's topic, not for a
 * single-node broker's (which describes itself as broker 0 leading every partition alone), so the
 * single-node output stays as it was.
 */
function placed(view: TopicView): boolean {
  return view.partitions.some(
    (p) => p.replicas !== undefined && !(p.leaderId === 0 && p.replicas.length === 1 && p.replicas[0] === 0),
  );
}

/** "partition 4", or "partitions 0-2, 7": runs of consecutive numbers as ranges, so 10,000 stay one short line. */
function partitionList(partitions: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < partitions.length; ) {
    const first = partitions[i]!;
    let last = first;
    while (partitions[++i] === last + 1) last++;
    runs.push(last === first ? `${first}` : `${first}-${last}`);
  }
  return `${partitions.length === 1 ? "partition" : "partitions"} ${runs.join(", ")}`;
}

function leaderText(leaderId: number | undefined): string {
  return leaderId === undefined || leaderId < 0 ? "none" : `${leaderId}`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
