export * from "./conch-server.js";
export * from "./connection.js";
export * from "./dispatch.js";
export * from "./handler.js";
export * from "./server-options.js";
