/**
 * DNS rebinding defence: a request is served only when its Host header names the port by one of
 * the addresses it listens on, `localhost` when that is loopback, or a name the operator configured
 * (--http-host-names). A web page on a name its attacker re-points at 127.0.0.1 gets its requests
 * refused, because the browser still sends that name as Host. "*" among the names turns the check off
 * (behind a proxy that checks it already).
 */
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";

const UNSPECIFIED = new Set(["0.0.0.0", "::"]);

export class HostCheck {
  readonly #names: Set<string>;
  readonly #any: boolean;
  #allowed = new Set<string>();
  #wildcard = false;

  constructor(names: readonly string[] = []) {
    this.#names = new Set(names.map((n) => n.toLowerCase()));
    this.#any = this.#names.has("*");
  }

  /** Learns the address the port listens on (after listen). */
  bind(address: AddressInfo): void {
    this.#wildcard = UNSPECIFIED.has(address.address);
    this.#allowed = new Set(this.#names);
    if (this.#wildcard) this.#addInterfaces();
    else this.#allowed.add(address.address.toLowerCase());
    if (this.#wildcard || isLoopback(address.address)) this.#allowed.add("localhost");
  }

  /** Whether `host` (a Host header, with or without a port) names this port. */
  allows(host: string | undefined): boolean {
    if (this.#any) return true;
    if (host === undefined) return false;
    const name = hostName(host);
    if (this.#allowed.has(name)) return true;
    // Listening on every interface: one may have been added since (DHCP, a VPN); looked up only on a miss.
    if (!this.#wildcard) return false;
    this.#addInterfaces();
    return this.#allowed.has(name);
  }

  #addInterfaces(): void {
    for (const list of Object.values(networkInterfaces())) {
      for (const i of list ?? []) this.#allowed.add(i.address.toLowerCase());
    }
  }
}

/** `[::1]:7421` -> `::1`, `Example.com.:7421` -> `example.com`. */
export function hostName(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith("[")) {
    const end = name.indexOf("]");
    name = end < 0 ? name : name.slice(1, end);
  } else {
    const colon = name.indexOf(":");
    if (colon >= 0) name = name.slice(0, colon);
  }
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

function isLoopback(address: string): boolean {
  return address.startsWith("127.") || address === "::1" || address === "::ffff:127.0.0.1";
}
