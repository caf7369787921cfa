/**
 * The `conch` program: builds the command tree and turns every failure into one line on stderr
 * and an exit code (0 success, 1 error, 2 usage error). Commands write data to stdout only.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { ConchError } from "../format/errors.js";
import { registerAclCommands } from "./acl-commands.js";
import { registerBenchCommands } from "./bench-commands.js";
import { registerBrokerCommand } from "./broker-command.js";
import { registerConsumeCommand } from "./consume-command.js";
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE } from "./exit-codes.js";
import { registerGroupCommands } from "./group-commands.js";
import { registerLogCommands } from "./log-commands.js";
import { registerProduceCommand } from "./produce-command.js";
import { stdoutClosureClaimed } from "./reader-watch.js";
import { registerTopCommand } from "./top-command.js";
import { registerTopicCommands } from "./topic-commands.js";
import { UsageError } from "./usage-error.js";
import { registerUserCommands } from "./user-commands.js";

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "0.0.0";
}

export function buildProgram(): Command {
  const program = new Command("conch")
    .description("Conch: a persistent, log-structured message broker")
    .version(packageVersion(), "-V, --version", "print the version and exit")
    .helpOption("-h, --help", "show help")
    .helpCommand("help [command]", "show help for a command")
    .showSuggestionAfterError(true);
  registerBrokerCommand(program);
  registerTopicCommands(program);
  registerProduceCommand(program);
  registerConsumeCommand(program);
  registerGroupCommands(program);
  registerBenchCommands(program);
  registerLogCommands(program);
  registerTopCommand(program);
  registerUserCommands(program);
  registerAclCommands(program);
  forEachCommand(program, (c) => c.exitOverride());
  return program;
}

function forEachCommand(command: Command, visit: (c: Command) => void): void {
  visit(command);
  for (const sub of command.commands) forEachCommand(sub, visit);
}

/** Runs the program; resolves with the exit code instead of exiting, so tests can call it too. */
export async function main(argv: string[] = process.argv): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT_OK;
  } catch (err) {
    return reportError(err);
  }
}

/** One line on stderr; the exit code for the kind of failure. */
export function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // Commander has already printed its one-line message (or the help/version text).
    return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  if (err instanceof UsageError) {
    process.stderr.write(`error: ${err.message}\n`);
    return EXIT_USAGE;
  }
  process.stderr.write(`error: ${describeError(err)}\n`);
  return EXIT_ERROR;
}

export function describeError(err: unknown): string {
  if (err instanceof ConchError) return `${err.message} (${err.codeName})`;
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = err.message.split("\n")[0] ?? "";
    return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
  }
  return String(err);
}

/** The entry point of bin/conch.js. */
export function run(): void {
  // A closed stdout (`conch consume | head`) is not an error: the reader has all it wanted. A
  // command that watches for it (consume) finishes first: a group commits what was printed.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") {
      if (!stdoutClosureClaimed()) process.exit(EXIT_OK);
      return;
    }
    process.stderr.write(`error: stdout: ${describeError(err)}\n`);
    process.exit(EXIT_ERROR);
  });
  main().then(exitAfterOutput, (err: unknown) => exitAfterOutput(reportError(err)));
}

/** Exits once stdout has taken everything written to it (handles left open must not keep us alive). */
function exitAfterOutput(code: number): void {
  process.stdout.write("", () => process.exit(code));
}
