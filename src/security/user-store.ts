/**
 * The broker's users: `<dataDir>/security/users.json`, holding for each user one salted SCRAM
 * credential per mechanism, never a password (docs/security.md has the file's layout). Made for
 * `conch user add|list|delete|passwd` and the admin API; the SASL servers look credentials up in
 * it synchronously, from memory.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { CredentialLookup } from "./sasl-server.js";
import {
  DEFAULT_SCRAM_ITERATIONS,
  deriveScramCredential,
  isScramMechanism,
  SCRAM_MECHANISMS,
  type ScramCredential,
  type ScramMechanism,
  scramCredentialProblem,
} from "./scram-credential.js";
import { isBase64 } from "./scram-messages.js";
import { StoreFile, type StoreFileOptions } from "./store-file.js";
import { checkPassword, checkUserName, userNameProblem } from "./user-name.js";

export const USERS_FILE = "users.json";
const FORMAT_VERSION = 1;

export interface UserInfo {
  readonly name: string;
  readonly credentials: readonly { mechanism: ScramMechanism; iterations: number }[];
}

export interface CredentialOptions {
  /** Default: both SCRAM mechanisms, so the user can log in with either (and with PLAIN). */
  mechanisms?: readonly ScramMechanism[];
  iterations?: number;
}

type Credentials = ReadonlyMap<ScramMechanism, ScramCredential>;

export class UserStore implements CredentialLookup {
  readonly #file: StoreFile;
  #users: Map<string, Credentials>;

  private constructor(file: StoreFile, users: Map<string, Credentials>) {
    this.#file = file;
    this.#users = users;
  }

  /** Reads the store of `dataDir` (empty when there is none); a damaged file is an error, not an empty store. */
  static async open(dataDir: string, options: StoreFileOptions = {}): Promise<UserStore> {
    const { file, document } = await StoreFile.open(dataDir, USERS_FILE, options);
    return new UserStore(file, document === null ? new Map() : parseUsers(file, document));
  }

  get path(): string {
    return this.#file.path;
  }

  scramCredential(user: string, mechanism: ScramMechanism): ScramCredential | undefined {
    return this.#users.get(user)?.get(mechanism);
  }

  has(name: string): boolean {
    return this.#users.has(name);
  }

  /** Users by name, with their mechanisms and iteration counts (no salts or keys). */
  list(): UserInfo[] {
    return [...this.#users.keys()].sort().map((name) => ({
      name,
      credentials: [...(this.#users.get(name)?.values() ?? [])].map(({ mechanism, iterations }) => ({
        mechanism,
        iterations,
      })),
    }));
  }

  /** Adds a user; USER_ALREADY_EXISTS if the name is taken. */
  async add(name: string, password: string, options: CredentialOptions = {}): Promise<void> {
    checkUserName(name);
    const credentials = await makeCredentials(password, options);
    await this.#change(name, (exists) => {
      if (exists) throw new ConchError(ErrorCode.USER_ALREADY_EXISTS, `User ${name} already exists`);
      return credentials;
    });
  }

  /** Replaces a user's credentials; UNKNOWN_USER if there is no such user. Open sessions stay open. */
  async setPassword(name: string, password: string, options: CredentialOptions = {}): Promise<void> {
    checkUserName(name);
    const credentials = await makeCredentials(password, options);
    await this.#change(name, (exists) => {
      if (!exists) throw new ConchError(ErrorCode.UNKNOWN_USER, `No user ${name}`);
      return credentials;
    });
  }

  /** Deletes a user; UNKNOWN_USER if there is no such user. */
  async delete(name: string): Promise<void> {
    await this.#change(name, (exists) => {
      if (!exists) throw new ConchError(ErrorCode.UNKNOWN_USER, `No user ${name}`);
      return null;
    });
  }

  /** Sets (or with null removes) `name`'s credentials once the file holds the change. */
  #change(name: string, decide: (exists: boolean) => Credentials | null): Promise<void> {
    return this.#file.update(() => {
      const next = new Map(this.#users);
      const credentials = decide(next.has(name));
      if (credentials === null) next.delete(name);
      else next.set(name, credentials);
      return { document: formatUsers(next), result: undefined, apply: () => (this.#users = next) };
    });
  }
}

async function makeCredentials(password: string, options: CredentialOptions): Promise<Credentials> {
  checkPassword(password);
  const mechanisms = options.mechanisms ?? SCRAM_MECHANISMS;
  if (mechanisms.length === 0)
    throw new ConchError(ErrorCode.INVALID_REQUEST, "At least one SCRAM mechanism is needed");
  const iterations = options.iterations ?? DEFAULT_SCRAM_ITERATIONS;
  const made = new Map<ScramMechanism, ScramCredential>();
  for (const mechanism of mechanisms)
    made.set(mechanism, await deriveScramCredential(mechanism, password, { iterations }));
  return made;
}

function formatUsers(users: ReadonlyMap<string, Credentials>): object {
  return {
    version: FORMAT_VERSION,
    users: [...users].map(([name, credentials]) => ({
      name,
      credentials: [...credentials.values()].map((c) => ({
        mechanism: c.mechanism,
        salt: c.salt.toString("base64"),
        iterations: c.iterations,
        storedKey: c.storedKey.toString("base64"),
        serverKey: c.serverKey.toString("base64"),
      })),
    })),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every field of every entry checked; the first problem found is the error. */
function parseUsers(file: StoreFile, document: unknown): Map<string, Credentials> {
  if (!isRecord(document) || document.version !== FORMAT_VERSION || !Array.isArray(document.users)) {
    throw file.invalid(`expected {"version": ${FORMAT_VERSION}, "users": [...]}`);
  }
  const users = new Map<string, Credentials>();
  for (const [i, entry] of document.users.entries()) {
    const where = `users[${i}]`;
    if (!isRecord(entry) || !Array.isArray(entry.credentials) || entry.credentials.length === 0) {
      throw file.invalid(`${where} needs a name and credentials`);
    }
    const problem = userNameProblem(entry.name);
    if (problem !== null) throw file.invalid(`${where}: ${problem}`);
    const name = entry.name as string;
    if (users.has(name)) throw file.invalid(`${where}: user ${name} appears twice`);
    const credentials = new Map<ScramMechanism, ScramCredential>();
    for (const c of entry.credentials as unknown[]) {
      const credential = parseCredential(c);
      if (typeof credential === "string") throw file.invalid(`${where}: ${credential}`);
      if (credentials.has(credential.mechanism))
        throw file.invalid(`${where}: ${credential.mechanism} twice`);
      credentials.set(credential.mechanism, credential);
    }
    users.set(name, credentials);
  }
  return users;
}

/** A credential, or what is wrong with it. */
function parseCredential(c: unknown): ScramCredential | string {
  if (!isRecord(c)) return "a credential must be an object";
  const { mechanism, iterations, salt, storedKey, serverKey } = c;
  if (typeof mechanism !== "string" || !isScramMechanism(mechanism)) return "unknown mechanism";
  if (typeof iterations !== "number") return "iterations must be a number";
  for (const field of [salt, storedKey, serverKey]) {
    if (typeof field !== "string" || !isBase64(field)) return "salt and keys must be base64";
  }
  const credential: ScramCredential = {
    mechanism,
    iterations,
    salt: Buffer.from(salt as string, "base64"),
    storedKey: Buffer.from(storedKey as string, "base64"),
    serverKey: Buffer.from(serverKey as string, "base64"),
  };
  return scramCredentialProblem(credential) ?? credential;
}
