// One real service (supervisor, API, workers, its own database) per test file: started before
// the file's tests and stopped after them, in place of a start/stop block in every API test.
import { afterAll, beforeAll } from "bun:test";
import { startService, type Service } from "./service";

/**
 * Registers the file's start and stop hooks and returns the service. Its fields are read when
 * a test or a later hook runs (the service exists from the first beforeAll on), so the result
 * can be kept in a module-level `const`.
 */
export function useService(opts: Parameters<typeof startService>[0] = {}, hookTimeoutMs?: number): Service {
  let svc: Service | undefined;
  beforeAll(async () => {
    svc = await startService(opts);
  }, hookTimeoutMs);
  afterAll(async () => {
    await svc?.stop();
  }, hookTimeoutMs);
  return new Proxy({} as Service, {
    get(_, name) {
      if (!svc)
        throw new Error(`useService: the service is not started yet (read svc.${String(name)} inside a test or hook)`);
      return svc[name as keyof Service];
    },
  });
}
