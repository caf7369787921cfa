/**
 * The broker's ACL rules: `<dataDir>/security/acls.json`, written like the user store (whole,
 * temporary file, fsync, rename, directory fsync), and the `Authorizer` built from them, rebuilt
 * after each change. Sessions read `store.authorizer` when they check; a change is seen by the
 * next check on every connection, with no restart.
 */
import {
  type AclFilter,
  type AclRule,
  aclRuleProblem,
  checkAclRule,
  matchesFilter,
  normalizeRule,
  ruleKey,
} from "./acl-rule.js";
import { Authorizer, type AuthorizerOptions } from "./authorizer.js";
import { StoreFile, type StoreFileOptions } from "./store-file.js";

export const ACLS_FILE = "acls.json";
const FORMAT_VERSION = 1;

export class AclStore {
  readonly #file: StoreFile;
  readonly #options: AuthorizerOptions;
  #authorizer: Authorizer;

  private constructor(file: StoreFile, rules: AclRule[], options: AuthorizerOptions) {
    this.#file = file;
    this.#options = options;
    this.#authorizer = new Authorizer(rules, options);
  }

  /** Reads the rules of `dataDir` (none when there is no file); a damaged file is an error. */
  static async open(dataDir: string, options: AuthorizerOptions & StoreFileOptions = {}): Promise<AclStore> {
    const { file, document } = await StoreFile.open(dataDir, ACLS_FILE, options);
    const superUsers = options.superUsers === undefined ? {} : { superUsers: options.superUsers };
    return new AclStore(file, document === null ? [] : parseRules(file, document), superUsers);
  }

  get path(): string {
    return this.#file.path;
  }

  get authorizer(): Authorizer {
    return this.#authorizer;
  }

  /** The rules that match `filter` (all of them without one), in the order they were added. */
  list(filter: AclFilter = {}): AclRule[] {
    return this.#authorizer.rules.filter((rule) => matchesFilter(rule, filter));
  }

  /** Adds rules (each checked first; none is added if one is invalid); resolves with how many were new. */
  async add(rules: readonly AclRule[]): Promise<number> {
    for (const rule of rules) checkAclRule(rule);
    return this.#replace((current) => {
      const seen = new Set(current.map(ruleKey));
      const added = rules.map(normalizeRule).filter((rule) => {
        const key = ruleKey(rule);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      return { next: [...current, ...added], result: added.length };
    });
  }

  /** Removes the rules that match `filter`; resolves with them. An empty filter removes every rule. */
  remove(filter: AclFilter): Promise<AclRule[]> {
    return this.#replace((current) => ({
      next: current.filter((rule) => !matchesFilter(rule, filter)),
      result: current.filter((rule) => matchesFilter(rule, filter)),
    }));
  }

  #replace<T>(change: (current: readonly AclRule[]) => { next: AclRule[]; result: T }): Promise<T> {
    return this.#file.update(() => {
      const { next, result } = change(this.#authorizer.rules);
      const apply = () => (this.#authorizer = new Authorizer(next, this.#options));
      return { document: { version: FORMAT_VERSION, rules: next }, result, apply };
    });
  }
}

function parseRules(file: StoreFile, document: unknown): AclRule[] {
  const doc = document as { version?: unknown; rules?: unknown } | null;
  if (
    typeof doc !== "object" ||
    doc === null ||
    doc.version !== FORMAT_VERSION ||
    !Array.isArray(doc.rules)
  ) {
    throw file.invalid(`expected {"version": ${FORMAT_VERSION}, "rules": [...]}`);
  }
  return doc.rules.map((rule: unknown, i) => {
    const problem = aclRuleProblem(rule);
    if (problem !== null) throw file.invalid(`rules[${i}]: ${problem}`);
    return normalizeRule(rule as AclRule);
  });
}
