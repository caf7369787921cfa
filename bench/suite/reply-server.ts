// The far end of the exchange ceilings (exchange-ceiling.ts), in a process of its own as a broker
// would be: `node reply-server.js <requestBytes> <replyBytes>` answers every whole request of
// `requestBytes` with `replyBytes` bytes, or echoes every byte back when `requestBytes` is 0. It
// prints its port on the first line of stdout and exits when stdin closes (its parent went away).

import { createServer } from "node:net";

const requestBytes = Number(process.argv[2] ?? 0);
const reply = Buffer.alloc(Number(process.argv[3] ?? 0), 0x72);

const server = createServer((socket) => {
  socket.setNoDelay(true);
  let pending = 0;
  socket.on("data", (data: Buffer) => {
    if (requestBytes === 0) {
      socket.write(data);
      return;
    }
    pending += data.length;
    while (pending >= requestBytes) {
      pending -= requestBytes;
      socket.write(reply);
    }
  });
  socket.on("error", () => socket.destroy());
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`);
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
