// ApiError carries an error code from the catalogue; `errorResponse` turns it into the spec's
// envelope. Internal faults are logged with the request id but only `internal_error` is sent.
import { config } from "../config";
import { errorCatalogue, type ErrorCode } from "../domain/errors";

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Extra envelope fields, e.g. upgrade_url, pages, remaining. */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers, e.g. Retry-After, Allow. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  get status(): number {
    return errorCatalogue[this.code].status;
  }
}

export function docUrl(code: string): string {
  return `${config.baseUrl}/errors#${code}`;
}

export function errorBody(code: ErrorCode, message: string, requestId: string | null, param: string | null = null, extra: Record<string, unknown> = {}) {
  const def = errorCatalogue[code];
  return {
    error: {
      type: def.type,
      code,
      message,
      doc_url: docUrl(code),
      request_id: requestId,
      param,
      ...extra,
    },
  };
}
