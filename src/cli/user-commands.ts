/**
 * `conch user add|list|delete|passwd` and `conch acl add|list|remove`: the users SASL logins are
 * checked against and the ACL rules, kept in `<data-dir>/security/` (docs/security.md). They work
 * on the data directory itself, with or without a broker running on it (each change is an atomic
 * file replace); a running broker reads them again on SIGHUP. Passwords never come from a flag
 * value: CONCH_USER_PASSWORD or --password-file.
 */
import { type Command, Option } from "commander";
import { passwordInput } from "./password-input.js";

export function dataDirOption(): Option {
  return new Option("--data-dir <path>", "the broker's data directory")
    .env("CONCH_DATA_DIR")
    .default("./data");
}

function passwordOption(): Option {
  return new Option(
    "--password-file <file>",
    "file whose first line is the password; or set CONCH_USER_PASSWORD",
  );
}

/** The new password: from --password-file, else CONCH_USER_PASSWORD. */
function newPassword(o: { passwordFile?: string }): string {
  return passwordInput(o.passwordFile, "--password-file", "CONCH_USER_PASSWORD");
}

const RELOAD_NOTE = "(a running broker uses it after SIGHUP)";

async function openUsers(dataDir: string) {
  const { UserStore } = await import("../security/user-store.js");
  return UserStore.open(dataDir);
}

export function registerUserCommands(program: Command): void {
  const user = program
    .command("user")
    .description("add, list, delete users and change passwords (SASL logins)");
  user
    .command("add")
    .description("add a user with SCRAM-SHA-256 and SCRAM-SHA-512 credentials")
    .argument("<name>", "1-255 characters of [A-Za-z0-9._@-]")
    .addOption(dataDirOption())
    .addOption(passwordOption())
    .action(async (name: string, o: { dataDir: string; passwordFile?: string }) => {
      const password = newPassword(o);
      await (await openUsers(o.dataDir)).add(name, password);
      process.stderr.write(`added user ${name} ${RELOAD_NOTE}\n`);
    });
  user
    .command("passwd")
    .description("set a user's password")
    .argument("<name>", "the user")
    .addOption(dataDirOption())
    .addOption(passwordOption())
    .action(async (name: string, o: { dataDir: string; passwordFile?: string }) => {
      const password = newPassword(o);
      await (await openUsers(o.dataDir)).setPassword(name, password);
      process.stderr.write(`changed the password of ${name} ${RELOAD_NOTE}\n`);
    });
  user
    .command("delete")
    .description("delete a user")
    .argument("<name>", "the user")
    .addOption(dataDirOption())
    .action(async (name: string, o: { dataDir: string }) => {
      await (await openUsers(o.dataDir)).delete(name);
      process.stderr.write(`deleted user ${name} ${RELOAD_NOTE}\n`);
    });
  user
    .command("list")
    .description("print the users, one a line, with their mechanisms")
    .addOption(dataDirOption())
    .action(async (o: { dataDir: string }) => {
      const lines = (await openUsers(o.dataDir))
        .list()
        .map((u) => `${u.name}\t${u.credentials.map((c) => `${c.mechanism}:${c.iterations}`).join(",")}\n`);
      process.stdout.write(lines.join(""));
    });
}
