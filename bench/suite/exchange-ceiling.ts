import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import * as hdr from "hdr-histogram-js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { Acks, type AcksValue } from "../../src/protocol/api.js";
import { encodeProduceRequest, encodeProduceResponse } from "../../src/protocol/produce.js";
import { processCpuSeconds } from "./proc-cpu.js";
import { durableWait } from "./workloads/durable.js";
import { hermit } from "./workloads/hermit.js";
import { latency, NAP_MS, PACE_MS } from "./workloads/latency.js";

// Limits of this machine measured between two Node processes that do nothing but move bytes the
// way the workloads' clients and broker do: a bulk stream (the reads of workloads 2 and 8), workload
// 3's paced round trip, and the stop-and-wait exchanges of workloads 5 and 4b. No broker on this
// machine, driven from Node, can do better than the loopback interface and the scheduler allow
// here, so Conch's read rate, latency and stop-and-wait rates can be read against them.

const MiB = 1024 * 1024;

export interface LoopbackCeiling {
  /** One Node process writing 1 MiB chunks to another over 127.0.0.1, in MB/s (10^6 bytes). */
  MBps: number;
  bytes: number;
}

export interface RoundTripCeiling {
  /** Bytes sent, and echoed back, every `paceMs`: about what one send call of workload 3 carries. */
  bytes: number;
  paceMs: number;
  count: number;
  p50Us: number;
  p99Us: number;
  p999Us: number;
}

export interface ExchangeCeiling {
  /** Connections, each writing a request and waiting for its reply before the next. */
  connections: number;
  /** The workload's produce request and its response, in bytes. */
  requestBytes: number;
  replyBytes: number;
  requests: number;
  requestsPerSec: number;
  /** requestsPerSec times the messages of one of the workload's requests. */
  msgsPerSec: number;
  /**
   * CPU per request, in microseconds, of the two processes: what a Node client and server spend
   * on the exchange alone (the server's from /proc, absent where unreadable).
   */
  clientCpuUsPerRequest: number;
  serverCpuUsPerRequest?: number;
}

const SERVER = fileURLToPath(new URL("./reply-server.js", import.meta.url));

/** A produce request carrying one batch of `records` records of `payloadBytes` bytes each. */
function produceRequest(
  topic: string,
  records: number,
  payloadBytes: number,
  acks: AcksValue = Acks.LEADER,
): Buffer {
  const builder = new BatchBuilder();
  const payload = Buffer.alloc(payloadBytes, 0x62);
  for (let i = 0; i < records; i++) builder.add(payload, null, Date.now());
  return encodeProduceRequest(1, {
    topic,
    partition: 0,
    acks,
    timeoutMs: 30_000,
    records: builder.finish(),
  });
}

/** The reply server in a child process; resolves with its port and a way to stop it. */
async function startReplyServer(
  requestBytes: number,
  replyBytes: number,
): Promise<{ port: number; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [SERVER, String(requestBytes), String(replyBytes)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(Number(out.trim()));
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`reply server exited with ${code}`)));
  });
  return { port, pid: child.pid ?? 0, stop: () => child.kill() };
}

async function connected(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return socket;
}

/**
 * Workload 3's round trip without a broker: every PACE_MS (napping NAP_MS at a time, as the
 * workload's producer does) the bytes of one send call's produce request (about 12 records of 100
 * bytes) go out and are echoed back; the latency of each is from its send to the end of its echo.
 * The first second is warm-up.
 */
export async function measureRoundTrips(seconds = 6): Promise<RoundTripCeiling> {
  const p = latency.params(1);
  const perSend = Math.round(p.rate * (PACE_MS / 1000));
  const bytes = produceRequest(p.stream, perSend, p.payloadBytes).length;
  const server = await startReplyServer(0, 0);
  const socket = await connected(server.port);
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  const sentAt: number[] = [];
  const start = performance.now();
  const warmupEnd = start + 1000;
  const end = start + seconds * 1000;
  let echoed = 0;
  socket.on("data", (data: Buffer) => {
    const now = performance.now();
    echoed += data.length;
    while (echoed >= bytes && sentAt.length > 0) {
      echoed -= bytes;
      const t = sentAt.shift()!;
      if (t >= warmupEnd) histogram.recordValue(Math.max(1, Math.round((now - t) * 1000)));
    }
  });
  const message = Buffer.alloc(bytes, 0x61);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  let last = Number.NEGATIVE_INFINITY;
  try {
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        if (now >= end) return resolve();
        if (now - last >= PACE_MS) {
          last = now;
          sentAt.push(now);
          socket.write(message);
        }
        Atomics.wait(nap, 0, 0, NAP_MS);
        setImmediate(tick);
      };
      tick();
    });
    // Let the last echoes arrive.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      bytes,
      paceMs: PACE_MS,
      count: histogram.totalCount,
      p50Us: histogram.getValueAtPercentile(50),
      p99Us: histogram.getValueAtPercentile(99),
      p999Us: histogram.getValueAtPercentile(99.9),
    };
  } finally {
    socket.destroy();
    histogram.destroy();
    server.stop();
  }
}

/**
 * One Node process writing `bytes` in 1 MiB chunks to another over loopback TCP, which answers one
 * byte per MiB received: the most a broker could send a consumer here. (Until 4 December one
 * process wrote to itself, its one thread both sending and receiving, which read 30-50% of this.)
 */
export async function measureLoopback(bytes = 4096 * MiB): Promise<LoopbackCeiling> {
  const chunk = Buffer.alloc(MiB, 0x42);
  const chunks = Math.ceil(bytes / MiB);
  const server = await startReplyServer(MiB, 1);
  const socket = await connected(server.port);
  try {
    let acked = 0;
    const done = new Promise<void>((resolve) => {
      socket.on("data", (data: Buffer) => {
        acked += data.length;
        if (acked >= chunks) resolve();
      });
    });
    const start = performance.now();
    for (let sent = 0; sent < chunks; sent++) {
      if (!socket.write(chunk)) await new Promise((resolve) => socket.once("drain", resolve));
    }
    await done;
    return { MBps: (chunks * MiB) / 1e6 / ((performance.now() - start) / 1000), bytes: chunks * MiB };
  } finally {
    socket.destroy();
    server.stop();
  }
}

/**
 * Workload 5's exchange without a broker: its 10 connections each write the workload's real
 * produce request (100 records of 28 bytes) and wait for a produce response's bytes before writing
 * the next, `requests` in all.
 */
export function measureExchange(requests = 20_000): Promise<ExchangeCeiling> {
  const p = hermit.params(1);
  return exchange(p.producers, produceRequest(p.stream, p.batch, p.payloadBytes), p.batch, requests);
}

/**
 * Workload 4b's exchange without a broker and without a disk: its 16 connections each write the
 * workload's produce request (one record of 100 bytes, acks durable) and wait for a produce
 * response's bytes before writing the next, `requests` in all. A broker that also makes each
 * message durable can only be slower.
 */
export function measureDurableExchange(requests = 40_000): Promise<ExchangeCeiling> {
  const p = durableWait.params(1);
  const request = produceRequest(p.stream, p.batch, p.payloadBytes, Acks.DURABLE);
  return exchange(p.producers, request, p.batch, requests);
}

/**
 * `connections` connections to a reply server, each writing `request` and waiting for a produce
 * response's bytes before the next, `requests` in all.
 */
async function exchange(
  connections: number,
  request: Buffer,
  messagesPerRequest: number,
  requests: number,
): Promise<ExchangeCeiling> {
  const replyBytes = encodeProduceResponse(1, { baseOffset: 0, lastOffset: messagesPerRequest - 1 }).length;
  const server = await startReplyServer(request.length, replyBytes);
  const sockets = await Promise.all(Array.from({ length: connections }, () => connected(server.port)));
  try {
    let started = 0;
    const serverBefore = processCpuSeconds(server.pid);
    const clientBefore = process.cpuUsage();
    const start = performance.now();
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            let received = 0;
            const next = () => {
              if (started >= requests) return resolve();
              started++;
              socket.write(request);
            };
            socket.on("data", (data: Buffer) => {
              received += data.length;
              while (received >= replyBytes) {
                received -= replyBytes;
                next();
              }
            });
            next();
          }),
      ),
    );
    const requestsPerSec = requests / ((performance.now() - start) / 1000);
    const client = process.cpuUsage(clientBefore);
    const serverAfter = processCpuSeconds(server.pid);
    return {
      connections,
      requestBytes: request.length,
      replyBytes,
      requests,
      requestsPerSec,
      msgsPerSec: requestsPerSec * messagesPerRequest,
      clientCpuUsPerRequest: (client.user + client.system) / requests,
      ...(serverBefore !== null && serverAfter !== null
        ? { serverCpuUsPerRequest: ((serverAfter - serverBefore) * 1e6) / requests }
        : {}),
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    server.stop();
  }
}
