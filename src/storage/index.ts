export * from "./config.js";
export type { FileOps } from "./file-ops.js";
export { defaultFileOps } from "./file-ops.js";
export * from "./partition-log.js";
