/* The image list of the engine's own image pass (src/compress/images.rs): which image
 * XObjects it may re-encode, at what effective dpi, their raw bytes out, the new
 * streams back in. Everything here runs on one thread, in the handle's MuPDF context;
 * only raw bytes cross to the worker threads. Every entry point is behind fz_try (a
 * MuPDF exception must never unwind through Rust). */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "compress.h"
#include "caught.h"
#include "locks.h"
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

typedef void (image_use_fn)(fz_context *ctx, void *opaque, fz_image **image, fz_matrix ctm, pdf_obj *obj);

/* Calls `fn` for every use of an image on one page, its annotations and widgets (the
 * largest use sets an image's dpi, so repeated uses count), without changing anything. */
static void for_each_image_use(fz_context *ctx, pdf_document *doc, int page_num, image_use_fn *fn, void *opaque)
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

/* Lists the candidate images of every page (content, annotations, widgets, forms
 * inside them). On any error the list is emptied: a page whose uses could not all be
 * seen could get an image downsampled below what that page needs. Returns the count.
 *
 * The walk runs on a second opening of the same file (same object numbers): MuPDF's
 * content filter changes the document even with no_update set (a Type3 font's or
 * form's /Resources are replaced by the filter's renamed copy while the content keeps
 * the old names: on geotopo-117-pages.pdf page 40 lost its figure's fonts). */
/* True when `match` holds for some dictionary that can be reached from page
 * `page_num`'s dictionary (its resources, inherited ones included, forms, patterns,
 * fonts, annotations' appearances) without passing through /Parent or another page:
 * only such a page's content can select what `match` looks for, so the content walks
 * that look for images or fonts skip the other pages (geotopo-117-pages.pdf: 4 pages of
 * 117 reach an image, the gather walk 190 -> 38 ms). `seen` (xref length `n`, zeroed
 * before the first page, the same for every page of one match) holds the stamp (unique
 * per page, positive) of the page that last visited each object, or REACHES_NOTHING.
 * On error the page counts as one that may. */
/* In engine_page_reaches' `seen`: an object from which no match can be reached. */
#define REACHES_NOTHING (-1)

int engine_page_reaches(fz_context *ctx, pdf_document *doc, int page_num, int *seen, int n, int stamp, engine_dict_match match)
{
	pdf_obj **stack = NULL;
	int *visited = NULL;
	int top = 0, cap = 64, found = 0, nvisited = 0, maxvisited = 64, i;
	fz_var(stack);
	fz_var(visited);
	fz_var(found);
	fz_var(nvisited);
	fz_var(maxvisited);
	fz_try(ctx)
	{
		/* Resolved: the page tree holds a reference, and the walk compares dictionaries. */
		pdf_obj *page = pdf_resolve_indirect(ctx, pdf_lookup_page_obj(ctx, doc, page_num));
		stack = fz_malloc_array(ctx, cap, pdf_obj *);
		visited = fz_malloc_array(ctx, maxvisited, int);
		stack[top++] = page;
		stack[top++] = pdf_dict_get_inheritable(ctx, page, PDF_NAME(Resources));
		while (top && !found)
		{
			pdf_obj *o = stack[--top];
			if (pdf_is_indirect(ctx, o))
			{
				int num = pdf_to_num(ctx, o);
				if (num > 0 && num < n)
				{
					if (seen[num] == stamp || seen[num] == REACHES_NOTHING)
						continue;
					seen[num] = stamp;
					if (nvisited == maxvisited)
					{
						maxvisited *= 2;
						visited = fz_realloc_array(ctx, visited, maxvisited, int);
					}
					visited[nvisited++] = num;
				}
				o = pdf_resolve_indirect(ctx, o);
			}
			if (!pdf_is_dict(ctx, o) && !pdf_is_array(ctx, o))
				continue;
			if (pdf_is_dict(ctx, o))
			{
				pdf_obj *type = pdf_dict_get(ctx, o, PDF_NAME(Type));
				if (match(ctx, o))
				{
					found = 1;
					break;
				}
				if ((type == PDF_NAME(Page) && o != page) || type == PDF_NAME(Pages))
					continue;
			}
			engine_push_children(ctx, o, PDF_NAME(Parent), &stack, &top, &cap);
		}
	}
	fz_always(ctx)
		fz_free(ctx, stack);
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
		found = 1;
	}
	/* A walk that ended without a match went everywhere from each object it visited:
	 * none of them leads to a match, and the next pages' walks skip them (the fonts and
	 * resources most pages share are walked once, not once per page). */
	if (!found)
		for (i = 0; i < nvisited; i++)
			seen[visited[i]] = REACHES_NOTHING;
	fz_free(ctx, visited);
	return found;
}

static int is_image(fz_context *ctx, pdf_obj *dict)
{
	return pdf_dict_get(ctx, dict, PDF_NAME(Subtype)) == PDF_NAME(Image);
}

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
				for_each_image_use(ctx, scan, i, gather_image, z);
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

/* pdf_rewrite_images has no way to skip an image, except the kinds it cannot rewrite:
 * it returns at once for a colour-keyed image (/Mask array), before decoding it. So in
 * the opening the rewriter runs on (isolated_rewrite below, thrown away after), each
 * image the pass handled gets a placeholder colour key, its SMask removed (it takes
 * precedence over /Mask when the image is loaded). */
static void hide_handled_in(engine_cz *z, pdf_document *doc)
{
	fz_context *ctx = z->ctx;
	int i, k;
	for (i = 0; i < z->ncand; i++) {
		engine_candidate *c = &z->cand[i];
		pdf_obj *dict, *key;
		if (!c->handled)
			continue;
		dict = pdf_load_object(ctx, doc, c->info.num);
		fz_try(ctx)
		{
			if (c->info.kind == ENGINE_IMG_BITONAL || c->info.kind == ENGINE_IMG_KEEP) {
				/* Stencil masks ignore a colour key: these become a 1 x 1 image the
				 * rewriter decodes at no cost (its result is not copied back). */
				static const unsigned char zeros[16] = { 0 };
				fz_buffer *tiny = fz_new_buffer_from_copied_data(ctx, zeros, sizeof zeros);
				pdf_dict_put_int(ctx, dict, PDF_NAME(Width), 1);
				pdf_dict_put_int(ctx, dict, PDF_NAME(Height), 1);
				pdf_dict_del(ctx, dict, PDF_NAME(Filter));
				pdf_dict_del(ctx, dict, PDF_NAME(DecodeParms));
				pdf_dict_del(ctx, dict, PDF_NAME(SMask));
				fz_try(ctx)
					pdf_update_stream(ctx, doc, dict, tiny, 0);
				fz_always(ctx)
					fz_drop_buffer(ctx, tiny);
				fz_catch(ctx)
					fz_rethrow(ctx);
			} else {
				pdf_dict_del(ctx, dict, PDF_NAME(SMask));
				key = pdf_dict_put_array(ctx, dict, PDF_NAME(Mask), 2 * c->info.comps);
				for (k = 0; k < 2 * c->info.comps; k++)
					pdf_array_push_int(ctx, key, 0);
			}
		}
		fz_always(ctx)
			pdf_drop_obj(ctx, dict);
		fz_catch(ctx)
			fz_rethrow(ctx);
	}
}

/* An image MuPDF's rewriter may replace: one the pass does not take, or left. */
static int is_other_or_unhandled(engine_cz *z, int num)
{
	int i;
	for (i = 0; i < z->ncand; i++)
		if (z->cand[i].info.num == num)
			return !z->cand[i].handled;
	return 1;
}

/* MuPDF's image rewriter on a second opening (isolated_rewrite below): the image object
 * of every use, in walk order. */
typedef struct {
	int *num;
	int n, max;
} use_list;

static void record_use(fz_context *ctx, void *opaque, fz_image **image, fz_matrix ctm, pdf_obj *obj)
{
	use_list *l = opaque;
	if (l->n == l->max) {
		int m = l->max ? l->max * 2 : 64;
		l->num = fz_realloc(ctx, l->num, m * sizeof *l->num);
		l->max = m;
	}
	l->num[l->n++] = obj ? pdf_to_num(ctx, obj) : 0;
}

static void walk_uses(fz_context *ctx, pdf_document *doc, use_list *l)
{
	int i, pages = pdf_count_pages(ctx, doc);
	for (i = 0; i < pages; i++)
		for_each_image_use(ctx, doc, i, record_use, l);
}

/* The entries that describe an image's samples: taken from the rewriter's new image.
 * The rest of the original dictionary (SMask, Mask, Intent, OC, Metadata, StructParent
 * ...) is kept: pdf_add_image would drop them. */
static void copy_image(fz_context *ctx, pdf_graft_map *map, pdf_document *doc, int num, pdf_document *src, int src_num)
{
	static pdf_obj *const keys[] = {
		PDF_NAME(Width), PDF_NAME(Height), PDF_NAME(BitsPerComponent), PDF_NAME(ColorSpace),
		PDF_NAME(Filter), PDF_NAME(DecodeParms), PDF_NAME(Decode), PDF_NAME(ImageMask)
	};
	pdf_obj *from = NULL, *to = NULL;
	fz_buffer *raw = NULL;
	size_t k;
	fz_var(from);
	fz_var(to);
	fz_var(raw);
	fz_try(ctx)
	{
		from = pdf_new_indirect(ctx, src, src_num, 0);
		to = pdf_new_indirect(ctx, doc, num, 0);
		raw = pdf_load_raw_stream_number(ctx, src, src_num);
		for (k = 0; k < nelem(keys); k++) {
			pdf_obj *v = pdf_dict_get(ctx, from, keys[k]);
			if (v)
				pdf_dict_put_drop(ctx, to, keys[k], pdf_graft_mapped_object(ctx, map, v));
			else
				pdf_dict_del(ctx, to, keys[k]);
		}
		pdf_dict_del(ctx, to, PDF_NAME(F));
		pdf_dict_del(ctx, to, PDF_NAME(DP));
		pdf_update_stream(ctx, doc, to, raw, 1);
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, raw);
		pdf_drop_obj(ctx, to);
		pdf_drop_obj(ctx, from);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
}

/* True when image `num`'s stream decodes without error. MuPDF's rewriter re-encodes
 * whatever it could decode of a damaged image (a zlib error reads as an early end, the
 * rest padded): that image is kept as stored instead, as the engine's pass does, so a
 * reader that recovers more of it still can. */
static int decodes_cleanly(fz_context *ctx, pdf_document *doc, int num)
{
	fz_stream *stm = NULL;
	int ok = 0;
	fz_var(stm);
	fz_try(ctx)
	{
		unsigned char buf[16384];
		stm = pdf_open_stream_number(ctx, doc, num);
		while (fz_read(ctx, stm, buf, sizeof buf) > 0)
			;
		ok = !stm->error;
	}
	fz_always(ctx)
		fz_drop_stream(ctx, stm);
	fz_catch(ctx)
		ok = 0;
	return ok;
}

/* MuPDF's pdf_rewrite_images filters every page's content and rewrites its resources,
 * which damages some files (pdf20-utf8-test.pdf: the page's /Resources became null). So
 * it runs on a second opening of the file instead (the pass's images hidden there too),
 * and only its new image streams are copied into the document, each into the image
 * object it replaces: the document's contents and resources are never filtered. The
 * new image of each use is found by walking the second opening before and after the
 * rewrite (the filter keeps the operators in order); a walk that does not line up, or
 * an image given two different replacements, copies nothing for it, nor for an image
 * that does not decode cleanly. Inline images (in the content itself) are not
 * rewritten. */
void engine_cz_isolated_rewrite(engine_cz *z, void (*rewrite)(fz_context *, pdf_document *, void *), void *opaque)
{
	fz_context *ctx = z->ctx;
	pdf_document *scan = NULL;
	pdf_graft_map *map = NULL;
	use_list before = { 0 }, after = { 0 };
	int i, j;
	fz_var(scan);
	fz_var(map);
	fz_try(ctx)
	{
		scan = pdf_open_document(ctx, z->path);
		/* Only its new image streams are copied back (see above), so the structure it
		 * filters need not survive (csrc/mcid.c). */
		pdf_drop_obj(ctx, engine_mcid_untag_costly(ctx, scan));
		if (pdf_count_pages(ctx, scan) != pdf_count_pages(ctx, z->doc))
			fz_throw(ctx, FZ_ERROR_GENERIC, "page count differs between openings");
		hide_handled_in(z, scan);
		walk_uses(ctx, scan, &before);
		rewrite(ctx, scan, opaque);
		walk_uses(ctx, scan, &after);
		if (before.n == after.n) {
			map = pdf_new_graft_map(ctx, z->doc);
			for (i = 0; i < before.n; i++) {
				int a = before.num[i], b = after.num[i], consistent = 1;
				if (a <= 0 || b <= 0 || a == b || !is_other_or_unhandled(z, a))
					continue;
				for (j = 0; j < i; j++)
					if (before.num[j] == a && after.num[j] != b)
						consistent = 0;
				for (j = i + 1; j < before.n && consistent; j++)
					if (before.num[j] == a && after.num[j] != b)
						consistent = 0;
				if (!consistent)
					continue;
				/* done once per image: later uses find it already replaced */
				for (j = 0; j < i; j++)
					if (before.num[j] == a)
						break;
				if (j < i)
					continue;
				if (decodes_cleanly(ctx, z->doc, a))
					copy_image(ctx, map, z->doc, a, scan, b);
			}
		}
	}
	fz_always(ctx)
	{
		pdf_drop_graft_map(ctx, map);
		fz_free(ctx, before.num);
		fz_free(ctx, after.num);
		fz_drop_document(ctx, (fz_document *)scan);
		fz_empty_store(ctx);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
}

/* csrc/g4.c: MuPDF's G4 encoder, faster, without a context. */
unsigned char *engine_g4(const unsigned char *src, int columns, int rows, ptrdiff_t stride, size_t *len);

/* CCITT G4 of packed 1-bit rows (stride (w + 7) / 8; a 1 bit is G4 white); callable from
 * any thread. Returns malloc'ed data (engine_g4_free) and its length, or NULL. */
unsigned char *engine_g4_encode(const unsigned char *packed, int w, int h, size_t *len)
{
	return engine_g4(packed, w, h, (w + 7) / 8, len);
}

/* The same by MuPDF's own encoder, in a context of its own: the reference the unit test
 * holds engine_g4 to. */
unsigned char *engine_g4_encode_mupdf(const unsigned char *packed, int w, int h, size_t *len)
{
	fz_context *ctx = engine_new_private_context(FZ_STORE_UNLIMITED);
	fz_buffer *buf = NULL;
	unsigned char *out = NULL;
	if (!ctx)
		return NULL;
	fz_var(buf);
	fz_var(out);
	fz_try(ctx)
	{
		buf = fz_compress_ccitt_fax_g4(ctx, packed, w, h, (w + 7) / 8);
		out = malloc(buf->len ? buf->len : 1);
		if (out) {
			memcpy(out, buf->data, buf->len);
			*len = buf->len;
		}
	}
	fz_always(ctx)
		fz_drop_buffer(ctx, buf);
	fz_catch(ctx)
	{
		free(out);
		out = NULL;
	}
	fz_drop_context(ctx);
	return out;
}

void engine_g4_free(unsigned char *p)
{
	free(p);
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

/* The document's XMP (the catalogue's /Metadata) without its embedded thumbnails
 * (<xmp:Thumbnails>, <xap:Thumbnails>: a base64 JPEG, 24 KB in a Photoshop file that
 * holds a 64 KB page image), stored unfiltered: compress.c's deflate_metadata deflates
 * it with the other metadata. For the lossy levels only. Metadata that cannot be read
 * is left as it is. */
void engine_cz_slim_metadata(fz_context *ctx, pdf_document *doc)
{
	pdf_obj *md = pdf_dict_getp(ctx, pdf_trailer(ctx, doc), "Root/Metadata");
	fz_buffer *xml = NULL, *out = NULL;
	fz_var(xml);
	fz_var(out);
	if (!pdf_is_stream(ctx, md))
		return;
	fz_try(ctx)
	{
		unsigned char *data;
		size_t len, pos = 0;
		xml = pdf_load_stream(ctx, md);
		len = fz_buffer_storage(ctx, xml, &data);
		out = fz_new_buffer(ctx, len + 1);
		while (pos < len) {
			/* an element <prefix:Thumbnails ...> ... </prefix:Thumbnails> */
			const char *hit = NULL;
			size_t k;
			for (k = pos; k + 12 <= len; k++)
				if (data[k] == ':' && !memcmp(data + k + 1, "Thumbnails", 10)) {
					hit = (const char *)data + k;
					break;
				}
			if (hit) {
				size_t colon = (const unsigned char *)hit - data, open = colon, end;
				while (open > pos && data[open] != '<' && data[open] != '>' && data[open] != '/')
					open--;
				if (data[open] == '<' && (data[colon + 11] == '>' || data[colon + 11] == ' ' ||
					data[colon + 11] == '\n' || data[colon + 11] == '\r' || data[colon + 11] == '\t')) {
					/* the closing tag: "</" + the same qualified name + ">" */
					size_t qlen = colon + 11 - (open + 1);
					for (end = colon + 11; end + qlen + 3 <= len; end++)
						if (data[end] == '<' && data[end + 1] == '/' &&
							!memcmp(data + end + 2, data + open + 1, qlen) && data[end + 2 + qlen] == '>')
							break;
					if (end + qlen + 3 <= len) {
						fz_append_data(ctx, out, data + pos, open - pos);
						pos = end + qlen + 3;
						continue;
					}
				}
				fz_append_data(ctx, out, data + pos, colon + 1 - pos);
				pos = colon + 1;
				continue;
			}
			fz_append_data(ctx, out, data + pos, len - pos);
			pos = len;
		}
		/* Unfiltered (compressed = 0 drops /Filter and /DecodeParms). */
		pdf_update_stream(ctx, doc, md, out, 0);
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, xml);
		fz_drop_buffer(ctx, out);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
}
