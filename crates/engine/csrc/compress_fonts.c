/* Embedded Type 1 fonts (/FontFile) replaced by CFF subsets (/FontFile3 /Type1C): the
 * glyphs used are found by compress_font_usage.c (their names from FreeType, as MuPDF
 * draws them), the conversion is
 * the engine's (src/pagework/compress/fonts.rs, handed over once with
 * engine_cz_set_type1_converter). A font whose program cannot be converted, or whose
 * new program FreeType does not load, is left as it is. The same pass drops the glyph
 * procedures of Type 3 fonts that no code shown selects, and cuts ToUnicode CMaps. */
#include <string.h>
#include "compressor.h"
#include "compress_font_usage.h"

typedef int (*engine_type1_convert)(const unsigned char *data, size_t len, size_t len1, size_t len2,
	const unsigned char *names, size_t names_len, int keep_all, unsigned char **out, size_t *out_len);
typedef void (*engine_type1_free)(unsigned char *data, size_t len);
typedef int (*engine_tounicode_cut)(const unsigned char *data, size_t len, const unsigned char *used,
	unsigned char **out, size_t *out_len);

static engine_type1_convert convert_fn;
static engine_type1_free free_fn;
static engine_tounicode_cut cut_fn;

void engine_cz_set_type1_converter(engine_type1_convert convert, engine_type1_free fr, engine_tounicode_cut cut)
{
	convert_fn = convert;
	free_fn = fr;
	cut_fn = cut;
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

/* Replaces one font program; returns 1 when it did. */
static int convert_one(fz_context *ctx, pdf_document *doc, t1_use *use)
{
	fz_buffer *buf = NULL, *names = NULL, *cff = NULL;
	fz_font *check = NULL;
	pdf_obj *file = NULL, *ff3 = NULL;
	unsigned char *out = NULL;
	size_t out_len = 0;
	int done = 0, i, n;
	fz_var(buf);
	fz_var(names);
	fz_var(cff);
	fz_var(check);
	fz_var(file);
	fz_var(ff3);
	fz_try(ctx)
	{
		file = pdf_new_indirect(ctx, doc, use->num, 0);
		buf = readable_program(ctx, file);
		names = glyph_names(ctx, use);
		if (convert_fn(buf->data, buf->len, pdf_dict_get_int(ctx, file, PDF_NAME(Length1)),
				pdf_dict_get_int(ctx, file, PDF_NAME(Length2)), names->data, names->len, use->keep_all, &out, &out_len))
		{
			cff = fz_new_buffer_from_copied_data(ctx, out, out_len);
			free_fn(out, out_len);
			out = NULL;
			/* FreeType must read the new program. */
			check = fz_new_font_from_buffer(ctx, NULL, cff, 0, 0);
			if (cff->len < buf->len)
			{
				ff3 = pdf_add_stream(ctx, doc, cff, NULL, 0);
				pdf_dict_put(ctx, ff3, PDF_NAME(Subtype), PDF_NAME(Type1C));
				/* Every font descriptor of the program points at the new one. */
				n = pdf_xref_len(ctx, doc);
				for (i = 1; i < n; i++)
				{
					pdf_obj *obj = engine_load_object_quiet(ctx, doc, i);
					pdf_obj *fd = pdf_dict_get(ctx, obj, PDF_NAME(FontDescriptor));
					if (pdf_is_dict(ctx, obj) && pdf_to_num(ctx, pdf_dict_get(ctx, obj, PDF_NAME(FontFile))) == use->num)
						fd = obj;
					if (pdf_to_num(ctx, pdf_dict_get(ctx, fd, PDF_NAME(FontFile))) == use->num)
					{
						pdf_dict_put(ctx, fd, PDF_NAME(FontFile3), ff3);
						pdf_dict_del(ctx, fd, PDF_NAME(FontFile));
					}
					pdf_drop_obj(ctx, obj);
				}
				done = 1;
			}
		}
	}
	fz_always(ctx)
	{
		if (out)
			free_fn(out, out_len);
		fz_drop_font(ctx, check);
		fz_drop_buffer(ctx, cff);
		fz_drop_buffer(ctx, names);
		fz_drop_buffer(ctx, buf);
		pdf_drop_obj(ctx, ff3);
		pdf_drop_obj(ctx, file);
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

/* Cuts one ToUnicode CMap to the codes shown; returns 1 when it did. */
static int cut_one(fz_context *ctx, pdf_document *doc, code_use *tu)
{
	fz_buffer *buf = NULL, *cut = NULL;
	pdf_obj *ref = NULL;
	unsigned char *out = NULL;
	size_t out_len = 0;
	int done = 0;
	fz_var(buf);
	fz_var(cut);
	fz_var(ref);
	fz_try(ctx)
	{
		ref = pdf_new_indirect(ctx, doc, tu->num, 0);
		buf = pdf_load_stream(ctx, ref);
		if (cut_fn(buf->data, buf->len, tu->used, &out, &out_len))
		{
			cut = fz_new_buffer_from_copied_data(ctx, out, out_len);
			free_fn(out, out_len);
			out = NULL;
			pdf_update_stream(ctx, doc, ref, cut, 0);
			done = 1;
		}
	}
	fz_always(ctx)
	{
		if (out)
			free_fn(out, out_len);
		fz_drop_buffer(ctx, cut);
		fz_drop_buffer(ctx, buf);
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

/* Converts the document's Type 1 fonts in use, cuts the ToUnicode CMaps of simple
 * fonts to the codes shown and drops unused Type 3 glyphs; returns how many fonts were
 * changed. A page that cannot be read stops the pass before anything changed. */
int engine_cz_convert_type1(fz_context *ctx, pdf_document *doc)
{
	t1_usage u;
	int i, converted = 0;
	if (!convert_fn || !cut_fn)
		return 0;
	memset(&u, 0, sizeof u);
	fz_try(ctx)
	{
		engine_font_usage_gather(ctx, doc, &u);
		for (i = 0; i < u.len; i++)
			converted += u.use[i].cff ? subset_cff_one(ctx, doc, &u.use[i]) : convert_one(ctx, doc, &u.use[i]);
		for (i = 0; i < u.tu.len; i++)
			if (!u.tu.items[i].keep)
				converted += cut_one(ctx, doc, &u.tu.items[i]);
		for (i = 0; i < u.t3.len; i++)
			if (!u.t3.items[i].keep)
				converted += trim_type3(ctx, doc, &u.t3.items[i]);
	}
	fz_always(ctx)
		engine_font_usage_drop(ctx, &u);
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return converted;
}
