/**
 * A progress bar on stderr when stderr is a terminal, and nothing otherwise, so that benchmark
 * output stays clean in pipes and CI logs. Updates are throttled by cli-progress itself.
 */
import cliProgress from "cli-progress";

export class Progress {
  #bar: cliProgress.SingleBar | null = null;

  constructor(label: string, total: number, enabled = process.stderr.isTTY === true) {
    if (!enabled) return;
    this.#bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {value}/{total} msgs | {eta_formatted} left`,
        hideCursor: true,
        clearOnComplete: true,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    );
    this.#bar.start(total, 0);
  }

  update(done: number): void {
    this.#bar?.update(done);
  }

  stop(): void {
    this.#bar?.stop();
    this.#bar = null;
  }
}
