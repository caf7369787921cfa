/**
 * One pass that writes the new appends of every log. A log with appends waiting starts its write
 * in the check phase right after the poll phase that brought them (log-writer.ts), so that every
 * connection's data read in that poll joins one write. With many logs that was one setImmediate
 * each: a produce spread over 1,000 partitions ran 1,000 callbacks, each acknowledging its own
 * appends alone. Here they all run in one callback, so the acknowledgements of the whole pass come
 * in one turn of the event loop, and a connection answers them with one socket write
 * (net/framed-connection.ts) instead of one per partition.
 */

/** The pumps of the logs waiting for the pass, in the order their first append came. */
let waiting: Array<(() => void) | null> = [];
let count = 0;
let armed = false;

function runPass(): void {
  // A pump may queue appends to other logs (an acknowledgement handler producing again): those
  // join this pass at its end.
  for (let i = 0; i < count; i++) {
    const pump = waiting[i]!;
    waiting[i] = null;
    try {
      pump();
    } catch (err) {
      // A pump handles its own failures; anything else surfaces as its own setImmediate's would,
      // without keeping the other logs from writing.
      process.nextTick(() => {
        throw err;
      });
    }
  }
  armed = false;
  // The array keeps its length between passes (an emptied array gives up its backing store);
  // one that a burst grew far past the usual is let go.
  if (waiting.length > 4096 && count < 1024) waiting = [];
  count = 0;
}

/** Runs `pump` in the next write pass; the caller queues it once until it has run. */
export function joinWritePass(pump: () => void): void {
  if (count < waiting.length) waiting[count] = pump;
  else waiting.push(pump);
  count++;
  if (!armed) {
    armed = true;
    setImmediate(runPass);
  }
}
