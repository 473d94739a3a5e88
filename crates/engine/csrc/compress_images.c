/* The image list of the engine's own image pass (src/compress/images.rs): which image
 * XObjects it may re-encode, at what effective dpi, their raw bytes out, the new
 * streams back in. Everything here runs on one thread, in the handle's MuPDF context;
 * only raw bytes cross to the worker threads. Every entry point is behind fz_try (a
 * MuPDF exception must never unwind through Rust). */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "compressor.h"
#include "caught.h"
#include "mcid.h"

/* As MuPDF's image rewriter: the dpi of one use, the smaller of the two axes. */
static float dpi_from_ctm(fz_matrix ctm, int w, int h)
{
	float expx = sqrtf(ctm.a * ctm.a + ctm.b * ctm.b);
	float expy = sqrtf(ctm.c * ctm.c + ctm.d * ctm.d);
	float dpix = w * 72.0f / (expx == 0 ? 1 : expx);
	float dpiy = h * 72.0f / (expy == 0 ? 1 : expy);
	return dpix > dpiy ? dpiy : dpix;
}

static int is_other(engine_cz *z, int num)
{
	int i;
	for (i = 0; i < z->nothers; i++)
		if (z->others[i] == num)
			return 1;
	return 0;
}

static void add_other(fz_context *ctx, engine_cz *z, int num)
{
	if (is_other(z, num))
		return;
	if (z->nothers == z->maxothers) {
		int m = z->maxothers ? z->maxothers * 2 : 32;
		z->others = fz_realloc(ctx, z->others, m * sizeof *z->others);
		z->maxothers = m;
	}
	z->others[z->nothers++] = num;
}

static int is_flate(pdf_obj *f) { return f == PDF_NAME(FlateDecode) || f == PDF_NAME(Fl); }
static int is_dct(pdf_obj *f) { return f == PDF_NAME(DCTDecode) || f == PDF_NAME(DCT); }

/* The stream's filter and its parameters when it has one, or when it is a JPEG deflated
 * once more ([/FlateDecode /DCTDecode], no predictor; *wrapped set): the DCT layer's. */
static pdf_obj *only_filter(fz_context *ctx, pdf_obj *dict, pdf_obj **parms, int *wrapped)
{
	pdf_obj *f = pdf_dict_geta(ctx, dict, PDF_NAME(Filter), PDF_NAME(F));
	pdf_obj *p = pdf_dict_geta(ctx, dict, PDF_NAME(DecodeParms), PDF_NAME(DP));
	*wrapped = 0;
	if (pdf_is_array(ctx, f)) {
		int n = pdf_array_len(ctx, f);
		pdf_obj *p0 = pdf_is_array(ctx, p) ? pdf_array_get(ctx, p, 0) : NULL;
		if (n == 2 && is_flate(pdf_array_get(ctx, f, 0)) && is_dct(pdf_array_get(ctx, f, 1)) &&
			pdf_dict_get_int_default(ctx, p0, PDF_NAME(Predictor), 1) == 1) {
			*wrapped = 1;
			f = pdf_array_get(ctx, f, 1);
			p = pdf_is_array(ctx, p) ? pdf_array_get(ctx, p, 1) : NULL;
		} else if (n == 1) {
			f = pdf_array_get(ctx, f, 0);
			p = pdf_is_array(ctx, p) ? pdf_array_get(ctx, p, 0) : p;
		} else
			return NULL;
	}
	*parms = pdf_is_dict(ctx, p) ? p : NULL;
	return f;
}

/* A 1-bit image of one component (grey, 2-colour indexed, stencil mask) whose filters
 * MuPDF decodes as a stream (any but JPX; the pass gets its packed rows from
 * engine_cz_raw). Decode, Mask, SMask and the colour space stay as they are: the
 * re-encoding keeps sample values 0 and 1. */
static int eligible_bitonal(fz_context *ctx, fz_image *image, pdf_obj *dict, engine_image *c)
{
	pdf_obj *f = pdf_dict_geta(ctx, dict, PDF_NAME(Filter), PDF_NAME(F));
	int i, n = pdf_is_array(ctx, f) ? pdf_array_len(ctx, f) : 1, jbig2 = 0;
	for (i = 0; i < n; i++) {
		pdf_obj *one = pdf_is_array(ctx, f) ? pdf_array_get(ctx, f, i) : f;
		if (one == PDF_NAME(JPXDecode) || (one && !pdf_is_name(ctx, one)))
			return 0;
		if (one == PDF_NAME(JBIG2Decode))
			jbig2 = 1;
	}
	if (pdf_dict_get_int(ctx, dict, PDF_NAME(Width)) != image->w ||
		pdf_dict_get_int(ctx, dict, PDF_NAME(Height)) != image->h)
		return 0;
	memset(c, 0, sizeof *c);
	c->kind = ENGINE_IMG_BITONAL;
	c->jbig2 = jbig2;
	c->width = image->w;
	c->height = image->h;
	c->comps = 1;
	c->length = pdf_dict_get_int(ctx, dict, PDF_NAME(Length));
	return 1;
}

/* Fills `c` when the pass can take this image: 8-bit grey or colour (device or ICC),
 * not a mask, no colour key or Matte (both name sample values, which re-encoding
 * changes), stored with DCTDecode or FlateDecode alone (flate rows plain or with a PNG
 * predictor), or as deflated JPEG. SMask, Mask (stencil), Decode, Intent and the rest stay as they are. */
static int eligible(fz_context *ctx, fz_image *image, pdf_obj *dict, engine_image *c)
{
	pdf_obj *filter, *parms;
	fz_colorspace *cs = image->colorspace;
	int comps, wrapped;
	if (image->use_colorkey || image->scalable)
		return 0;
	if (image->bpc == 1 && (image->imagemask || (cs && fz_colorspace_n(ctx, cs) == 1)))
		return eligible_bitonal(ctx, image, dict, c);
	if (image->imagemask || image->bpc != 8 || !cs)
		return 0;
	if (!fz_colorspace_is_gray(ctx, cs) && !fz_colorspace_is_rgb(ctx, cs))
		return 0;
	comps = fz_colorspace_n(ctx, cs);
	if (comps != 1 && comps != 3)
		return 0;
	if (pdf_dict_get_int(ctx, dict, PDF_NAME(Width)) != image->w ||
		pdf_dict_get_int(ctx, dict, PDF_NAME(Height)) != image->h)
		return 0;
	filter = only_filter(ctx, dict, &parms, &wrapped);
	memset(c, 0, sizeof *c);
	if (is_dct(filter)) {
		/* An explicit ColorTransform overrides what the JPEG's markers say (colour only). */
		pdf_obj *ct = parms ? pdf_dict_get(ctx, parms, PDF_NAME(ColorTransform)) : NULL;
		c->color_transform = comps == 3 && pdf_is_int(ctx, ct) ? !!pdf_to_int(ctx, ct) : -1;
		c->kind = ENGINE_IMG_DCT;
		c->flate_wrapped = wrapped;
	} else if (is_flate(filter) && !wrapped) {
		int predictor = parms ? pdf_dict_get_int_default(ctx, parms, PDF_NAME(Predictor), 1) : 1;
		if (predictor >= 10) {
			if (pdf_dict_get_int_default(ctx, parms, PDF_NAME(Colors), 1) != comps ||
				pdf_dict_get_int_default(ctx, parms, PDF_NAME(BitsPerComponent), 8) != 8 ||
				pdf_dict_get_int_default(ctx, parms, PDF_NAME(Columns), 1) != image->w)
				return 0;
			c->png_predictor = 1;
		} else if (predictor != 1)
			return 0; /* TIFF predictor */
		c->kind = ENGINE_IMG_FLATE;
	} else
		return 0;
	c->width = image->w;
	c->height = image->h;
	c->comps = comps;
	c->length = pdf_dict_get_int(ctx, dict, PDF_NAME(Length));
	return 1;
}

static void gather_image(fz_context *ctx, void *opaque, fz_image **image, fz_matrix ctm, pdf_obj *obj)
{
	engine_cz *z = opaque;
	engine_image info;
	float dpi;
	int i, num;
	if (!obj) {
		z->inline_images++;
		return;
	}
	num = pdf_to_num(ctx, obj);
	dpi = dpi_from_ctm(ctm, (*image)->w, (*image)->h);
	for (i = 0; i < z->ncand; i++)
		if (z->cand[i].info.num == num) {
			if (dpi < z->cand[i].info.dpi)
				z->cand[i].info.dpi = dpi;
			return;
		}
	if (num > 0 && !is_other(z, num) &&
		(double)(*image)->w * (*image)->h * fz_maxi(1, (*image)->n) > ENGINE_KEEP_ABOVE) {
		/* never decoded: kept as stored, by the pass and the rewriter alike */
		memset(&info, 0, sizeof info);
		info.kind = ENGINE_IMG_KEEP;
		info.width = (*image)->w;
		info.height = (*image)->h;
	} else if (num <= 0 || is_other(z, num) || !eligible(ctx, *image, obj, &info)) {
		add_other(ctx, z, num);
		return;
	}
	if (z->ncand == z->maxcand) {
		int m = z->maxcand ? z->maxcand * 2 : 32;
		z->cand = fz_realloc(ctx, z->cand, m * sizeof *z->cand);
		z->maxcand = m;
	}
	info.num = num;
	info.dpi = dpi;
	memset(&z->cand[z->ncand], 0, sizeof z->cand[z->ncand]);
	z->cand[z->ncand].handled = info.kind == ENGINE_IMG_KEEP;
	z->cand[z->ncand++].info = info;
}

void engine_cz_for_each_image_use(fz_context *ctx, pdf_document *doc, int page_num, image_use_fn *fn, void *opaque)
{
	pdf_page *page = pdf_load_page(ctx, doc, page_num);
	pdf_filter_options options = { 0 };
	pdf_filter_factory list[2] = { 0 };
	pdf_color_filter_options copts = { 0 };
	pdf_annot *annot;
	copts.opaque = opaque;
	copts.image_rewrite = fn;
	copts.repeated_image_rewrite = 1;
	options.filters = list;
	options.recurse = 1;
	options.no_update = 1;
	list[0].filter = pdf_new_color_filter;
	list[0].options = &copts;
	fz_try(ctx)
	{
		pdf_filter_page_contents(ctx, doc, page, &options);
		for (annot = pdf_first_annot(ctx, page); annot; annot = pdf_next_annot(ctx, annot))
			pdf_filter_annot_contents(ctx, doc, annot, &options);
		for (annot = pdf_first_widget(ctx, page); annot; annot = pdf_next_annot(ctx, annot))
			pdf_filter_annot_contents(ctx, doc, annot, &options);
	}
	fz_always(ctx)
		fz_drop_page(ctx, &page->super);
	fz_catch(ctx)
		fz_rethrow(ctx);
}

void engine_cz_drop_candidates(engine_cz *z)
{
	int i;
	for (i = 0; i < z->ncand; i++)
		fz_drop_buffer(z->ctx, z->cand[i].raw);
	fz_free(z->ctx, z->cand);
	fz_free(z->ctx, z->others);
	z->cand = NULL;
	z->others = NULL;
	z->ncand = z->maxcand = z->nothers = z->maxothers = 0;
}

static int is_image(fz_context *ctx, pdf_obj *dict)
{
	return pdf_dict_get(ctx, dict, PDF_NAME(Subtype)) == PDF_NAME(Image);
}

/* Lists the candidate images of every page (content, annotations, widgets, forms
 * inside them). On any error the list is emptied: a page whose uses could not all be
 * seen could get an image downsampled below what that page needs. Returns the count.
 *
 * The walk runs on a second opening of the same file (same object numbers): MuPDF's
 * content filter changes the document even with no_update set (a Type3 font's or
 * form's /Resources are replaced by the filter's renamed copy while the content keeps
 * the old names: on geotopo-117-pages.pdf page 40 lost its figure's fonts). */
int engine_cz_gather(engine_cz *z)
{
	fz_context *ctx = z->ctx;
	pdf_document *scan = NULL;
	int *seen = NULL;
	int n = -1;
	fz_var(scan);
	fz_var(seen);
	fz_try(ctx)
	{
		int i, pages, len;
		scan = pdf_open_document(ctx, z->path);
		/* Read only, never saved: pages MuPDF would take hours to filter are read as
		 * untagged (csrc/mcid.c). */
		pdf_drop_obj(ctx, engine_mcid_untag_costly(ctx, scan));
		pages = pdf_count_pages(ctx, scan);
		if (pages != pdf_count_pages(ctx, z->doc))
			fz_throw(ctx, FZ_ERROR_GENERIC, "page count differs between openings");
		len = pdf_xref_len(ctx, scan);
		seen = fz_calloc(ctx, len > 0 ? len : 1, sizeof *seen);
		for (i = 0; i < pages; i++)
			if (engine_page_reaches(ctx, scan, i, seen, len, i + 1, is_image))
				engine_cz_for_each_image_use(ctx, scan, i, gather_image, z);
		/* An image that is also used where the pass cannot take it stays MuPDF's. */
		n = 0;
		for (i = 0; i < z->ncand; i++)
			if (!is_other(z, z->cand[i].info.num))
				z->cand[n++] = z->cand[i];
		z->ncand = n;
		z->gathered = 1;
	}
	fz_always(ctx)
	{
		fz_free(ctx, seen);
		fz_drop_document(ctx, (fz_document *)scan);
	}
	fz_catch(ctx)
	{
		/* no pass: MuPDF's rewriter does every image, as it would alone */
		engine_cz_drop_candidates(z);
		n = 0;
	}
	return n;
}

const engine_image *engine_cz_image(engine_cz *z, int i)
{
	return i >= 0 && i < z->ncand ? &z->cand[i].info : NULL;
}

/* The stored (still encoded, decrypted) bytes of candidate i, valid until
 * engine_cz_release_raw. Returns 0, or ENGINE_FAILED. */
int engine_cz_raw(engine_cz *z, int i, const unsigned char **data, size_t *len, char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	int rc = ENGINE_OK;
	fz_try(ctx)
	{
		fz_drop_buffer(ctx, z->cand[i].raw);
		z->cand[i].raw = NULL;
		if (z->cand[i].info.kind == ENGINE_IMG_BITONAL) {
			/* decoded: packed rows, read no further than the image's size (a bomb
			 * stops there, and short data is seen as short by the pass) */
			engine_image *c = &z->cand[i].info;
			size_t want = (size_t)((c->width + 7) / 8) * c->height;
			int truncated = 0;
			fz_stream *stm = pdf_open_stream_number(ctx, z->doc, c->num);
			fz_try(ctx)
				z->cand[i].raw = fz_read_best(ctx, stm, want, &truncated, want);
			fz_always(ctx)
				fz_drop_stream(ctx, stm);
			fz_catch(ctx)
				fz_rethrow(ctx);
		} else
			z->cand[i].raw = pdf_load_raw_stream_number(ctx, z->doc, z->cand[i].info.num);
		*len = fz_buffer_storage(ctx, z->cand[i].raw, (unsigned char **)data);
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_FAILED;
	}
	return rc;
}

void engine_cz_release_raw(engine_cz *z, int i)
{
	fz_drop_buffer(z->ctx, z->cand[i].raw);
	z->cand[i].raw = NULL;
}

/* Marks candidate i as done by the engine (re-encoded, or not worth it): MuPDF's
 * rewriter leaves it alone. */
void engine_cz_mark_handled(engine_cz *z, int i)
{
	z->cand[i].handled = 1;
}

/* Replaces candidate i's stream with `len` bytes of `kind` (ENGINE_IMG_DCT or
 * ENGINE_IMG_FLATE without predictor) of w x h pixels, same colour space. */
int engine_cz_replace(engine_cz *z, int i, const unsigned char *data, size_t len, int w, int h, int kind,
	char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	pdf_obj *ref = NULL;
	fz_buffer *buf = NULL;
	int rc = ENGINE_OK;
	fz_var(ref);
	fz_var(buf);
	fz_try(ctx)
	{
		ref = pdf_new_indirect(ctx, z->doc, z->cand[i].info.num, 0);
		buf = fz_new_buffer_from_copied_data(ctx, data, len);
		pdf_update_stream(ctx, z->doc, ref, buf, 1);
		pdf_dict_put_int(ctx, ref, PDF_NAME(Width), w);
		pdf_dict_put_int(ctx, ref, PDF_NAME(Height), h);
		pdf_dict_put_int(ctx, ref, PDF_NAME(BitsPerComponent), 8);
		pdf_dict_put(ctx, ref, PDF_NAME(Filter), kind == ENGINE_IMG_DCT ? PDF_NAME(DCTDecode) : PDF_NAME(FlateDecode));
		pdf_dict_del(ctx, ref, PDF_NAME(DecodeParms));
		pdf_dict_del(ctx, ref, PDF_NAME(F));
		pdf_dict_del(ctx, ref, PDF_NAME(DP));
		z->cand[i].handled = 1;
		z->cand[i].written = 1;
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, buf);
		pdf_drop_obj(ctx, ref);
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_FAILED;
	}
	return rc;
}

int engine_cz_written(engine_cz *z, int num)
{
	int i;
	for (i = 0; i < z->ncand; i++)
		if (z->cand[i].info.num == num)
			return z->cand[i].written;
	return 0;
}

int engine_cz_needs_rewriter(engine_cz *z)
{
	int i;
	/* Inline images do not count: only image objects are copied back from the
	 * rewriter's opening. */
	if (!z->gathered || z->nothers)
		return 1;
	for (i = 0; i < z->ncand; i++)
		if (!z->cand[i].handled)
			return 1;
	return 0;
}

/* Replaces candidate i with `len` bytes of a 1-bit w x h image, encoded as `mode`
 * (ENGINE_BITONAL_FLATE, _G4, or _G4_BLACK_IS_1: G4 of the inverted rows), when smaller
 * than the stored stream; else the image is kept as stored. *replaced says which.
 * Sample values are those of the original (0 stays 0), so ColorSpace, Decode and
 * ImageMask stay. Returns ENGINE_OK or ENGINE_FAILED. */
int engine_cz_replace_bitonal(engine_cz *z, int i, const unsigned char *data, size_t len, int w, int h,
	int mode, int *replaced, char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	fz_buffer *buf = NULL;
	pdf_obj *ref = NULL;
	int rc = ENGINE_OK;
	fz_var(buf);
	fz_var(ref);
	*replaced = 0;
	z->cand[i].handled = 1;
	if (len >= (size_t)z->cand[i].info.length)
		return ENGINE_OK;
	fz_try(ctx)
	{
		pdf_obj *parms;
		buf = fz_new_buffer_from_copied_data(ctx, data, len);
		ref = pdf_new_indirect(ctx, z->doc, z->cand[i].info.num, 0);
		pdf_update_stream(ctx, z->doc, ref, buf, 1);
		pdf_dict_put_int(ctx, ref, PDF_NAME(Width), w);
		pdf_dict_put_int(ctx, ref, PDF_NAME(Height), h);
		pdf_dict_put_int(ctx, ref, PDF_NAME(BitsPerComponent), 1);
		pdf_dict_del(ctx, ref, PDF_NAME(F));
		pdf_dict_del(ctx, ref, PDF_NAME(DP));
		if (mode == ENGINE_BITONAL_FLATE) {
			pdf_dict_put(ctx, ref, PDF_NAME(Filter), PDF_NAME(FlateDecode));
			pdf_dict_del(ctx, ref, PDF_NAME(DecodeParms));
		} else {
			pdf_dict_put(ctx, ref, PDF_NAME(Filter), PDF_NAME(CCITTFaxDecode));
			parms = pdf_dict_put_dict(ctx, ref, PDF_NAME(DecodeParms), 4);
			pdf_dict_put_int(ctx, parms, PDF_NAME(K), -1);
			pdf_dict_put_int(ctx, parms, PDF_NAME(Columns), w);
			pdf_dict_put_int(ctx, parms, PDF_NAME(Rows), h);
			if (mode == ENGINE_BITONAL_G4_BLACK_IS_1)
				pdf_dict_put_bool(ctx, parms, PDF_NAME(BlackIs1), 1);
		}
		z->cand[i].written = 1;
		*replaced = 1;
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, buf);
		pdf_drop_obj(ctx, ref);
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_FAILED;
	}
	return rc;
}
