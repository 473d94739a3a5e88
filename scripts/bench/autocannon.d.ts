// Minimal types for autocannon (no @types package is installed): only what the benchmarks use.
declare module "autocannon" {
  import type { EventEmitter } from "node:events";
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (req: Request, context: Record<string, unknown>) => Request | false | null | undefined;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    headers?: Record<string, string>;
    requests?: Request[];
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: { average: number; total: number };
    latency: Record<string, number>;
  }
  interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
