// The spec's error envelope and each code's doc_url: the HTTP layer answers every ApiError
// (domain/errors.ts) with `errorBody`; GET /errors links each code with `docUrl`.
import { config } from "../../config";
import { errorCatalogue, type ErrorCode } from "../../domain/errors";

export function docUrl(code: string): string {
  return `${config.baseUrl}/errors#${code}`;
}

export function errorBody(
  code: ErrorCode,
  message: string,
  requestId: string | null,
  param: string | null = null,
  extra: Record<string, unknown> = {},
) {
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
