/* Compression of a whole PDF as passes over one opened document, each behind fz_try (a
 * MuPDF exception must never unwind through Rust). The engine (src/pagework/compress.rs,
 * through src/pagework/compress/ffi.rs) calls them in this order:
 *
 *   engine_cz_open              the document, in a private fz_context
 *   (compress_images.c)         the engine's image pass (lossy levels)
 *   engine_cz_reduce_functions  sampled functions stored by their corners
 *   engine_cz_other_images      lossy levels: MuPDF's rewriter for the images the pass left,
 *                               /OutputIntents dropped, spot palettes made process colours
 *   engine_cz_prune             private data (lossy levels) and unreachable objects deleted
 *   engine_cz_fonts_collect     (compress_fonts.c) fonts subset; Type 1 programs and CMaps
 *   engine_cz_fonts_install       copied out, and what the engine made of them put back
 *   engine_cz_streams           metadata deflated, ASCII layers off, flate re-deflated
 *   engine_cz_save              duplicates merged, the /ID settled, saved
 *   engine_cz_close
 *
 * A pass reads only its arguments and, where the engine decides on it, writes a result
 * of its own (engine_images_result: whether the rewriter ran; the fonts pass's what it
 * found and changed); on a failure (ENGINE_FAILED, message in err) the engine stops the
 * run. Nothing here calls back into the engine. The mupdf crate exposes
 * neither pdf_rewrite_images nor object streams; the private context shares no state with
 * the mupdf crate, and a handle is used from one thread. */
#include <stdio.h>
#include <string.h>
#include "compressor.h"
#include "caught.h"
#include "locks.h"

/* How MuPDF's rewriter treats the images the engine's pass left (layout shared with
 * src/pagework/compress/ffi.rs). */
typedef struct {
	int threshold_dpi;    /* images above this effective dpi are downsampled ... */
	int target_dpi;       /* ... to this dpi */
	int jpeg_quality;     /* JPEG quality for colour and grey images */
	int lossless_stays_lossless; /* flate images re-encoded losslessly (not as JPEG) */
	int rewriter;         /* 0: the images the pass did not take are kept as they are */
	int in_place;         /* the rewriter on the document itself (for comparisons; only
	                       * without the engine's pass) */
} engine_image_options;

typedef struct {
	int rewriter_ran;     /* MuPDF's rewriter ran, or failed (the content guard checks) */
} engine_images_result;

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
	engine_cz_drop_font_work(z);
	fz_drop_document(ctx, (fz_document *)z->doc);
	fz_free(ctx, z->path);
	fz_free(ctx, z);
	fz_drop_context(ctx);
}

static void rewrite_images(fz_context *ctx, pdf_document *doc, void *opaque)
{
	const engine_image_options *o = opaque;
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

/* A pass's frame: the statement after `errlen` runs behind fz_try, and a MuPDF exception
 * becomes ENGINE_FAILED with its message in err. */
#define PASS(ctx, err, errlen, ...) \
	do { \
		int pass_rc_ = ENGINE_OK; \
		fz_try(ctx) { __VA_ARGS__; } \
		fz_catch(ctx) \
		{ \
			copy_message(ctx, err, errlen); \
			pass_rc_ = ENGINE_FAILED; \
		} \
		return pass_rc_; \
	} while (0)

/* Multilinear sampled functions stored by their corners (compress_colorspace.c); lossless,
 * so at every level, and before spot palettes are flattened, which only a tint transform
 * left large warrants. Encrypted documents are left alone (their streams would have to be
 * re-encrypted). */
int engine_cz_reduce_functions(engine_cz *z, char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	PASS(ctx, err, errlen, if (!z->doc->crypt) engine_cz_reduce_sampled_functions(ctx, z->doc));
}

static void other_images(engine_cz *z, const engine_image_options *o, engine_images_result *r)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	/* The rewriter filters every page's content and rewrites its resources, which damages
	 * some files: it runs on a second opening and only its new images are copied over;
	 * the engine still checks the output. */
	if (o->rewriter && engine_cz_needs_rewriter(z))
	{
		r->rewriter_ran = 1;
		if (o->in_place)
			rewrite_images(ctx, doc, (void *)o);
		else
			engine_cz_isolated_rewrite(z, rewrite_images, (void *)o);
	}
	/* The print-condition ICC profiles of PDF/X and PDF/A (/OutputIntents, often several
	 * hundred KB) are dropped, as Ghostscript's presets do; the pages' own colour spaces
	 * are kept. */
	pdf_dict_del(ctx, pdf_dict_get(ctx, pdf_trailer(ctx, doc), PDF_NAME(Root)), PDF_NAME(OutputIntents));
	/* Spot colours of indexed palettes become process colours, as those presets convert
	 * them too (compress_colorspace.c); after the rewriter, whose new images may carry
	 * copies of such palettes. */
	if (!doc->crypt)
		engine_cz_flatten_spot_palettes(ctx, doc);
}

/* Lossy levels: MuPDF's image rewriter over the images the engine's pass left (all of them
 * when there was no pass), /OutputIntents dropped, spot palettes flattened. r->rewriter_ran
 * is set before the rewriter starts, so a failure in it is seen as the rewriter's. */
int engine_cz_other_images(engine_cz *z, const engine_image_options *o, engine_images_result *r, char *err,
	int errlen)
{
	memset(r, 0, sizeof *r);
	PASS(z->ctx, err, errlen, other_images(z, o, r));
}

static void prune(engine_cz *z, int drop_private)
{
	fz_context *ctx = z->ctx;
	if (drop_private && !z->doc->crypt)
		engine_cz_slim_metadata(ctx, z->doc);
	/* One walk drops the private keys and then what is unreachable, including what only
	 * those keys led to. */
	engine_cz_drop_unreachable(ctx, z->doc, drop_private ? engine_cz_drop_private_keys : NULL);
}

/* What no viewer shows (lossy levels, `drop_private`: thumbnails, PieceInfo, XMP of
 * anything but the document, the document XMP's thumbnails) and every unreachable object
 * deleted, before the passes that look at every object. */
int engine_cz_prune(engine_cz *z, int drop_private, char *err, int errlen)
{
	PASS(z->ctx, err, errlen, prune(z, drop_private));
}

static void streams(engine_cz *z, int pdfa_too)
{
	engine_cz_deflate_metadata(z->ctx, z->doc, pdfa_too);
	if (!z->doc->crypt)
		engine_cz_recompress_streams(z);
}

/* The XMP metadata deflated (a PDF/A file's too when `pdfa_too`), the ASCII layers taken
 * off and the flate streams re-deflated at the best level when smaller (compress_deflate.c;
 * not the images the pass wrote, not in encrypted documents). */
int engine_cz_streams(engine_cz *z, int pdfa_too, char *err, int errlen)
{
	PASS(z->ctx, err, errlen, streams(z, pdfa_too));
}

static void save(engine_cz *z, const char *output)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	pdf_write_options w;
	pdf_parse_write_options(ctx, &w, "compress=yes,compress-fonts=yes,compress-images=yes");
	/* Duplicate objects and streams merged: here by hash, as the save's own merge (garbage
	 * 3 and 4) compares every pair of objects. Not for encrypted files, whose raw stream
	 * bytes are encrypted per object: the save merges those. */
	w.do_garbage = 4;
	if (!doc->crypt)
	{
		engine_cz_merge_icc_profiles(ctx, doc);
		engine_cz_merge_duplicates(ctx, doc);
		w.do_garbage = 2;
	}
	w.do_use_objstms = 1;
	w.do_encrypt = PDF_ENCRYPT_KEEP;
	/* What the save deflates (object streams, unfiltered streams, new font programs) at
	 * zlib level 9, as qpdf --compression-level=9. */
	w.compression_effort = 100;
	settle_identity(ctx, doc);
	w.dont_regenerate_id = 1;
	pdf_save_document(ctx, doc, output, &w);
}

/* Duplicates merged, the /ID settled, and the document saved to `output` with object
 * streams and garbage collection. */
int engine_cz_save(engine_cz *z, const char *output, char *err, int errlen)
{
	PASS(z->ctx, err, errlen, save(z, output));
}
