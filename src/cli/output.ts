/**
 * Where a command's words go: data to stdout, everything people read about what happened
 * (confirmations, summaries, progress) to stderr, so `conch ... | tool` sees only data.
 */

/** One line of data on stdout. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** One line for people on stderr. */
export function printStatus(text: string): void {
  process.stderr.write(`${text}\n`);
}
