/* The message of the MuPDF exception just caught, copied for the Rust side. */
#ifndef ENGINE_CAUGHT_H
#define ENGINE_CAUGHT_H

#include <string.h>
#include "mupdf/fitz.h"

static inline void copy_message(fz_context *ctx, char *err, int errlen)
{
	const char *msg = fz_caught_message(ctx);
	if (errlen > 0) {
		strncpy(err, msg ? msg : "unknown MuPDF error", errlen - 1);
		err[errlen - 1] = 0;
	}
}

#endif
