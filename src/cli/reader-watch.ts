/**
 * Learns that whoever reads our stdout went away (`conch consume | head -3` after head's third line),
 * also while nothing is being written. A write to a pipe whose reader is gone fails with EPIPE, but
 * a consumer waiting for new messages writes nothing, and Node reports nothing on a write-only
 * stream: without this the command would hang until the next message arrived.
 *
 * How: the kernel flags the writing end of a pipe or socket whose reader closed (POLLERR on a pipe,
 * end of input on a socket), and libuv reports it to a handle that polls the descriptor for input.
 * Node's own stdout handle never polls for input (a pipe's writing end is not readable, so it may
 * not), so a second handle is opened on the same descriptor, through the TCP wrap, which reads any
 * stream descriptor. Two handles must not poll one descriptor at once (libuv keeps one watcher per
 * descriptor), so the probe polls only while stdout has nothing left to write (`idle()`), and stops
 * before the next write (`busy()`); a write in flight learns of a closed reader by itself (EPIPE).
 * libuv never closes descriptors 0-2, so the probe can be dropped without touching stdout.
 *
 * Where the probe cannot be made (a file or a terminal, which have no reader to lose, or a Node that
 * no longer offers the TCP wrap), only write errors and stdout's 'close' are seen.
 */
import { fstatSync } from "node:fs";
import { Socket, type SocketConstructorOpts } from "node:net";
import type { Writable } from "node:stream";

/** The part of Node's TCP wrap handle the probe uses. */
interface StreamHandle {
  open(fd: number): number;
  readStart(): number;
  readStop(): number;
}

interface TcpWrap {
  TCP: new (type: number) => StreamHandle;
  constants: { SOCKET: number };
}

/** stdout's descriptor, and whether a command has taken charge of a closed stdout (see main.ts). */
const STDOUT_FD = 1;
let claimed = 0;

/** Whether a running command handles a closed stdout itself (so the default exit must wait). */
export function stdoutClosureClaimed(): boolean {
  return claimed > 0;
}

export class ReaderWatch {
  #out: Writable;
  #handle: StreamHandle | null = null;
  #probe: Socket | null = null;
  #polling = false;
  #gone = false;
  #onGone: () => void;
  #onError = (err: NodeJS.ErrnoException): void => {
    if (err.code === "EPIPE" || err.code === "ECONNRESET") this.#markGone();
  };
  #onClose = (): void => this.#markGone();

  /**
   * Watches `out` (stdout, whose descriptor is probed when `fd` is given) and calls `onGone` once
   * when its reader goes away. Make it before anything is written to `out`.
   */
  constructor(out: Writable, onGone: () => void, fd: number | null = STDOUT_FD) {
    this.#out = out;
    this.#onGone = onGone;
    out.on("error", this.#onError).on("close", this.#onClose);
    claimed++;
    if (fd !== null) this.#openProbe(fd);
  }

  /** Whether the reader is known to be gone: nothing more should be written, nor counted as read. */
  get gone(): boolean {
    return this.#gone;
  }

  /** Whether the reader can be noticed leaving while nothing is written (a pipe or a socket). */
  get probing(): boolean {
    return this.#handle !== null;
  }

  /** Nothing is left to write to stdout: watch for the reader leaving. */
  idle(): void {
    if (this.#handle === null || this.#polling || this.#gone) return;
    if (this.#handle.readStart() === 0) this.#polling = true;
  }

  /** About to write to stdout: stop watching (the write itself reports a closed reader). */
  busy(): void {
    if (!this.#polling || this.#handle === null) return;
    this.#handle.readStop();
    this.#polling = false;
  }

  close(): void {
    this.busy();
    this.#out.off("error", this.#onError).off("close", this.#onClose);
    claimed--;
    const probe = this.#probe;
    this.#probe = null;
    this.#handle = null;
    // Destroying the probe closes its handle; libuv leaves descriptors 0-2 open.
    probe?.destroy();
  }

  #markGone(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.busy();
    this.#onGone();
  }

  #openProbe(fd: number): void {
    let stat: ReturnType<typeof fstatSync>;
    try {
      stat = fstatSync(fd);
    } catch {
      return;
    }
    if (!stat.isFIFO() && !stat.isSocket()) return;
    const wrap = tcpWrap();
    if (wrap === null) return;
    const handle = new wrap.TCP(wrap.constants.SOCKET);
    if (handle.open(fd) !== 0) return;
    // `handle` is an option net takes but does not declare. allowHalfOpen: end of input must not
    // make net end (or close) the socket by itself.
    const options = { handle, readable: true, writable: false, allowHalfOpen: true };
    const probe = new Socket(options as SocketConstructorOpts);
    // A pipe's writing end fails the read (EBADF) once its reader is gone; a socket reads its end.
    probe.on("error", () => this.#markGone());
    probe.on("end", () => this.#markGone());
    // Whatever the reader sends back on a socket is not ours to keep. Flowing from here on, net
    // counts the handle as reading and leaves starting and stopping it to idle() and busy().
    probe.on("data", () => {});
    handle.readStop();
    this.#handle = handle;
    this.#probe = probe;
  }
}

function tcpWrap(): TcpWrap | null {
  try {
    const binding = (process as unknown as { binding(name: string): unknown }).binding("tcp_wrap");
    const wrap = binding as Partial<TcpWrap> | null;
    if (typeof wrap?.TCP !== "function" || typeof wrap.constants?.SOCKET !== "number") return null;
    return wrap as TcpWrap;
  } catch {
    return null;
  }
}
