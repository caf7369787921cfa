export { BrokerHttp, type BrokerHttpOptions } from "./broker-http.js";
export type { ListenerProbe } from "./http-context.js";
