import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** "name x.y.z" of an installed npm package, as the report states which client drove each server. */
export function clientVersion(pkg: string): string {
  try {
    const { version } = require(`${pkg}/package.json`) as { version: string };
    return `${pkg} ${version} (npm)`;
  } catch {
    return `${pkg} (not installed)`;
  }
}
