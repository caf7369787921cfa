/**
 * Small responses of one connection gathered into one socket write per turn of the event loop
 * (after the turn's first, which goes out at once). A
 * socket write is a syscall and, in Node's stream, a write request and its callback; a producer
 * spreading keyed messages over many partitions gets one small response per partition, all in
 * the same turn (the logs write in one pass, storage/write-pass.ts). Gathered, they cost one copy
 * each and one write for the lot; the write goes out in a microtask, before the event loop moves
 * on, so no response waits for another turn.
 *
 * Order is kept: the connection flushes what is gathered before it writes anything else.
 */
import type { Socket } from "node:net";
import { microtask } from "./microtask.js";
import { joinBuffers } from "./socket-writes.js";

/** A response up to this size is gathered; a larger one goes out on its own. */
export const GATHER_MAX_REPLY_BYTES = 1024;
/** Gathered bytes past this go out at once, without waiting for the microtask. */
const GATHER_FLUSH_BYTES = 64 * 1024;

export class ReplyGather {
  readonly #socket: Socket;
  readonly #written: () => void;
  /** Gathered responses [0, #count); the array keeps its length between flushes. */
  readonly #replies: Array<Buffer | null> = [];
  #count = 0;
  #bytes = 0;
  #armed = false;
  readonly #flush = (): void => this.flush();

  /** `written` is told after each socket write this makes (the connection recounts its bytes). */
  constructor(socket: Socket, written: () => void) {
    this.#socket = socket;
    this.#written = written;
  }

  /** Bytes gathered and not yet handed to the socket. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Sends or gathers `reply` (at most GATHER_MAX_REPLY_BYTES); it goes out in this turn. The first
   * response of a turn is written at once: most turns of a connection carry one (a producer that
   * waits for its acknowledgements), and holding it for a microtask and a copy cost workload 1
   * about a tenth of its rate. Only the responses after it in the same turn are gathered.
   */
  add(reply: Buffer): void {
    if (!this.#armed) {
      this.#armed = true;
      microtask(this.#flush);
      if (!this.#socket.destroyed) this.#socket.write(reply);
      this.#written();
      return;
    }
    if (this.#count < this.#replies.length) this.#replies[this.#count] = reply;
    else this.#replies.push(reply);
    this.#count++;
    this.#bytes += reply.length;
    if (this.#bytes >= GATHER_FLUSH_BYTES) this.#write();
  }

  /** Writes what is gathered, as one buffer, and ends the turn. */
  flush(): void {
    this.#armed = false;
    this.#write();
  }

  #write(): void {
    const count = this.#count;
    if (count === 0) return;
    const replies = this.#replies;
    const out = count === 1 ? replies[0]! : joinBuffers(replies as Buffer[], count, this.#bytes);
    for (let i = 0; i < count; i++) replies[i] = null;
    this.#count = 0;
    this.#bytes = 0;
    if (!this.#socket.destroyed) this.#socket.write(out);
    this.#written();
  }

  /** Forgets what is gathered (the socket is gone). */
  drop(): void {
    for (let i = 0; i < this.#count; i++) this.#replies[i] = null;
    this.#count = 0;
    this.#bytes = 0;
  }
}
