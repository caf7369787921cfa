export * from "./handler-table.js";
export * from "./kafka-errors.js";
export * from "./kafka-front-end.js";
export * from "./kafka-handler.js";
export * from "./kafka-session.js";
