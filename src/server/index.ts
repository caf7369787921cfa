export * from "./conch-server.js";
export * from "./dispatch.js";
export * from "./handler.js";
export * from "./native-session.js";
export * from "./server-options.js";
