// Streams a multipart/form-data upload straight to disk: the one `file` part is written as it
// arrives, so a 500 MB upload never sits in memory. Any other part is an error.
import { open, rm, type FileHandle } from "node:fs/promises";
import { ApiError } from "../domain/errors";
import { config } from "../config";

export interface UploadedPart {
  /** As sent (null when the part has none); the caller checks and cleans it. */
  filename: string | null;
  contentType: string;
  size: number;
}

/**
 * Writes every byte or throws: a write on a full disk can return fewer bytes than asked (or
 * none) instead of failing, which would leave a silently truncated upload.
 */
async function writeAll(fh: FileHandle, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.length) {
    const { bytesWritten } = await fh.write(data, at, data.length - at);
    if (bytesWritten <= 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    at += bytesWritten;
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function boundaryOf(contentType: string): string {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!m) throw new ApiError("validation_error", "multipart/form-data needs a boundary.", "file");
  return m[1] ?? m[2]!;
}

/**
 * The content of a quoted-string with its escaped quotes and backslashes undone (RFC 9110
 * 5.6.4). Other backslashes stay: old browsers send Windows paths unescaped.
 */
function quoted(raw: string | undefined): string | null {
  return raw === undefined ? null : raw.replace(/\\(["\\])/g, "$1");
}

function parseHeaders(block: string): { name: string | null; filename: string | null; contentType: string } {
  let name: string | null = null;
  let filename: string | null = null;
  let contentType = "";
  for (const line of block.split("\r\n")) {
    const idx = line.indexOf(":");
    if (idx < 0) continue;
    const key = line.slice(0, idx).trim().toLowerCase();
    const value = line.slice(idx + 1).trim();
    if (key === "content-disposition") {
      name = quoted(/(?:^|;)\s*name="((?:[^"\\]|\\.)*)"/i.exec(value)?.[1]);
      const star = /\bfilename\*=UTF-8''([^;]+)/i.exec(value)?.[1];
      if (star) {
        try {
          filename = decodeURIComponent(star);
        } catch {
          throw new ApiError("validation_error", "The part's filename* is not valid percent-encoded UTF-8.", "file");
        }
      } else filename = quoted(/;\s*filename="((?:[^"\\]|\\.)*)"/i.exec(value)?.[1]);
    } else if (key === "content-type") contentType = value.toLowerCase();
  }
  return { name, filename, contentType };
}

/**
 * One read of the body, bounded by the upload's deadline: a client trickling bytes is cut off
 * (Bun's idle timeout only catches one that stops sending altogether). A body that breaks off
 * (the client went away) is a client error, not a fault.
 */
async function readBefore(
  reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> },
  deadline: number,
  timeoutMs: number,
): Promise<{ done: boolean; value?: Uint8Array }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Whichever comes first: the upload's deadline, or BODY_STALL_TIMEOUT_S without a byte.
  const stallMs = config.bodyStallTimeoutS * 1000;
  const stalled = Date.now() + stallMs < deadline;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          stalled
            ? new ApiError(
                "request_timeout",
                `The upload sent nothing for ${config.bodyStallTimeoutS} s; nothing was stored.`,
                "file",
              )
            : new ApiError(
                "request_timeout",
                `The upload took longer than ${Math.round(timeoutMs / 1000)} s; send it faster or in a smaller file.`,
                "file",
              ),
        ),
      Math.max(0, Math.min(deadline, Date.now() + stallMs) - Date.now()),
    );
  });
  try {
    return await Promise.race([reader.read(), late]);
  } catch (e) {
    void reader.cancel().catch(() => {});
    if (e instanceof ApiError) throw e;
    throw new ApiError("validation_error", "The upload broke off before the multipart body was complete.", "file");
  } finally {
    clearTimeout(timer);
  }
}

/** Writes the `file` part to `dest`; throws ApiError on malformed input, when over `maxBytes`, or after `timeoutMs`. */
export async function receiveMultipartFile(
  request: Request,
  dest: string,
  maxBytes: number,
  timeoutMs: number,
): Promise<UploadedPart> {
  const boundary = boundaryOf(request.headers.get("content-type") || "");
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const declared = Number(request.headers.get("content-length") || "0");
  if (declared > maxBytes + 64 * 1024)
    throw new ApiError("file_too_large", `The upload is larger than the maximum of ${maxBytes} bytes.`, "file");
  if (!request.body) throw new ApiError("validation_error", "The multipart body is empty.", "file");

  const fh = await open(dest, "w", 0o600);
  let buf = Buffer.from("\r\n"); // lets the first boundary match the same "\r\n--b" delimiter
  let state: "preamble" | "headers" | "body" | "after" | "done" = "preamble";
  let part: { name: string | null; filename: string | null; contentType: string } | null = null;
  let found: UploadedPart | null = null;
  let size = 0;
  let ok = false;
  try {
    const reader = request.body.getReader();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { value, done } = await readBefore(reader, deadline, timeoutMs);
      if (value) buf = buf.length ? Buffer.concat([buf, value]) : Buffer.from(value);
      // Process as much of the buffer as possible.
      for (;;) {
        if (state === "preamble") {
          const i = buf.indexOf(delimiter);
          if (i < 0) {
            if (buf.length > 64 * 1024)
              throw new ApiError("validation_error", "Malformed multipart body: no boundary found.", "file");
            break;
          }
          buf = buf.subarray(i + delimiter.length);
          state = "after";
        } else if (state === "after") {
          if (buf.length < 2) break;
          if (buf[0] === 0x2d && buf[1] === 0x2d) {
            state = "done";
            break;
          }
          const eol = buf.indexOf("\r\n");
          if (eol < 0) {
            if (buf.length > 1024) throw new ApiError("validation_error", "Malformed multipart body.", "file");
            break;
          }
          buf = buf.subarray(eol + 2);
          state = "headers";
        } else if (state === "headers") {
          const end = buf.indexOf("\r\n\r\n");
          if (end < 0) {
            if (buf.length > 16 * 1024)
              throw new ApiError("validation_error", "Malformed multipart body: part headers too long.", "file");
            break;
          }
          let block: string;
          try {
            block = strictUtf8.decode(buf.subarray(0, end));
          } catch {
            throw new ApiError("validation_error", "The part headers are not valid UTF-8.", "file");
          }
          part = parseHeaders(block);
          buf = buf.subarray(end + 4);
          if (part.name !== "file")
            throw new ApiError(
              "validation_error",
              `Unexpected multipart field \`${part.name ?? "(unnamed)"}\`; send exactly one part named \`file\`.`,
              part.name ?? "file",
            );
          if (found) throw new ApiError("validation_error", "Send exactly one `file` part.", "file");
          state = "body";
        } else if (state === "body") {
          const i = buf.indexOf(delimiter);
          const writable = i >= 0 ? i : Math.max(0, buf.length - delimiter.length);
          if (writable > 0) {
            size += writable;
            if (size > maxBytes)
              throw new ApiError(
                "file_too_large",
                `The upload is larger than the maximum of ${maxBytes} bytes.`,
                "file",
              );
            await writeAll(fh, buf.subarray(0, writable));
            buf = buf.subarray(writable);
          }
          if (i < 0) break;
          buf = buf.subarray(delimiter.length);
          found = { filename: part!.filename, contentType: part!.contentType, size };
          state = "after";
        } else break;
      }
      if (state === "done" || done) break;
    }
    if (state !== "done" || !found)
      throw new ApiError(
        "validation_error",
        "Malformed multipart body: send one part named `file` and close the body with the final boundary.",
        "file",
      );
    ok = true;
    return found;
  } finally {
    await fh.close();
    if (!ok) await rm(dest, { force: true });
  }
}
