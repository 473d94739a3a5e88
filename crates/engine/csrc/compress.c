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
	int lossless_stays_lossless; /* flate images re-encoded losslessly (not as JPEG) */
	int recompress_flate; /* re-deflate FlateDecode streams at the best level when smaller */
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

/* Largest decoded stream re-deflated (bigger ones, or decompression bombs, are copied). */
#define RECOMPRESS_CAP ((size_t)256 << 20)

/* Re-deflates one stream whose only filter is FlateDecode at zlib level 9, when that is smaller (qpdf --recompress-flate does the same). Any
 * error leaves the stream as it was. */
static void recompress_one(fz_context *ctx, pdf_document *doc, int num)
{
	pdf_obj *ref = NULL;
	fz_stream *stm = NULL, *raw = NULL;
	fz_buffer *buf = NULL, *comp = NULL;
	fz_var(raw);
	fz_var(ref);
	fz_var(stm);
	fz_var(buf);
	fz_var(comp);
	fz_try(ctx)
	{
		pdf_obj *f, *type;
		int truncated = 0;
		size_t clen = 0;
		unsigned char *cdata;
		if (!pdf_obj_num_is_stream(ctx, doc, num))
			break;
		ref = pdf_new_indirect(ctx, doc, num, 0);
		f = pdf_dict_get(ctx, ref, PDF_NAME(Filter));
		if (pdf_is_array(ctx, f) && pdf_array_len(ctx, f) == 1)
			f = pdf_array_get(ctx, f, 0);
		type = pdf_dict_get(ctx, ref, PDF_NAME(Type));
		if ((f != PDF_NAME(FlateDecode) && f != PDF_NAME(Fl)) ||
			type == PDF_NAME(XRef) || type == PDF_NAME(ObjStm) || type == PDF_NAME(Metadata))
			break;
		/* Undo only the deflate layer: predictor-encoded data (DecodeParms) stays as
		 * it is, with its parameters. The document is not encrypted (checked by the
		 * caller), so the raw stream is the deflated bytes. */
		raw = pdf_open_raw_stream_number(ctx, doc, num);
		stm = fz_open_flated(ctx, raw, 15);
		buf = fz_read_best(ctx, stm, 0, &truncated, RECOMPRESS_CAP);
		if (truncated)
			break;
		cdata = fz_new_deflated_data_from_buffer(ctx, &clen, buf, FZ_DEFLATE_BEST);
		comp = fz_new_buffer_from_data(ctx, cdata, clen);
		if ((int64_t)clen < pdf_dict_get_int64(ctx, ref, PDF_NAME(Length)))
			pdf_update_stream(ctx, doc, ref, comp, 1);
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, comp);
		fz_drop_buffer(ctx, buf);
		fz_drop_stream(ctx, stm);
		fz_drop_stream(ctx, raw);
		pdf_drop_obj(ctx, ref);
	}
	fz_catch(ctx)
	{
		/* keep the stream as it was */
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
				r.color_lossless_image_subsample_method = FZ_SUBSAMPLE_BICUBIC;
				r.color_lossy_image_subsample_method = FZ_SUBSAMPLE_BICUBIC;
				r.color_lossless_image_subsample_threshold = o->threshold_dpi;
				r.color_lossless_image_subsample_to = o->target_dpi;
				r.color_lossy_image_subsample_threshold = o->threshold_dpi;
				r.color_lossy_image_subsample_to = o->target_dpi;
				/* Images stored losslessly (flate: often synthetic, flat colour) stay
				 * lossless when only_jpeg_lossy is set: a downsampled flat image deflates
				 * far smaller than it JPEG-encodes. */
				r.color_lossless_image_recompress_method = o->lossless_stays_lossless ? FZ_RECOMPRESS_LOSSLESS : FZ_RECOMPRESS_JPEG;
				r.color_lossy_image_recompress_method = FZ_RECOMPRESS_JPEG;
				r.color_lossy_image_recompress_quality = q;
				r.color_lossless_image_recompress_quality = q;
				r.gray_lossless_image_subsample_method = FZ_SUBSAMPLE_BICUBIC;
				r.gray_lossy_image_subsample_method = FZ_SUBSAMPLE_BICUBIC;
				r.gray_lossless_image_subsample_threshold = o->threshold_dpi;
				r.gray_lossless_image_subsample_to = o->target_dpi;
				r.gray_lossy_image_subsample_threshold = o->threshold_dpi;
				r.gray_lossy_image_subsample_to = o->target_dpi;
				r.gray_lossless_image_recompress_method = o->lossless_stays_lossless ? FZ_RECOMPRESS_LOSSLESS : FZ_RECOMPRESS_JPEG;
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
				/* The print-condition ICC profiles of PDF/X and PDF/A (/OutputIntents,
				 * often several hundred KB) are dropped, as Ghostscript's presets do;
				 * the pages' own colour spaces are kept. */
				pdf_dict_del(ctx, pdf_dict_get(ctx, pdf_trailer(ctx, doc), PDF_NAME(Root)), PDF_NAME(OutputIntents));
			}
			if (o->recompress_flate && !doc->crypt)
			{
				int i, n = pdf_xref_len(ctx, doc);
				for (i = 1; i < n; i++)
					recompress_one(ctx, doc, i);
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
