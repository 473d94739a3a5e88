// The worker's store calls ride out an outage shorter than STORE_RETRY_S (src/storage/retry.ts).
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/domain/errors";
import { retryingStoreCall } from "../../src/storage/retry";

/** A clock that only moves when the retry loop sleeps. */
function fakeClock() {
  let t = 0;
  const pauses: number[] = [];
  return {
    pauses,
    now: () => t,
    sleep: async (ms: number) => {
      pauses.push(ms);
      t += ms;
    },
  };
}
const down = () => new ApiError("store_unavailable", "down");

describe("retryingStoreCall", () => {
  test("a call that fails with store_unavailable is tried again, pauses doubling, until it succeeds", async () => {
    const clock = fakeClock();
    let calls = 0;
    const r = await retryingStoreCall(
      async () => {
        if (++calls < 4) throw down();
        return "ok";
      },
      { budgetMs: 30_000, ...clock },
    );
    expect(r).toBe("ok");
    expect(calls).toBe(4);
    expect(clock.pauses).toEqual([250, 500, 1000]);
  });

  test("the failure stands once the budget has passed since the first try", async () => {
    const clock = fakeClock();
    let calls = 0;
    const failing = retryingStoreCall(
      async () => {
        calls++;
        throw down();
      },
      { budgetMs: 10_000, ...clock },
    );
    await expect(failing).rejects.toMatchObject({ code: "store_unavailable" });
    expect(clock.pauses.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(Math.max(...clock.pauses)).toBeLessThanOrEqual(5000);
    expect(calls).toBe(clock.pauses.length + 1);
  });

  test("any other error is not retried", async () => {
    const clock = fakeClock();
    let calls = 0;
    const failing = retryingStoreCall(
      async () => {
        calls++;
        throw new ApiError("not_found", "gone");
      },
      { budgetMs: 30_000, ...clock },
    );
    await expect(failing).rejects.toMatchObject({ code: "not_found" });
    expect(calls).toBe(1);
    expect(clock.pauses).toEqual([]);
  });

  test("a zero budget tries once", async () => {
    const clock = fakeClock();
    await expect(
      retryingStoreCall(async () => Promise.reject(down()), { budgetMs: 0, ...clock }),
    ).rejects.toMatchObject({
      code: "store_unavailable",
    });
    expect(clock.pauses).toEqual([]);
  });
});
