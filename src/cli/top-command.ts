/**
 * `conch top`: a live view of topic rates and consumer group lag, read from the broker's HTTP port
 * (the event feed for rates and lag, the admin API for the topics). On a terminal the screen is
 * redrawn every interval; otherwise one plain-text view is printed per interval, each headed by
 * its time, so `conch top | tee` and `conch top --once` work in scripts.
 */
import { type Command, InvalidArgumentError } from "commander";
import { integerParser, parseBrokerAddress } from "./options.js";
import { printLine, printStatus } from "./output.js";
import { getJson, openEventFeed, type Snapshot } from "./top-feed.js";
import { type TopicRow, topLines } from "./top-view.js";

export const DEFAULT_HTTP = "127.0.0.1:7421";
const CLEAR_SCREEN = "\x1b[H\x1b[2J";

interface TopFlags {
  http: string;
  intervalMs: number;
  once?: boolean;
}

export function registerTopCommand(program: Command): void {
  program
    .command("top")
    .description("a live view of topic rates and consumer group lag, from the broker's HTTP port")
    .option("--http <host:port>", "the broker's HTTP port (docs/http-api.md)", parseHttpAddress, DEFAULT_HTTP)
    .option("--interval-ms <ms>", "how often the view is refreshed", integerParser(100, 3_600_000), 1000)
    .option("--once", "print one view (rates over the broker's first second) and exit")
    .action((o: TopFlags) => runTop(o));
}

function parseHttpAddress(text: string): string {
  // A bare host means the default HTTP port, not the client port parseBrokerAddress assumes.
  const withPort = /:\d+$/.test(text) ? text : `${text}:7421`;
  try {
    parseBrokerAddress(withPort);
  } catch {
    throw new InvalidArgumentError(`expected host:port, got "${text}"`);
  }
  return withPort;
}

async function runTop(o: TopFlags): Promise<void> {
  const { host, port } = parseBrokerAddress(o.http);
  const tty = process.stdout.isTTY === true && o.once !== true;
  let latest: Snapshot | null = null;
  let received = 0;
  const previousLag = new Map<string, { lag: number; atMs: number }>();
  let lastShown: Snapshot | null = null;

  const render = async (): Promise<void> => {
    // The feed's first snapshot has zero rates by definition: a view waits for the second.
    if (latest === null || received < 2 || latest === lastShown) return;
    const snapshot = latest;
    const { topics } = await getJson<{ topics: TopicRow[] }>(host, port, "/api/v1/topics");
    const rows = tty ? Math.max(5, (process.stdout.rows ?? 40) - snapshot.groups.length - 6) : undefined;
    const lines = topLines({ snapshot, topics, previousLag }, rows);
    if (lastShown !== null) {
      previousLag.clear();
      for (const g of lastShown.groups) previousLag.set(g.group, { lag: g.lag, atMs: lastShown.timeMs });
    }
    lastShown = snapshot;
    const when = new Date(snapshot.timeMs).toISOString();
    if (tty) {
      process.stdout.write(
        `${CLEAR_SCREEN}conch top  ${o.http}  ${when}  (Ctrl-C to quit)\n\n${lines.join("\n")}\n`,
      );
    } else {
      printLine(`# ${when} ${o.http}`);
      for (const line of lines) printLine(line);
      printLine("");
    }
  };

  await new Promise<void>((resolve, reject) => {
    let close: () => void = () => {};
    let timer: NodeJS.Timeout | null = null;
    let rendering = false;
    let stopped = false;
    const stop = (err: Error | null): void => {
      if (stopped) return;
      stopped = true;
      if (timer !== null) clearInterval(timer);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      close();
      if (err === null) resolve();
      else reject(err);
    };
    const onSignal = (): void => stop(null);
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    const tick = (): void => {
      if (rendering) return;
      rendering = true;
      render().then(
        () => {
          rendering = false;
          if (o.once === true && lastShown !== null) stop(null);
          if (stopped) return;
        },
        (err: unknown) => {
          rendering = false;
          const e = err instanceof Error ? err : new Error(String(err));
          if (o.once === true) stop(e);
          else printStatus(`conch top: ${e.message}`);
        },
      );
    };
    const open = (): void => {
      if (stopped) return;
      close = openEventFeed(host, port, {
        snapshot: (s) => {
          latest = s;
          received++;
          // --once prints as soon as it can instead of waiting out an interval.
          if (o.once === true) tick();
        },
        closed: (err) => {
          const why = err?.message ?? "closed";
          if (o.once === true) return stop(new Error(`cannot read the event feed at ${o.http}: ${why}`));
          // Live: say so, and try again next interval (a broker restart should not end the view).
          printStatus(`conch top: the event feed at ${o.http} ended (${why}); retrying`);
          received = 0;
          setTimeout(open, o.intervalMs).unref();
        },
      });
    };
    open();
    if (o.once !== true) timer = setInterval(tick, o.intervalMs);
  });
}
