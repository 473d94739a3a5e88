/* Pages whose marked-content lookups would make MuPDF run for hours (csrc/mcid.c). */
#ifndef ENGINE_MCID_H
#define ENGINE_MCID_H
#include "mupdf/fitz.h"
#include "mupdf/pdf.h"

pdf_obj *engine_mcid_untag_costly(fz_context *ctx, pdf_document *doc);
void engine_mcid_restore(fz_context *ctx, pdf_obj *taken);

#endif
