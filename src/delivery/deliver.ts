// One delivery attempt: resolve and check the target (ssrf-guard.ts), connect to the checked
// address itself (TLS with SNI and certificate checks for the URL's hostname), POST the signed
// event over HTTP/1.1, and judge the answer by its status line. Redirects are never followed,
// and nothing of the response beyond its head (capped) is read.
import { connect as netConnect, isIP, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { apiVersion } from "../domain/pricing";
import { signatureHeader } from "./sign";
import {
  TargetRefused,
  bareHost,
  canonicalAddress,
  connectedAddressAllowed,
  resolveTarget,
  type ResolvedTarget,
} from "./ssrf-guard";

export const attemptTimeoutMs = 10_000;
const maxHeadBytes = 16 * 1024;

export interface AttemptInput {
  url: string;
  secret: string;
  eventType: string;
  /** The exact bytes signed and sent. */
  body: string;
  timeoutMs?: number;
  /** Aborts the attempt (dispatcher shutdown). */
  signal?: AbortSignal;
  /** Extra trusted CA certificates, for tests of the TLS path. */
  ca?: string | string[];
  /** Default: config.webhookAllowPrivateTargets. */
  allowPrivate?: boolean;
}

export interface AttemptResult {
  ok: boolean;
  responseStatus: number | null;
  /** Why the attempt failed without a usable answer (network, timeout, refused target, redirect). */
  error: string | null;
  durationMs: number;
  /** The address the request was sent to, when a connection was made. */
  address: string | null;
  aborted?: boolean;
}

class AttemptError extends Error {}

function describe(e: unknown): string {
  if (e instanceof AttemptError || e instanceof TargetRefused) return e.message;
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset by the endpoint";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable";
    case "EPIPE":
      return "connection closed by the endpoint while sending";
  }
  if (err?.code && /CERT|SSL|TLS|ERR_TLS|UNABLE_TO|SELF_SIGNED|HOSTNAME/i.test(err.code))
    return `TLS error: ${err.code}`;
  return err?.code ? `${err.code}: ${err.message}` : String(err?.message ?? e);
}

function sameAddress(a: string | undefined, b: string): boolean {
  if (!a) return false;
  const x = canonicalAddress(a);
  return x !== null && x === canonicalAddress(b);
}

interface Connected {
  socket: Socket;
  address: string;
}

function openSocket(url: URL, target: ResolvedTarget, ca: AttemptInput["ca"], opened: Set<Socket>): Promise<Connected> {
  const host = bareHost(url);
  const https = url.protocol === "https:";
  const port = Number(url.port || (https ? 443 : 80));
  return new Promise((resolve, reject) => {
    const socket: Socket = https
      ? tlsConnect({
          host: target.address,
          port,
          // SNI and certificate verification use the URL's hostname, never the IP we dial.
          servername: isIP(host) ? undefined : host,
          ALPNProtocols: ["http/1.1"],
          rejectUnauthorized: true,
          ...(ca ? { ca } : {}),
        })
      : netConnect({ host: target.address, port, family: target.family });
    opened.add(socket);
    const onError = (e: Error) => {
      socket.destroy();
      reject(e);
    };
    socket.once("error", onError);
    socket.once(https ? "secureConnect" : "connect", () => {
      socket.off("error", onError);
      resolve({ socket, address: socket.remoteAddress ?? "" });
    });
  });
}

/** Reads response heads until a final (non-1xx) status; returns that status. */
function readStatus(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (err: Error | null, status?: number) => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", onErr);
      if (err) reject(err);
      else resolve(status!);
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end > maxHeadBytes || (end < 0 && buf.length > maxHeadBytes))
          return done(new AttemptError(`response head larger than ${maxHeadBytes} bytes`));
        if (end < 0) return;
        const head = buf.subarray(0, end).toString("latin1");
        const m = /^HTTP\/1\.[01] (\d{3})(?: |\r|$)/.exec(head);
        if (!m) return done(new AttemptError("the endpoint did not answer with HTTP/1.x"));
        const status = Number(m[1]);
        if (status >= 100 && status < 200 && status !== 101) {
          buf = buf.subarray(end + 4); // interim response (100 Continue, 103 Early Hints)
          continue;
        }
        return done(null, status);
      }
    };
    const onEnd = () => done(new AttemptError("connection closed before a response"));
    const onErr = (e: Error) => done(e);
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("error", onErr);
  });
}

/** One signed POST of `body`; never throws. Each attempt signs with a fresh timestamp. */
export async function deliverOnce(input: AttemptInput): Promise<AttemptResult> {
  const started = performance.now();
  const timeoutMs = input.timeoutMs ?? attemptTimeoutMs;
  let socket: Socket | null = null;
  const opened = new Set<Socket>();
  let address: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const result = (r: Omit<AttemptResult, "durationMs" | "address">): AttemptResult => ({
    ...r,
    address,
    durationMs: Math.round(performance.now() - started),
  });
  const cutoff = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AttemptError(`timed out after ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    onAbort = () =>
      reject(Object.assign(new AttemptError("aborted: the dispatcher is shutting down"), { aborted: true }));
    if (input.signal?.aborted) onAbort();
    else input.signal?.addEventListener("abort", onAbort, { once: true });
  });
  cutoff.catch(() => {});
  try {
    const status = await Promise.race([
      cutoff,
      (async () => {
        let url: URL;
        try {
          url = new URL(input.url);
        } catch {
          throw new AttemptError("the endpoint URL is not valid");
        }
        if (url.protocol !== "https:" && url.protocol !== "http:")
          throw new AttemptError("the endpoint URL must be http or https");
        const targets = await resolveTarget(bareHost(url), { timeoutMs, allowPrivate: input.allowPrivate });
        let lastError: unknown;
        let dialed = "";
        for (const target of targets) {
          try {
            const c = await openSocket(url, target, input.ca, opened);
            socket = c.socket;
            dialed = target.address;
            address = c.address || null;
            break;
          } catch (e) {
            lastError = e;
          }
        }
        if (!socket) throw lastError;
        const s = socket as Socket;
        // Check the peer we are actually connected to: the checked address, and public.
        if (!sameAddress(s.remoteAddress, dialed) || !connectedAddressAllowed(s.remoteAddress, input.allowPrivate)) {
          throw new TargetRefused(
            `connected address ${s.remoteAddress ?? "unknown"} is not a public address; refused`,
            "blocked",
          );
        }
        const body = Buffer.from(input.body, "utf8");
        const head =
          `POST ${url.pathname}${url.search} HTTP/1.1\r\n` +
          `Host: ${url.host}\r\n` +
          `User-Agent: docproc-webhooks/${apiVersion}\r\n` +
          `Accept: */*\r\n` +
          `Content-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\n` +
          `Service-Event: ${input.eventType}\r\n` +
          `Service-Signature: ${signatureHeader(input.secret, body)}\r\n` +
          `Connection: close\r\n\r\n`;
        const statusPromise = readStatus(s);
        statusPromise.catch(() => {});
        s.write(Buffer.concat([Buffer.from(head, "latin1"), body]));
        return statusPromise;
      })(),
    ]);
    if (status >= 200 && status < 300) return result({ ok: true, responseStatus: status, error: null });
    if (status >= 300 && status < 400)
      return result({ ok: false, responseStatus: status, error: "redirects are not followed" });
    return result({ ok: false, responseStatus: status, error: null });
  } catch (e) {
    return result({
      ok: false,
      responseStatus: null,
      error: describe(e),
      ...((e as { aborted?: boolean }).aborted ? { aborted: true } : {}),
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) input.signal?.removeEventListener("abort", onAbort);
    for (const s of opened) s.destroy();
  }
}
