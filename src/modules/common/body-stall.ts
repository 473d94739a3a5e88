// Reading a request body without letting a stalled client hold the connection: one read that
// fails with 408 request_timeout when no byte arrives for BODY_STALL_TIMEOUT_S (an extension).
// Uploads have the same limit inside src/storage/multipart.ts.
import { ApiError } from "../../domain/errors";
import { config } from "../../config";

/** One read of a JSON body; a client that sends nothing for BODY_STALL_TIMEOUT_S gets 408. */
export async function readOrStall<T>(reader: { read(): Promise<T>; cancel(): Promise<void> }): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ApiError("request_timeout", `The request body sent nothing for ${config.bodyStallTimeoutS} s.`, null),
        ),
      config.bodyStallTimeoutS * 1000,
    );
  });
  try {
    return await Promise.race([reader.read(), stalled]);
  } catch (e) {
    void reader.cancel().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
