/* Compression of a whole PDF with MuPDF's image rewriter and writer, behind fz_try.
 * The mupdf crate exposes neither pdf_rewrite_images nor object streams, and a MuPDF
 * exception must never unwind through Rust, so this is the only C in the engine. It
 * uses a private fz_context per call (no state shared with the mupdf crate). */
#include <string.h>
#include "mupdf/fitz.h"
#include "mupdf/pdf.h"

/* Return codes; keep in sync with src/compress.rs. */
#define ENGINE_OK 0
#define ENGINE_OPEN_FAILED 1
#define ENGINE_NEEDS_PASSWORD 2
#define ENGINE_FAILED 3
#define ENGINE_NO_CONTEXT 4

typedef struct {
	int rewrite_images;   /* 0 = lossless only */
	int threshold_dpi;    /* images above this effective dpi are downsampled ... */
	int target_dpi;       /* ... to this dpi */
	int jpeg_quality;     /* JPEG quality for colour and grey images */
	int garbage;          /* MuPDF garbage level: 3 = deduplicate */
	int object_streams;
	int page_count;       /* out */
} engine_compress_options;

static void copy_message(fz_context *ctx, char *err, int errlen)
{
	const char *msg = fz_caught_message(ctx);
	if (errlen > 0) {
		strncpy(err, msg ? msg : "unknown MuPDF error", errlen - 1);
		err[errlen - 1] = 0;
	}
}

int engine_compress_pdf(const char *input, const char *output, engine_compress_options *o, char *err, int errlen)
{
	fz_context *ctx = fz_new_context(NULL, NULL, FZ_STORE_DEFAULT);
	pdf_document *doc = NULL;
	int rc = ENGINE_OK;
	if (!ctx)
		return ENGINE_NO_CONTEXT;
	fz_var(doc);
	fz_var(rc);
	fz_try(ctx)
	{
		doc = pdf_open_document(ctx, input);
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_OPEN_FAILED;
	}
	if (rc == ENGINE_OK && pdf_needs_password(ctx, doc))
		rc = ENGINE_NEEDS_PASSWORD;
	if (rc == ENGINE_OK)
	{
		fz_try(ctx)
		{
			char q[8];
			pdf_write_options w;
			o->page_count = pdf_count_pages(ctx, doc);
			if (o->rewrite_images)
			{
				pdf_image_rewriter_options r;
				memset(&r, 0, sizeof r);
				snprintf(q, sizeof q, "%d", o->jpeg_quality);
				r.color_lossless_image_subsample_method = FZ_SUBSAMPLE_AVERAGE;
				r.color_lossy_image_subsample_method = FZ_SUBSAMPLE_AVERAGE;
				r.color_lossless_image_subsample_threshold = o->threshold_dpi;
				r.color_lossless_image_subsample_to = o->target_dpi;
				r.color_lossy_image_subsample_threshold = o->threshold_dpi;
				r.color_lossy_image_subsample_to = o->target_dpi;
				r.color_lossless_image_recompress_method = FZ_RECOMPRESS_JPEG;
				r.color_lossy_image_recompress_method = FZ_RECOMPRESS_JPEG;
				r.color_lossy_image_recompress_quality = q;
				r.color_lossless_image_recompress_quality = q;
				r.gray_lossless_image_subsample_method = FZ_SUBSAMPLE_AVERAGE;
				r.gray_lossy_image_subsample_method = FZ_SUBSAMPLE_AVERAGE;
				r.gray_lossless_image_subsample_threshold = o->threshold_dpi;
				r.gray_lossless_image_subsample_to = o->target_dpi;
				r.gray_lossy_image_subsample_threshold = o->threshold_dpi;
				r.gray_lossy_image_subsample_to = o->target_dpi;
				r.gray_lossless_image_recompress_method = FZ_RECOMPRESS_JPEG;
				r.gray_lossy_image_recompress_method = FZ_RECOMPRESS_JPEG;
				r.gray_lossy_image_recompress_quality = q;
				r.gray_lossless_image_recompress_quality = q;
				/* Bitonal scans stay bitonal and lossless: never subsampled, re-encoded
				 * as CCITT G4 only when that is smaller. */
				r.bitonal_image_subsample_method = FZ_SUBSAMPLE_AVERAGE;
				r.bitonal_image_subsample_threshold = 0;
				r.bitonal_image_subsample_to = 0;
				r.bitonal_image_recompress_method = FZ_RECOMPRESS_FAX;
				r.recompress_when = FZ_RECOMPRESS_WHEN_SMALLER;
				pdf_rewrite_images(ctx, doc, &r);
			}
			pdf_parse_write_options(ctx, &w, "compress=yes,compress-fonts=yes,compress-images=yes");
			w.do_garbage = o->garbage;
			w.do_use_objstms = o->object_streams;
			w.do_encrypt = PDF_ENCRYPT_KEEP;
			pdf_save_document(ctx, doc, output, &w);
		}
		fz_catch(ctx)
		{
			copy_message(ctx, err, errlen);
			rc = ENGINE_FAILED;
		}
	}
	fz_drop_document(ctx, (fz_document *)doc);
	fz_drop_context(ctx);
	return rc;
}
