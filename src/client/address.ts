/** Broker addresses as given by applications: "host:port", or "[v6 address]:port". */
import { ConchError, ErrorCode } from "../format/errors.js";

export interface BrokerAddress {
  host: string;
  port: number;
}

export function parseAddress(text: string): BrokerAddress {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port < 1 || port > 65535) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `broker address "${text}" is not host:port`);
  }
  return { host: m[1] ?? m[2]!, port };
}

export function formatAddress(a: BrokerAddress): string {
  return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}
