/**
 * Splits a byte stream into lines without decoding it: each line is reported as a range of a
 * buffer (`\n` excluded, and a `\r` just before it too), so no string or view is made per line.
 * A line split across chunks is joined once, when its end arrives.
 */
export type LineHandler = (buf: Buffer, start: number, end: number) => void;

const LF = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  /** Pieces of a line whose end has not arrived yet. */
  #pieces: Buffer[] = [];
  #pieceBytes = 0;

  /** Reports every line completed by `chunk`. */
  push(chunk: Buffer, onLine: LineHandler): void {
    let start = 0;
    let nl = chunk.indexOf(LF);
    if (nl >= 0 && this.#pieceBytes > 0) {
      this.#pieces.push(chunk.subarray(0, nl));
      const joined = Buffer.concat(this.#pieces, this.#pieceBytes + nl);
      this.#pieces = [];
      this.#pieceBytes = 0;
      emit(joined, 0, joined.length, onLine);
      start = nl + 1;
      nl = chunk.indexOf(LF, start);
    }
    while (nl >= 0) {
      emit(chunk, start, nl, onLine);
      start = nl + 1;
      nl = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) {
      this.#pieces.push(chunk.subarray(start));
      this.#pieceBytes += chunk.length - start;
    }
  }

  /** Reports the last line when the input did not end with a newline. */
  end(onLine: LineHandler): void {
    if (this.#pieceBytes === 0) return;
    const joined = Buffer.concat(this.#pieces, this.#pieceBytes);
    this.#pieces = [];
    this.#pieceBytes = 0;
    emit(joined, 0, joined.length, onLine);
  }
}

function emit(buf: Buffer, start: number, end: number, onLine: LineHandler): void {
  onLine(buf, start, end > start && buf[end - 1] === CR ? end - 1 : end);
}

/** The first occurrence of `sep` in buf[start, end), or -1. */
export function indexOfIn(buf: Buffer, sep: Buffer, start: number, end: number): number {
  const first = sep[0];
  const last = end - sep.length;
  for (let i = start; i <= last; i++) {
    if (buf[i] !== first) continue;
    let j = 1;
    while (j < sep.length && buf[i + j] === sep[j]) j++;
    if (j === sep.length) return i;
  }
  return -1;
}
