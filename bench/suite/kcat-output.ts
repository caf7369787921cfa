// kcat -C with `-f '%S\n'` prints each message's payload length on a line of its own: a few bytes
// per message instead of the payload, so the client's pipe and this parser cost next to nothing,
// and the count and every size can still be checked.

/** The output format the Kafka consume workload passes to kcat (`%S`: the payload's length). */
export const KCAT_LENGTH_FORMAT = "%S\\n";

/**
 * Counts the lines of kcat's `%S\n` output, fed in chunks split anywhere, and the lines whose
 * length is not the expected one (a line that is not a decimal number counts as wrong too).
 */
export class LengthLineCounter {
  readonly #expected: number;
  messages = 0;
  wrongSize = 0;
  /** The value of the line being read; -1 once it held something that is not a digit. */
  #value = 0;
  #digits = 0;

  constructor(expectedLength: number) {
    this.#expected = expectedLength;
  }

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c === 0x0a) {
        this.messages++;
        if (this.#digits === 0 || this.#value !== this.#expected) this.wrongSize++;
        this.#value = 0;
        this.#digits = 0;
      } else if (c >= 0x30 && c <= 0x39 && this.#value >= 0) {
        this.#value = this.#value * 10 + (c - 0x30);
        this.#digits++;
      } else {
        this.#value = -1;
      }
    }
  }

  /** Bytes after the last newline: output cut short (kcat always ends a line). */
  get partial(): boolean {
    return this.#digits > 0 || this.#value !== 0;
  }
}
