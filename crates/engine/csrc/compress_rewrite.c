/* MuPDF's image rewriter, run on a second opening of the file so that it cannot damage
 * the document (engine_cz_isolated_rewrite): only the image streams it wrote are copied
 * back. */
#include <stdlib.h>
#include "compressor.h"
#include "mcid.h"

/* pdf_rewrite_images has no way to skip an image, except the kinds it cannot rewrite:
 * it returns at once for a colour-keyed image (/Mask array), before decoding it. So in
 * the opening the rewriter runs on (engine_cz_isolated_rewrite below, thrown away after), each
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

/* MuPDF's image rewriter on a second opening (engine_cz_isolated_rewrite below): the image object
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
		engine_cz_for_each_image_use(ctx, doc, i, record_use, l);
}

/* True when an image stored in a device space (/DeviceGray, /DeviceRGB, /DeviceCMYK) came
 * out of the rewriter in an ICCBased space of as many components: MuPDF backs each device
 * space with an ICC profile of its own and writes that profile out (187 KB for CMYK), though
 * the samples never changed space. The image keeps its device space instead. */
static int keeps_device_space(fz_context *ctx, pdf_obj *before, pdf_obj *after)
{
	int n;
	if (!pdf_is_array(ctx, after) || !pdf_name_eq(ctx, pdf_array_get(ctx, after, 0), PDF_NAME(ICCBased)))
		return 0;
	if (pdf_name_eq(ctx, before, PDF_NAME(DeviceGray)))
		n = 1;
	else if (pdf_name_eq(ctx, before, PDF_NAME(DeviceRGB)))
		n = 3;
	else if (pdf_name_eq(ctx, before, PDF_NAME(DeviceCMYK)))
		n = 4;
	else
		return 0;
	return pdf_dict_get_int(ctx, pdf_array_get(ctx, after, 1), PDF_NAME(N)) == n;
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
			if (keys[k] == PDF_NAME(ColorSpace) && keeps_device_space(ctx, pdf_dict_get(ctx, to, keys[k]), v))
				continue;
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
