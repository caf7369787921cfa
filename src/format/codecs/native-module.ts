/**
 * Loads a codec's native package on first use, so a broker or SDK that never meets a codec never
 * loads it. A package that is missing or whose binary does not load (an optional dependency that
 * failed to install on this platform) becomes UNSUPPORTED_COMPRESSION naming the package, not a
 * crash at start-up or a bare MODULE_NOT_FOUND.
 */
import { createRequire } from "node:module";
import { ConchError, ErrorCode } from "../errors.js";

const requireFromHere = createRequire(import.meta.url);

/** A lazily loaded module: `get()` loads it once, and remembers a failure as well as a success. */
export class NativeModule<T> {
  readonly #specifier: string;
  readonly #codec: string;
  #module: T | null = null;
  #failure: ConchError | null = null;

  /** `specifier` is what is required; `codec` names the codec in the error. */
  constructor(specifier: string, codec: string) {
    this.#specifier = specifier;
    this.#codec = codec;
  }

  get(): T {
    if (this.#module !== null) return this.#module;
    if (this.#failure !== null) throw this.#failure;
    try {
      this.#module = requireFromHere(this.#specifier) as T;
      return this.#module;
    } catch (err) {
      const packageName = this.#specifier.startsWith("@")
        ? this.#specifier.split("/").slice(0, 2).join("/")
        : (this.#specifier.split("/")[0] ?? this.#specifier);
      this.#failure = new ConchError(
        ErrorCode.UNSUPPORTED_COMPRESSION,
        `${this.#codec} compression needs the npm package ${packageName}, which did not load: ${(err as Error).message.split("\n")[0]}`,
        { cause: err },
      );
      throw this.#failure;
    }
  }
}
