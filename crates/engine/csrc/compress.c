/* Compression of a whole PDF with MuPDF's image rewriter and writer, behind fz_try.
 * The mupdf crate exposes neither pdf_rewrite_images nor object streams, and a MuPDF
 * exception must never unwind through Rust. Each handle (engine_cz) has a private
 * fz_context (no state shared with the mupdf crate) and is used from one thread.
 * Between engine_cz_open and engine_cz_finish the engine's own image pass
 * (src/pagework/compress/images.rs, csrc/compress_images.c) may replace image streams.
 * This file runs the passes in their order (engine_cz_finish); each pass is a file of its
 * own (compressor.h). */
#include <stdio.h>
#include <string.h>
#include "compressor.h"
#include "caught.h"
#include "locks.h"

typedef struct {
	int rewrite_images;   /* 0 = lossless only */
	int threshold_dpi;    /* images above this effective dpi are downsampled ... */
	int target_dpi;       /* ... to this dpi */
	int jpeg_quality;     /* JPEG quality for colour and grey images */
	int lossless_stays_lossless; /* flate images re-encoded losslessly (not as JPEG) */
	int recompress_flate; /* re-deflate FlateDecode streams at the best level when smaller */
	int garbage;          /* MuPDF garbage level: 3 = merge duplicate objects, 4 = and duplicate streams */
	int object_streams;
	int skip_rewriter;    /* images the engine's pass did not take are kept as they are */
	int rewrite_in_place; /* MuPDF's rewriter on the document itself, as before the pass
	                       * existed (for comparisons; only without the pass) */
	int subset_fonts;     /* subset embedded TrueType/OpenType/CFF fonts to the glyphs used */
	int drop_private;     /* drop what no viewer shows: thumbnails, PieceInfo, non-document metadata */
	int page_count;       /* out */
	int rewriter_ran;     /* out: MuPDF's image rewriter ran (the content guard checks) */
	int fonts_subset;     /* out: MuPDF's font subsetter changed the document (the guard checks) */
	pixel_deflater deflate_pixels; /* set by the Rust side (zlib-rs); NULL: MuPDF's zlib */
} engine_compress_options;

/* Subsets the embedded fonts to the glyphs the pages (and their annotations) use, with
 * MuPDF's pdf_subset_fonts (TrueType, OpenType and CFF programs; a bare Type 1 program
 * is left as it is). A font it cannot parse is left alone by MuPDF; a failure of the
 * whole pass (a page that cannot be read) leaves the document unchanged, as the fonts
 * are rewritten only after every page was read. Returns 1 when it ran through. */
static int subset_fonts(fz_context *ctx, pdf_document *doc)
{
	int ok = 0;
	fz_var(ok);
	fz_try(ctx)
	{
		pdf_subset_fonts(ctx, doc, 0, NULL);
		ok = 1;
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return ok;
}

/* The trailer's /ID made a function of its first string (kept: an encrypted file's key
 * depends on it): MuPDF's save puts random bytes in the second, which the xref stream
 * then deflates to a byte more or less, so two levels with nothing to do apart came out
 * a byte apart either way (scanned-rotated-4-directions.pdf: balanced 73,211 bytes,
 * light 73,210 in one run). The save is then told not to change it. */
static void settle_identity(fz_context *ctx, pdf_document *doc)
{
	pdf_obj *id = pdf_dict_get(ctx, pdf_trailer(ctx, doc), PDF_NAME(ID));
	unsigned char digest[16];
	const char *first;
	size_t n = 0;
	fz_md5 md5;
	if (!pdf_is_array(ctx, id) || pdf_array_len(ctx, id) < 2)
		return;
	first = pdf_to_string(ctx, pdf_array_get(ctx, id, 0), &n);
	fz_md5_init(&md5);
	fz_md5_update(&md5, (const unsigned char *)first, n);
	fz_md5_update(&md5, (const unsigned char *)"compressed", 10);
	fz_md5_final(&md5, digest);
	pdf_array_put_string(ctx, id, 1, (const char *)digest, sizeof digest);
}

/* Opens `input` into a new handle. Returns ENGINE_OK (then *out is set; close it with
 * engine_cz_close), ENGINE_OPEN_FAILED, ENGINE_NEEDS_PASSWORD or ENGINE_NO_CONTEXT. */
int engine_cz_open(const char *input, engine_cz **out, int *page_count, char *err, int errlen)
{
	fz_context *ctx = engine_new_private_context(FZ_STORE_DEFAULT);
	pdf_document *doc = NULL;
	engine_cz *z = NULL;
	int rc = ENGINE_OK;
	*out = NULL;
	if (!ctx)
		return ENGINE_NO_CONTEXT;
	/* As the mupdf crate's contexts: MuPDF's warnings (damaged files) are not printed. */
	fz_set_warning_callback(ctx, NULL, NULL);
	fz_set_error_callback(ctx, NULL, NULL);
	fz_var(doc);
	fz_var(z);
	fz_try(ctx)
	{
		doc = pdf_open_document(ctx, input);
		if (pdf_needs_password(ctx, doc))
			rc = ENGINE_NEEDS_PASSWORD;
		else
		{
			*page_count = pdf_count_pages(ctx, doc);
			z = fz_malloc_struct(ctx, engine_cz);
			z->ctx = ctx;
			z->doc = doc;
			z->path = fz_strdup(ctx, input);
		}
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_OPEN_FAILED;
	}
	if (!z)
	{
		fz_drop_document(ctx, (fz_document *)doc);
		fz_drop_context(ctx);
		return rc;
	}
	*out = z;
	return ENGINE_OK;
}

void engine_cz_close(engine_cz *z)
{
	fz_context *ctx;
	if (!z)
		return;
	ctx = z->ctx;
	engine_cz_drop_candidates(z);
	fz_drop_document(ctx, (fz_document *)z->doc);
	fz_free(ctx, z->path);
	fz_free(ctx, z);
	fz_drop_context(ctx);
}

static void rewrite_images(fz_context *ctx, pdf_document *doc, void *opaque)
{
	engine_compress_options *o = opaque;
	pdf_image_rewriter_options r;
	char q[8];
	memset(&r, 0, sizeof r);
	snprintf(q, sizeof q, "%d", o->jpeg_quality);
	/* Colour and grey images get the same settings. Images stored losslessly
	 * (flate: often synthetic, flat colour) stay lossless when
	 * lossless_stays_lossless is set: a downsampled flat image deflates far
	 * smaller than it JPEG-encodes. */
#define SET_FAMILY(fam) do { \
		r.fam##_lossless_image_subsample_method = FZ_SUBSAMPLE_BICUBIC; \
		r.fam##_lossy_image_subsample_method = FZ_SUBSAMPLE_BICUBIC; \
		r.fam##_lossless_image_subsample_threshold = o->threshold_dpi; \
		r.fam##_lossless_image_subsample_to = o->target_dpi; \
		r.fam##_lossy_image_subsample_threshold = o->threshold_dpi; \
		r.fam##_lossy_image_subsample_to = o->target_dpi; \
		r.fam##_lossless_image_recompress_method = \
			o->lossless_stays_lossless ? FZ_RECOMPRESS_LOSSLESS : FZ_RECOMPRESS_JPEG; \
		r.fam##_lossy_image_recompress_method = FZ_RECOMPRESS_JPEG; \
		r.fam##_lossy_image_recompress_quality = q; \
		r.fam##_lossless_image_recompress_quality = q; \
	} while (0)
	SET_FAMILY(color);
	SET_FAMILY(gray);
#undef SET_FAMILY
	/* Bitonal scans stay bitonal and lossless: never subsampled, re-encoded
	 * as CCITT G4 only when that is smaller. */
	r.bitonal_image_subsample_method = FZ_SUBSAMPLE_AVERAGE;
	r.bitonal_image_subsample_threshold = 0;
	r.bitonal_image_subsample_to = 0;
	r.bitonal_image_recompress_method = FZ_RECOMPRESS_FAX;
	r.recompress_when = FZ_RECOMPRESS_WHEN_SMALLER;
	pdf_rewrite_images(ctx, doc, &r);
}

/* Runs MuPDF's image rewriter over the images the engine's pass left (all of them when
 * there was no pass), the structural clean-up, and saves to `output`. Returns ENGINE_OK
 * or ENGINE_FAILED (message in err). */
int engine_cz_finish(engine_cz *z, const char *output, engine_compress_options *o, char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	int rc = ENGINE_OK;
	fz_var(rc);
	fz_try(ctx)
	{
		pdf_write_options w;
		o->page_count = pdf_count_pages(ctx, doc);
		o->rewriter_ran = 0;
		o->fonts_subset = 0;
		/* Lossless, so at every level (compress_colorspace.c); before the palettes are
		 * flattened, which only a tint transform left large warrants. */
		if (!doc->crypt)
			engine_cz_reduce_sampled_functions(ctx, doc);
		if (o->rewrite_images)
		{
			/* The rewriter filters every page's content and rewrites its resources,
			 * which damages some files: it runs on a second opening and only its
			 * new images are copied over; the caller still checks the output. */
			if (!o->skip_rewriter && engine_cz_needs_rewriter(z))
			{
				o->rewriter_ran = 1;
				if (o->rewrite_in_place)
					rewrite_images(ctx, doc, o);
				else
					engine_cz_isolated_rewrite(z, rewrite_images, o);
			}
			/* The print-condition ICC profiles of PDF/X and PDF/A (/OutputIntents,
			 * often several hundred KB) are dropped, as Ghostscript's presets do;
			 * the pages' own colour spaces are kept. */
			pdf_dict_del(ctx, pdf_dict_get(ctx, pdf_trailer(ctx, doc), PDF_NAME(Root)), PDF_NAME(OutputIntents));
			/* Spot colours of indexed palettes become process colours, as those presets
			 * convert them too (compress_colorspace.c); after the rewriter, whose new
			 * images may carry copies of such palettes. */
			if (!doc->crypt)
				engine_cz_flatten_spot_palettes(ctx, doc);
		}
		if (o->drop_private && !doc->crypt)
			engine_cz_slim_metadata(ctx, doc);
		/* One walk drops the private keys (lossy levels) and then what is unreachable,
		 * including what only those keys led to. */
		engine_cz_drop_unreachable(ctx, doc, o->drop_private ? engine_cz_drop_private_keys : NULL);
		/* New font programs are stored unfiltered and deflated by the save below at
		 * the highest level. Encrypted documents are left alone (their streams would
		 * have to be re-encrypted). */
		if (o->subset_fonts && !doc->crypt)
		{
			o->fonts_subset = subset_fonts(ctx, doc);
			o->fonts_subset |= engine_cz_convert_type1(ctx, doc) > 0;
		}
		if (o->recompress_flate)
			engine_cz_deflate_metadata(ctx, doc, o->drop_private);
		if (o->recompress_flate && !doc->crypt)
			engine_cz_recompress_streams(z, o->deflate_pixels);
		pdf_parse_write_options(ctx, &w, "compress=yes,compress-fonts=yes,compress-images=yes");
		w.do_garbage = o->garbage;
		/* Duplicates merged here by hash; the save's own merge (garbage 3 and 4) compares
		 * every pair of objects. Not for encrypted files, whose raw stream bytes are
		 * encrypted per object. */
		if (o->garbage >= 3 && !doc->crypt)
		{
			engine_cz_merge_icc_profiles(ctx, doc);
			engine_cz_merge_duplicates(ctx, doc);
			w.do_garbage = 2;
		}
		w.do_use_objstms = o->object_streams;
		w.do_encrypt = PDF_ENCRYPT_KEEP;
		/* What the save deflates (object streams, unfiltered streams, new font
		 * programs) at zlib level 9, as qpdf --compression-level=9. */
		w.compression_effort = 100;
		settle_identity(ctx, doc);
		w.dont_regenerate_id = 1;
		pdf_save_document(ctx, doc, output, &w);
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_FAILED;
	}
	return rc;
}
