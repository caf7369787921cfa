/**
 * What the server's sweep (connection-sweep.ts) knows of a connection's traffic: when it last
 * took a request or answered one, and since when its current frame has been arriving. Requests
 * stamp a coarse clock (ConnectionSweep.now) rather than the system's: a field write per request.
 */

/** A clock to stamp with: the sweep's, or this one for a connection made without a server. */
export interface CoarseClock {
  readonly now: number;
}

export const SYSTEM_CLOCK: CoarseClock = {
  get now(): number {
    return performance.now();
  },
};

export class ConnectionActivity {
  readonly #clock: CoarseClock;
  #last: number;
  /** Frames taken so far: a sweep that finds the same count mid-frame twice times that frame. */
  #framesTaken = 0;
  #stallMark = -1;
  #stallSince = -1;

  constructor(clock: CoarseClock) {
    this.#clock = clock;
    this.#last = clock.now;
  }

  /** A request frame was taken. */
  frameTaken(): void {
    this.#framesTaken++;
    this.#last = this.#clock.now;
  }

  /** A request in flight was answered: idleness counts from here. */
  answered(): void {
    this.#last = this.#clock.now;
  }

  /** How long since the last request or answer. */
  idleFor(now: number): number {
    return now - this.#last;
  }

  /**
   * Whether the frame now arriving has taken `limitMs` or more. `arriving` is false when no frame
   * is under way, or when its bytes wait on the server (backpressure), not on the client.
   */
  stalled(now: number, arriving: boolean, limitMs: number): boolean {
    if (!arriving) {
      this.#stallSince = -1;
      return false;
    }
    if (this.#stallSince < 0 || this.#stallMark !== this.#framesTaken) {
      this.#stallSince = now;
      this.#stallMark = this.#framesTaken;
      return false;
    }
    return now - this.#stallSince >= limitMs;
  }
}
