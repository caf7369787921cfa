// Every step of the suite runs under a time limit, so that a hung server or client turns into a
// line in the report instead of a benchmark that never ends.

export class StepTimeout extends Error {
  constructor(
    readonly step: string,
    readonly ms: number,
  ) {
    super(`${step} did not finish within ${Math.round(ms / 1000)} s`);
    this.name = "StepTimeout";
  }
}

/** Resolves or rejects like `work`, or rejects with StepTimeout after `ms`. */
export async function withDeadline<T>(step: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StepTimeout(step, ms)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A sleep that does not keep the process alive: for the losing side of a race against an event. */
export function unrefSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message.split("\n")[0] ?? err.name;
  return String(err);
}
