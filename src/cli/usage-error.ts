/**
 * A command line that cannot be right whatever the broker says (options that do not go together,
 * a value only wrong in the company of another): reported like commander's own usage errors, one
 * `error:` line and exit 2, and thrown before anything is sent to a broker.
 */
export class UsageError extends Error {
  override name = "UsageError";
}
