/**
 * `conch log verify|repair <data-dir>`: offline checks of a data directory's partition logs
 * (docs/design.md, recovery). Both hold the directory's lock while they run, so they refuse a
 * directory a live broker holds. Findings go to stdout, one a line; the summary to stderr.
 */
import { stat } from "node:fs/promises";
import type { Command } from "commander";
import { DataDirLock } from "../broker/data-dir-lock.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { logConfig } from "../storage/config.js";
import { dropDamaged } from "../storage/damage-drop.js";
import { checkPartition, type Finding, partitionDirs } from "../storage/log-check.js";
import { PartitionLog } from "../storage/partition-log.js";
import { EXIT_ERROR } from "./exit-codes.js";
import { printLine, printStatus } from "./output.js";

interface Checked {
  name: string;
  dir: string;
  findings: Finding[];
}

export function registerLogCommands(program: Command): void {
  const log = program
    .command("log")
    .description("check and repair the stored logs of a data directory (offline: stop the broker first)");

  log
    .command("verify")
    .description("check every batch and index of every partition; exit 1 when anything is wrong")
    .argument("<data-dir>", "the broker's data directory")
    .action(async (dataDir: string) => {
      const checked = await withLock(dataDir, () => checkAll(dataDir));
      const problems = checked.reduce((n, c) => n + c.findings.length, 0);
      for (const c of checked) for (const f of c.findings) printLine(describe(c.name, f));
      printStatus(
        `checked ${checked.length} partition(s): ${problems === 0 ? "no problems" : `${problems} problem(s)`}`,
      );
      if (problems > 0) process.exitCode = EXIT_ERROR;
    });

  log
    .command("repair")
    .description(
      "show what would be repaired; with --yes, repair it (damaged ranges stay quarantined unless --drop-damaged)",
    )
    .argument("<data-dir>", "the broker's data directory")
    .option(
      "--drop-damaged",
      "also drop the quarantined ranges: their bytes are removed and their offsets become a gap that reads skip",
    )
    .option("--yes", "carry the repairs out")
    .action(async (dataDir: string, o: { yes?: boolean; dropDamaged?: boolean }) => {
      await withLock(dataDir, async () => {
        const checked = await checkAll(dataDir);
        const drop = o.dropDamaged === true;
        let actions = 0;
        for (const c of checked) {
          for (const f of c.findings) {
            if (drop && isQuarantine(f)) f.repair = `drop it (${dropEffect(f)})`;
            printLine(`${describe(c.name, f)} -> ${f.repair}`);
            if (!f.repair.startsWith("keep")) actions++;
          }
        }
        if (o.yes !== true) {
          printStatus(`dry run: ${actions} repair(s) to make; run again with --yes to make them`);
          return;
        }
        for (const c of checked) {
          const targets = drop ? c.findings.filter(isQuarantine) : [];
          if (targets.length > 0) await dropDamaged(c.dir, targets);
          if (c.findings.some((f) => !f.repair.startsWith("keep"))) await reopen(c.dir);
        }
        const after = await checkAll(dataDir);
        const left = after.reduce((n, c) => n + c.findings.filter((f) => f.kind !== "damaged").length, 0);
        const kept = after.reduce((n, c) => n + c.findings.filter((f) => f.kind === "damaged").length, 0);
        printStatus(`made ${actions} repair(s); ${kept} damaged range(s) stay quarantined`);
        if (left > 0) {
          for (const c of after)
            for (const f of c.findings) if (f.kind !== "damaged") printLine(describe(c.name, f));
          throw new ConchError(ErrorCode.STORAGE_ERROR, `${left} problem(s) remain after the repair`);
        }
      });
    });
}

/** A finding the log keeps quarantined: damaged bytes, or offsets no segment file holds. */
function isQuarantine(f: Finding): boolean {
  return f.kind === "damaged" || f.kind === "missing-offsets";
}

function dropEffect(f: Finding): string {
  const bytes = f.bytes > 0 ? `remove its ${f.bytes} bytes; ` : "";
  return f.lastOffset >= f.firstOffset
    ? `${bytes}offsets ${f.firstOffset}-${f.lastOffset} become a gap that reads skip`
    : `${bytes}they held no offsets`;
}

async function checkAll(dataDir: string): Promise<Checked[]> {
  const out: Checked[] = [];
  for (const [topic, partition, dir] of await partitionDirs(dataDir)) {
    out.push({ name: `${topic}/${partition}`, dir, findings: (await checkPartition(dir)).findings });
  }
  return out;
}

/** Opening a log makes the repairs its recovery makes; retention and compaction get no chance to run. */
async function reopen(dir: string): Promise<void> {
  const log = await PartitionLog.open(dir, logConfig({ retentionMs: -1 }), undefined, {
    retentionCheckMs: 0,
  });
  await log.close();
}

async function withLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const info = await stat(dataDir).catch(() => null);
  if (info === null || !info.isDirectory()) {
    throw new ConchError(ErrorCode.STORAGE_ERROR, `${dataDir} is not a directory`);
  }
  const lock = await DataDirLock.acquire(dataDir);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

function describe(partition: string, f: Finding): string {
  const offsets = f.lastOffset >= f.firstOffset ? ` offsets ${f.firstOffset}-${f.lastOffset}` : "";
  const bytes = f.bytes > 0 ? ` bytes ${f.position}-${f.position + f.bytes}` : "";
  return `${partition} ${f.file} ${f.kind}${bytes}${offsets}: ${f.detail}`;
}
