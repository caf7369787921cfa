import type { LiveFeed } from "./live.js";

/** A page of the console: draws into `root`, returns what to stop when the page is left. */
export type View = (root: HTMLElement, live: LiveFeed, params: ViewParams) => () => void;

export interface ViewParams {
  /** Path segments after the view's name, decoded: #/topics/orders -> ["orders"]. */
  path: string[];
  /** The hash's query: #/messages?topic=orders&partition=0. */
  query: URLSearchParams;
}

export function link(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join("/")}`;
}
