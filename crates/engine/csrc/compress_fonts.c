/* The fonts pass, in two halves around the engine's conversion (the engine's side:
 * src/pagework/compress/fonts.rs):
 *
 * engine_cz_fonts_collect runs MuPDF's subsetter (TrueType, OpenType and CID-keyed CFF
 * programs), finds the glyphs and codes the content shows (compress_font_usage.c; glyph
 * names from FreeType, as MuPDF draws them) and copies out, without changing anything,
 * each Type 1 program in use (/FontFile, with /Length1 and /Length2 and the names of its
 * glyphs shown) and each one-byte ToUnicode CMap of a simple font with the codes shown.
 *
 * engine_cz_fonts_install then puts back what the engine made of them: a CFF program
 * (/FontFile3 /Type1C) in place of each Type 1 program, when FreeType reads it and it is
 * smaller; each cut CMap. It also does the cuts that need no engine: bare CFF programs of
 * simple fonts cut by MuPDF's CFF subsetter, and the glyph procedures of Type 3 fonts no
 * code shown selects dropped. A font that cannot be read or converted is left as it is. */
#include <string.h>
#include "compressor.h"
#include "caught.h"
#include "compress_font_usage.h"

/* A Type 1 program copied out, and where it came from. */
typedef struct {
	engine_t1_copy out; /* what the engine reads (points into the buffers below) */
	int use;                  /* its entry in the usage's list */
	fz_buffer *program, *names;
} type1_item;

/* A ToUnicode CMap copied out. */
typedef struct {
	engine_cmap_copy out;
	fz_buffer *cmap;
} cmap_item;

/* What engine_cz_fonts_collect found, kept in the handle until engine_cz_fonts_install. */
struct engine_font_work {
	t1_usage usage;
	type1_item *type1;
	int ntype1;
	cmap_item *cmaps;
	int ncmaps;
};

void engine_cz_drop_font_work(engine_cz *z)
{
	fz_context *ctx = z->ctx;
	struct engine_font_work *w = z->fonts;
	int i;
	if (!w)
		return;
	for (i = 0; i < w->ntype1; i++)
	{
		fz_drop_buffer(ctx, w->type1[i].program);
		fz_drop_buffer(ctx, w->type1[i].names);
	}
	for (i = 0; i < w->ncmaps; i++)
		fz_drop_buffer(ctx, w->cmaps[i].cmap);
	fz_free(ctx, w->type1);
	fz_free(ctx, w->cmaps);
	engine_font_usage_drop(ctx, &w->usage);
	fz_free(ctx, w);
	z->fonts = NULL;
}

/* FreeType, which MuPDF links (its headers are not on this build's include path). */
extern int FT_Get_Glyph_Name(void *face, unsigned int glyph_index, void *buffer, unsigned int buffer_max);

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The NUL-separated names of `use`'s glyphs. */
static fz_buffer *glyph_names(fz_context *ctx, t1_use *use)
{
	fz_buffer *names = fz_new_buffer(ctx, 1024);
	void *face = use->font ? fz_font_ft_face(ctx, use->font) : NULL;
	int i;
	qsort(use->gids, use->len, sizeof(int), cmp_int);
	fz_lock(ctx, FZ_LOCK_FREETYPE);
	for (i = 0; i < use->len; i++)
	{
		char name[128];
		if (i > 0 && use->gids[i] == use->gids[i - 1])
			continue;
		name[0] = 0;
		if (face && FT_Get_Glyph_Name(face, use->gids[i], name, sizeof name) == 0 && name[0])
			fz_append_data(ctx, names, name, strlen(name) + 1);
	}
	fz_unlock(ctx, FZ_LOCK_FREETYPE);
	return names;
}

/* The font program stream `file`, decoded; throws when FreeType cannot read it (such a program
 * is drawn with a substitute, and is left alone). */
static fz_buffer *readable_program(fz_context *ctx, pdf_obj *file)
{
	fz_buffer *buf = pdf_load_stream(ctx, file);
	fz_try(ctx)
		fz_drop_font(ctx, fz_new_font_from_buffer(ctx, NULL, buf, 0, 0));
	fz_catch(ctx)
	{
		fz_drop_buffer(ctx, buf);
		fz_rethrow(ctx);
	}
	return buf;
}

/* MuPDF's subsetter: a font it cannot parse is left alone by MuPDF; a failure of the
 * whole subsetter (a page that cannot be read) leaves the document unchanged, as the
 * fonts are rewritten only after every page was read. Returns 1 when it ran through. */
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

/* Copies out Type 1 program `use` of the usage (when FreeType reads it) and its glyph names. */
static void collect_type1(fz_context *ctx, pdf_document *doc, struct engine_font_work *w, int use)
{
	t1_use *u = &w->usage.use[use];
	type1_item *item = &w->type1[w->ntype1];
	pdf_obj *file = NULL;
	fz_var(file);
	fz_try(ctx)
	{
		file = pdf_new_indirect(ctx, doc, u->num, 0);
		memset(item, 0, sizeof *item);
		item->program = readable_program(ctx, file);
		item->names = glyph_names(ctx, u);
		item->use = use;
		item->out.num = u->num;
		item->out.data = item->program->data;
		item->out.len = item->program->len;
		item->out.length1 = pdf_dict_get_int(ctx, file, PDF_NAME(Length1));
		item->out.length2 = pdf_dict_get_int(ctx, file, PDF_NAME(Length2));
		item->out.names = item->names->data;
		item->out.names_len = item->names->len;
		item->out.keep_all = u->keep_all;
		w->ntype1++;
	}
	fz_always(ctx)
		pdf_drop_obj(ctx, file);
	fz_catch(ctx)
	{
		fz_drop_buffer(ctx, item->program);
		fz_drop_buffer(ctx, item->names);
		memset(item, 0, sizeof *item);
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
}

/* Copies out ToUnicode CMap `tu` and its codes shown. */
static void collect_cmap(fz_context *ctx, pdf_document *doc, struct engine_font_work *w, code_use *tu)
{
	cmap_item *item = &w->cmaps[w->ncmaps];
	pdf_obj *ref = NULL;
	fz_var(ref);
	fz_try(ctx)
	{
		ref = pdf_new_indirect(ctx, doc, tu->num, 0);
		item->cmap = pdf_load_stream(ctx, ref);
		item->out.num = tu->num;
		item->out.data = item->cmap->data;
		item->out.len = item->cmap->len;
		item->out.used = tu->used;
		w->ncmaps++;
	}
	fz_always(ctx)
		pdf_drop_obj(ctx, ref);
	fz_catch(ctx)
	{
		memset(item, 0, sizeof *item);
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
}

int engine_cz_fonts_collect(engine_cz *z, engine_fonts_found *r, char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	int rc = ENGINE_OK;
	memset(r, 0, sizeof *r);
	engine_cz_drop_font_work(z);
	/* Encrypted documents are left alone (their streams would have to be re-encrypted). */
	if (doc->crypt)
		return ENGINE_OK;
	fz_try(ctx)
	{
		struct engine_font_work *w;
		int i;
		r->subset = subset_fonts(ctx, doc);
		w = z->fonts = fz_malloc_struct(ctx, struct engine_font_work);
		fz_try(ctx)
			engine_font_usage_gather(ctx, doc, &w->usage);
		fz_catch(ctx)
		{
			/* A page that cannot be read: nothing may be cut. */
			fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
			fz_report_error(ctx);
			engine_font_usage_drop(ctx, &w->usage);
			memset(&w->usage, 0, sizeof w->usage);
		}
		w->type1 = fz_calloc(ctx, w->usage.len + 1, sizeof *w->type1);
		w->cmaps = fz_calloc(ctx, w->usage.tu.len + 1, sizeof *w->cmaps);
		for (i = 0; i < w->usage.len; i++)
			if (!w->usage.use[i].cff)
				collect_type1(ctx, doc, w, i);
		for (i = 0; i < w->usage.tu.len; i++)
			if (!w->usage.tu.items[i].keep)
				collect_cmap(ctx, doc, w, &w->usage.tu.items[i]);
		r->type1 = w->ntype1;
		r->cmaps = w->ncmaps;
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		engine_cz_drop_font_work(z);
		r->type1 = r->cmaps = 0;
		rc = ENGINE_FAILED;
	}
	return rc;
}

const engine_t1_copy *engine_cz_type1_program(engine_cz *z, int i)
{
	return z->fonts && i >= 0 && i < z->fonts->ntype1 ? &z->fonts->type1[i].out : NULL;
}

const engine_cmap_copy *engine_cz_cmap_program(engine_cz *z, int i)
{
	return z->fonts && i >= 0 && i < z->fonts->ncmaps ? &z->fonts->cmaps[i].out : NULL;
}

/* Puts the engine's CFF program `cff` in place of Type 1 program `item` when FreeType
 * reads it and it is smaller; returns 1 when it did. */
static int install_type1(fz_context *ctx, pdf_document *doc, type1_item *item, const engine_bytes *cff_bytes)
{
	fz_buffer *cff = NULL;
	fz_font *check = NULL;
	pdf_obj *ff3 = NULL;
	int done = 0, i, n, num = item->out.num;
	if (!cff_bytes->data || !cff_bytes->len)
		return 0;
	fz_var(cff);
	fz_var(check);
	fz_var(ff3);
	fz_try(ctx)
	{
		cff = fz_new_buffer_from_copied_data(ctx, cff_bytes->data, cff_bytes->len);
		/* FreeType must read the new program. */
		check = fz_new_font_from_buffer(ctx, NULL, cff, 0, 0);
		if (cff->len < item->program->len)
		{
			ff3 = pdf_add_stream(ctx, doc, cff, NULL, 0);
			pdf_dict_put(ctx, ff3, PDF_NAME(Subtype), PDF_NAME(Type1C));
			/* Every font descriptor of the program points at the new one. */
			n = pdf_xref_len(ctx, doc);
			for (i = 1; i < n; i++)
			{
				pdf_obj *obj = engine_load_object_quiet(ctx, doc, i);
				pdf_obj *fd = pdf_dict_get(ctx, obj, PDF_NAME(FontDescriptor));
				if (pdf_is_dict(ctx, obj) && pdf_to_num(ctx, pdf_dict_get(ctx, obj, PDF_NAME(FontFile))) == num)
					fd = obj;
				if (pdf_to_num(ctx, pdf_dict_get(ctx, fd, PDF_NAME(FontFile))) == num)
				{
					pdf_dict_put(ctx, fd, PDF_NAME(FontFile3), ff3);
					pdf_dict_del(ctx, fd, PDF_NAME(FontFile));
				}
				pdf_drop_obj(ctx, obj);
			}
			done = 1;
		}
	}
	fz_always(ctx)
	{
		fz_drop_font(ctx, check);
		fz_drop_buffer(ctx, cff);
		pdf_drop_obj(ctx, ff3);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return done;
}

/* A six-letter subset tag drawn from the bytes of the new program. */
static void subset_tag(const fz_buffer *buf, char tag[8])
{
	uint32_t h = 2166136261u;
	size_t i;
	for (i = 0; i < buf->len; i++)
		h = (h ^ buf->data[i]) * 16777619u;
	for (i = 0; i < 6; i++, h /= 26)
		tag[i] = 'A' + h % 26;
	tag[6] = '+';
	tag[7] = 0;
}

/* `name` with `tag` in front, or with its own tag replaced. */
static void put_tagged(fz_context *ctx, pdf_obj *dict, pdf_obj *key, const char *tag)
{
	const char *name = pdf_dict_get_name(ctx, dict, key);
	char tagged[256];
	size_t n = strlen(name);
	if (n > 7 && name[6] == '+')
		name += 7;
	fz_snprintf(tagged, sizeof tagged, "%s%s", tag, name);
	pdf_dict_put_name(ctx, dict, key, tagged);
}

/* A simple font's bare CFF program (/FontFile3 /Type1C) cut to the glyphs shown, by MuPDF's
 * CFF subsetter (pdf_subset_fonts takes only CID-keyed CFF): glyphs keep their numbers and
 * names (the dropped ones are empty), so codes select what they did; the glyphs an accented
 * glyph is built from (seac) are kept. The font and its descriptor get a subset tag. A
 * program FreeType cannot read before or after, or that comes out no smaller, is left as it
 * is. Returns 1 when it was cut. */
static int subset_cff_one(fz_context *ctx, pdf_document *doc, t1_use *use)
{
	fz_buffer *buf = NULL, *cut = NULL;
	fz_font *check = NULL;
	pdf_obj *file = NULL;
	int *gids = NULL;
	int done = 0, i, n, ngids = 0;
	char tag[8];
	if (use->keep_all || use->len == 0)
		return 0;
	fz_var(gids);
	fz_var(buf);
	fz_var(cut);
	fz_var(check);
	fz_var(file);
	fz_try(ctx)
	{
		file = pdf_new_indirect(ctx, doc, use->num, 0);
		buf = readable_program(ctx, file);
		/* .notdef (glyph 0) is kept too: a code whose glyph is missing draws it. */
		gids = fz_malloc(ctx, sizeof(int) * (use->len + 1));
		memcpy(gids, use->gids, sizeof(int) * use->len);
		gids[use->len] = 0;
		qsort(gids, use->len + 1, sizeof(int), cmp_int);
		for (i = 0; i <= use->len; i++)
			if (ngids == 0 || gids[i] != gids[ngids - 1])
				gids[ngids++] = gids[i];
		cut = fz_subset_cff_for_gids(ctx, buf, gids, ngids, 0, 0);
		check = fz_new_font_from_buffer(ctx, NULL, cut, 0, 0);
		if (cut->len < buf->len)
		{
			pdf_update_stream(ctx, doc, file, cut, 0);
			subset_tag(cut, tag);
			n = pdf_xref_len(ctx, doc);
			for (i = 1; i < n; i++)
			{
				pdf_obj *obj = engine_load_object_quiet(ctx, doc, i);
				pdf_obj *fd = pdf_dict_get(ctx, obj, PDF_NAME(FontDescriptor));
				if (pdf_to_num(ctx, pdf_dict_get(ctx, obj, PDF_NAME(FontFile3))) == use->num &&
						pdf_dict_get(ctx, obj, PDF_NAME(FontName)))
					put_tagged(ctx, obj, PDF_NAME(FontName), tag);
				if (pdf_to_num(ctx, pdf_dict_get(ctx, fd, PDF_NAME(FontFile3))) == use->num &&
						pdf_dict_get(ctx, obj, PDF_NAME(BaseFont)))
					put_tagged(ctx, obj, PDF_NAME(BaseFont), tag);
				pdf_drop_obj(ctx, obj);
			}
			done = 1;
		}
	}
	fz_always(ctx)
	{
		fz_free(ctx, gids);
		fz_drop_font(ctx, check);
		fz_drop_buffer(ctx, cut);
		fz_drop_buffer(ctx, buf);
		pdf_drop_obj(ctx, file);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return done;
}

/* Puts the cut CMap `cut` in place of CMap `item`; returns 1 when it did. */
static int install_cmap(fz_context *ctx, pdf_document *doc, cmap_item *item, const engine_bytes *cut_bytes)
{
	fz_buffer *cut = NULL;
	pdf_obj *ref = NULL;
	int done = 0;
	if (!cut_bytes->data)
		return 0;
	fz_var(cut);
	fz_var(ref);
	fz_try(ctx)
	{
		ref = pdf_new_indirect(ctx, doc, item->out.num, 0);
		cut = fz_new_buffer_from_copied_data(ctx, cut_bytes->data, cut_bytes->len);
		pdf_update_stream(ctx, doc, ref, cut, 0);
		done = 1;
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, cut);
		pdf_drop_obj(ctx, ref);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return done;
}

/* Drops the glyph procedures (/CharProcs) of a Type 3 font that no code shown selects
 * through its /Encoding; returns 1 when some were dropped. The procedures are then
 * unreferenced and the save's garbage collection removes them. */
static int trim_type3(fz_context *ctx, pdf_document *doc, code_use *t)
{
	pdf_obj *font = NULL;
	int dropped = 0;
	fz_var(font);
	fz_try(ctx)
	{
		const char *names[256];
		pdf_obj *procs, *enc, *base, *diffs;
		int i, code = 0;
		font = pdf_new_indirect(ctx, doc, t->num, 0);
		procs = pdf_dict_get(ctx, font, PDF_NAME(CharProcs));
		enc = pdf_dict_get(ctx, font, PDF_NAME(Encoding));
		memset(names, 0, sizeof names);
		/* Codes to glyph names as MuPDF's loader maps them: the base encoding (a
		 * name, or the dictionary's /BaseEncoding), then /Differences over it. An
		 * encoding of another form keeps the font as it is. */
		base = pdf_is_name(ctx, enc) ? enc : pdf_dict_get(ctx, enc, PDF_NAME(BaseEncoding));
		if (pdf_is_name(ctx, base))
			pdf_load_encoding(names, pdf_to_name(ctx, base));
		diffs = pdf_dict_get(ctx, enc, PDF_NAME(Differences));
		if (pdf_is_dict(ctx, procs) && (pdf_is_name(ctx, enc) || pdf_is_dict(ctx, enc)))
		{
			for (i = 0; i < pdf_array_len(ctx, diffs); i++)
			{
				pdf_obj *item = pdf_array_get(ctx, diffs, i);
				if (pdf_is_int(ctx, item))
					code = pdf_to_int(ctx, item);
				else if (pdf_is_name(ctx, item) && code >= 0 && code < 256)
					names[code++] = pdf_to_name(ctx, item);
				else
					code++;
			}
			for (i = pdf_dict_len(ctx, procs) - 1; i >= 0; i--)
			{
				const char *glyph = pdf_to_name(ctx, pdf_dict_get_key(ctx, procs, i));
				int c, used = 0;
				for (c = 0; c < 256 && !used; c++)
					used = t->used[c] && names[c] && !strcmp(names[c], glyph);
				if (!used)
				{
					pdf_dict_del(ctx, procs, pdf_dict_get_key(ctx, procs, i));
					dropped = 1;
				}
			}
		}
	}
	fz_always(ctx)
		pdf_drop_obj(ctx, font);
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return dropped;
}

int engine_cz_fonts_install(engine_cz *z, const engine_bytes *type1, int ntype1, const engine_bytes *cmaps,
	int ncmaps, engine_fonts_installed *r, char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	struct engine_font_work *w = z->fonts;
	int rc = ENGINE_OK;
	memset(r, 0, sizeof *r);
	if (!w)
		return ENGINE_OK;
	fz_try(ctx)
	{
		t1_usage *u = &w->usage;
		int i, k = 0;
		/* In the usage's order, as the new programs get their object numbers. */
		for (i = 0; i < u->len; i++)
		{
			if (u->use[i].cff)
				r->cff_subset += subset_cff_one(ctx, doc, &u->use[i]);
			else if (k < w->ntype1 && w->type1[k].use == i)
			{
				if (k < ntype1)
					r->type1_converted += install_type1(ctx, doc, &w->type1[k], &type1[k]);
				k++;
			}
		}
		for (i = 0; i < w->ncmaps && i < ncmaps; i++)
			r->cmaps_cut += install_cmap(ctx, doc, &w->cmaps[i], &cmaps[i]);
		for (i = 0; i < u->t3.len; i++)
			if (!u->t3.items[i].keep)
				r->type3_trimmed += trim_type3(ctx, doc, &u->t3.items[i]);
	}
	fz_always(ctx)
		engine_cz_drop_font_work(z);
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_FAILED;
	}
	return rc;
}
