/**
 * The key a client address is counted under by the failure limiter: an IPv4 address as it is
 * (also when it arrives IPv4-mapped, `::ffff:10.0.0.1`), an IPv6 address by its /64 prefix, since
 * one host is commonly handed a whole /64 and could otherwise try from a fresh address each time.
 */
import { isIPv4, isIPv6 } from "node:net";

const MAPPED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

export function addressKey(address: string): string {
  const mapped = MAPPED.exec(address);
  if (mapped !== null && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const bare = address.split("%")[0]!;
  const [head = "", tail] = bare.split("::");
  const groups = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":"));
  const before = groups(head);
  const after = groups(tail);
  // An embedded IPv4 address (the last 32 bits) counts as two groups; it never reaches the prefix.
  const count = before.length + after.length + (bare.includes(".") ? 1 : 0);
  const full = tail === undefined ? before : [...before, ...Array<string>(8 - count).fill("0"), ...after];
  return `${full
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}
