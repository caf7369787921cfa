/**
 * Errors counted by their ConchError code, for the `conch_errors_total` metric. Errors are the
 * rare path, so a small map (empty until the first error) costs nothing while all goes well; an
 * error that is not a ConchError counts as INTERNAL.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export class ErrorCounts {
  readonly #byCode = new Map<number, number>();

  count(err: unknown): void {
    const code = err instanceof ConchError ? err.code : ErrorCode.INTERNAL;
    this.#byCode.set(code, (this.#byCode.get(code) ?? 0) + 1);
  }

  /** Adds every count into `into`, by code. */
  addTo(into: Map<number, number>): void {
    for (const [code, n] of this.#byCode) into.set(code, (into.get(code) ?? 0) + n);
  }
}
