/* Embedded Type 1 fonts (/FontFile) replaced by CFF subsets (/FontFile3 /Type1C): the
 * glyphs used are found here with a content processor over every page, form XObject
 * and annotation (their names from FreeType, as MuPDF draws them), the conversion is
 * the engine's (src/pagework/compress/fonts.rs, handed over once with
 * engine_cz_set_type1_converter). A font whose program cannot be converted, or whose
 * new program FreeType does not load, is left as it is. The same pass drops the glyph
 * procedures of Type 3 fonts that no code shown selects, and cuts ToUnicode CMaps. */
#define _GNU_SOURCE
#include <string.h>
#include "compress.h"

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

typedef struct {
	int num;         /* the /FontFile stream's object number */
	fz_font *font;   /* as MuPDF loaded it: glyph ids are FreeType's */
	int *gids;
	int len, max;
	int keep_all;    /* some font dictionary of it was not seen in use: every glyph kept */
} t1_use;

/* An object shown with one-byte codes, and those codes: a ToUnicode CMap of simple
 * fonts, or a Type 3 font dictionary. */
typedef struct {
	int num;
	int keep;        /* named by a font no content selected (or a form's default font),
	                  * or the pass could not look everywhere: kept whole */
	unsigned char used[256];
} code_use;

typedef struct {
	code_use *items;
	int len, max;
} code_uses;

typedef struct {
	t1_use *use;
	int len, max;
	code_uses tu;    /* ToUnicode CMaps */
	code_uses t3;    /* Type 3 fonts */
	int *dicts;      /* font dictionaries seen in use (object numbers) */
	int ndicts, maxdicts;
} t1_usage;

typedef struct t1_gstate {
	struct t1_gstate *next;
	int current;
	int tu;          /* index in the ToUnicode list, -1 for none */
	int t3;          /* index in the Type 3 list, -1 for none */
	pdf_font_desc *font;
} t1_gstate;

typedef struct {
	pdf_processor super;
	t1_usage *usage;
	t1_gstate *gs;
} t1_processor;

static void push_int(fz_context *ctx, int **arr, int *len, int *max, int v)
{
	if (*len == *max)
	{
		*max = *max ? *max * 2 : 64;
		*arr = fz_realloc(ctx, *arr, sizeof(int) * *max);
	}
	(*arr)[(*len)++] = v;
}

/* The entry of the program `num`, added when `add` is set; -1 when absent. */
static int find_use(fz_context *ctx, t1_usage *u, int num, int add)
{
	int i;
	for (i = 0; i < u->len && u->use[i].num != num; i++)
		;
	if (i < u->len || !add)
		return i < u->len ? i : -1;
	if (u->len == u->max)
	{
		u->max = u->max ? u->max * 2 : 16;
		u->use = fz_realloc(ctx, u->use, sizeof(t1_use) * u->max);
	}
	memset(&u->use[i], 0, sizeof(t1_use));
	u->use[i].num = num;
	u->len++;
	return i;
}

/* The entry of object `num` in `list`, added when absent. */
static int find_code_use(fz_context *ctx, code_uses *list, int num)
{
	int i;
	for (i = 0; i < list->len && list->items[i].num != num; i++)
		;
	if (i < list->len)
		return i;
	if (list->len == list->max)
	{
		list->max = list->max ? list->max * 2 : 16;
		list->items = fz_realloc(ctx, list->items, sizeof(code_use) * list->max);
	}
	memset(&list->items[i], 0, sizeof(code_use));
	list->items[i].num = num;
	list->len++;
	return i;
}

/* A font with one-byte codes and a ToUnicode stream: its CMap can be cut. */
static pdf_obj *simple_tounicode(fz_context *ctx, pdf_obj *dict)
{
	pdf_obj *subtype = pdf_dict_get(ctx, dict, PDF_NAME(Subtype));
	pdf_obj *tu = pdf_dict_get(ctx, dict, PDF_NAME(ToUnicode));
	if (subtype != PDF_NAME(Type1) && subtype != PDF_NAME(MMType1) && subtype != PDF_NAME(TrueType) &&
		subtype != PDF_NAME(Type3))
		return NULL;
	return pdf_is_indirect(ctx, tu) && pdf_is_stream(ctx, tu) ? tu : NULL;
}

static void t1_Tf(fz_context *ctx, pdf_processor *proc, const char *name, pdf_font_desc *font, float size)
{
	t1_processor *p = (t1_processor *)proc;
	pdf_obj *dict = pdf_lookup_resource(ctx, proc->rstack, PDF_NAME(Font), name);
	pdf_obj *subtype = pdf_dict_get(ctx, dict, PDF_NAME(Subtype));
	pdf_obj *file = pdf_dict_get(ctx, pdf_dict_get(ctx, dict, PDF_NAME(FontDescriptor)), PDF_NAME(FontFile));
	t1_usage *u = p->usage;
	pdf_obj *tu = simple_tounicode(ctx, dict);
	int i, num;
	p->gs->current = -1;
	p->gs->tu = tu ? find_code_use(ctx, &u->tu, pdf_to_num(ctx, tu)) : -1;
	p->gs->t3 = subtype == PDF_NAME(Type3) && pdf_is_indirect(ctx, dict) ? find_code_use(ctx, &u->t3, pdf_to_num(ctx, dict)) : -1;
	pdf_drop_font(ctx, p->gs->font);
	p->gs->font = NULL;
	if (pdf_is_indirect(ctx, dict))
		push_int(ctx, &u->dicts, &u->ndicts, &u->maxdicts, pdf_to_num(ctx, dict));
	if ((subtype != PDF_NAME(Type1) && subtype != PDF_NAME(MMType1)) || !pdf_is_indirect(ctx, file) || !font || !font->font)
		return;
	num = pdf_to_num(ctx, file);
	i = find_use(ctx, u, num, 1);
	if (!u->use[i].font)
		u->use[i].font = fz_keep_font(ctx, font->font);
	p->gs->current = i;
	p->gs->font = pdf_keep_font(ctx, font);
}

static void t1_show(fz_context *ctx, t1_processor *p, const unsigned char *buf, size_t len)
{
	pdf_font_desc *fd = p->gs->font;
	t1_use *use;
	size_t pos = 0;
	if (p->gs->tu >= 0)
		for (pos = 0; pos < len; pos++)
			p->usage->tu.items[p->gs->tu].used[buf[pos]] = 1;
	if (p->gs->t3 >= 0)
		for (pos = 0; pos < len; pos++)
			p->usage->t3.items[p->gs->t3].used[buf[pos]] = 1;
	pos = 0;
	if (p->gs->current < 0 || !fd)
		return;
	use = &p->usage->use[p->gs->current];
	while (pos < len)
	{
		unsigned int cpt;
		int inc = pdf_decode_cmap(fd->encoding, (unsigned char *)&buf[pos], (unsigned char *)&buf[len], &cpt);
		int cid = pdf_lookup_cmap(fd->encoding, cpt);
		if (cid >= 0)
			push_int(ctx, &use->gids, &use->len, &use->max, pdf_font_cid_to_gid(ctx, fd, cid));
		pos += inc > 0 ? inc : 1;
	}
}

static void t1_TJ(fz_context *ctx, pdf_processor *proc, pdf_obj *array)
{
	int i, n = pdf_array_len(ctx, array);
	for (i = 0; i < n; i++)
	{
		pdf_obj *item = pdf_array_get(ctx, array, i);
		if (pdf_is_string(ctx, item))
			t1_show(ctx, (t1_processor *)proc, (unsigned char *)pdf_to_str_buf(ctx, item), pdf_to_str_len(ctx, item));
	}
}

static void t1_Tj(fz_context *ctx, pdf_processor *proc, char *str, size_t len)
{
	t1_show(ctx, (t1_processor *)proc, (unsigned char *)str, len);
}

static void t1_squote(fz_context *ctx, pdf_processor *proc, char *str, size_t len)
{
	t1_show(ctx, (t1_processor *)proc, (unsigned char *)str, len);
}

static void t1_dquote(fz_context *ctx, pdf_processor *proc, float aw, float ac, char *str, size_t len)
{
	t1_show(ctx, (t1_processor *)proc, (unsigned char *)str, len);
}

static void t1_q(fz_context *ctx, pdf_processor *proc)
{
	t1_processor *p = (t1_processor *)proc;
	t1_gstate *g = fz_malloc_struct(ctx, t1_gstate);
	*g = *p->gs;
	g->next = p->gs;
	pdf_keep_font(ctx, g->font);
	p->gs = g;
}

static void t1_Q(fz_context *ctx, pdf_processor *proc)
{
	t1_processor *p = (t1_processor *)proc;
	t1_gstate *g = p->gs;
	if (!g->next)
		return;
	p->gs = g->next;
	pdf_drop_font(ctx, g->font);
	fz_free(ctx, g);
}

static void t1_Do_form(fz_context *ctx, pdf_processor *proc, const char *name, pdf_obj *xobj)
{
	pdf_process_contents(ctx, proc, pdf_get_bound_document(ctx, xobj), pdf_xobject_resources(ctx, xobj), xobj, NULL, NULL);
}

static void t1_drop(fz_context *ctx, pdf_processor *proc)
{
	t1_processor *p = (t1_processor *)proc;
	while (p->gs)
	{
		t1_gstate *g = p->gs;
		p->gs = g->next;
		pdf_drop_font(ctx, g->font);
		fz_free(ctx, g);
	}
}

/* Runs a form XObject (an appearance stream); one that cannot be read stops the pass,
 * as a page does (its glyphs would be unknown). */
static void process_form(fz_context *ctx, pdf_processor *proc, pdf_document *doc, pdf_obj *form)
{
	pdf_process_contents(ctx, proc, doc, pdf_xobject_resources(ctx, form), form, NULL, NULL);
}

/* A content processor that records the glyphs and codes shown into `u`. */
static t1_processor *new_usage_processor(fz_context *ctx, t1_usage *u)
{
	t1_processor *p = (t1_processor *)pdf_new_processor(ctx, sizeof *p);
	p->super.drop_processor = t1_drop;
	p->super.op_Tf = t1_Tf;
	p->super.op_Tj = t1_Tj;
	p->super.op_TJ = t1_TJ;
	p->super.op_squote = t1_squote;
	p->super.op_dquote = t1_dquote;
	p->super.op_q = t1_q;
	p->super.op_Q = t1_Q;
	p->super.op_Do_form = t1_Do_form;
	p->usage = u;
	fz_try(ctx)
	{
		p->gs = fz_malloc_struct(ctx, t1_gstate);
		p->gs->current = -1;
		p->gs->tu = -1;
		p->gs->t3 = -1;
	}
	fz_catch(ctx)
	{
		pdf_drop_processor(ctx, &p->super);
		fz_rethrow(ctx);
	}
	return p;
}

static void examine_page(fz_context *ctx, pdf_document *doc, int number, t1_usage *u)
{
	pdf_page *page = NULL;
	t1_processor *p = NULL;
	fz_var(page);
	fz_var(p);
	fz_try(ctx)
	{
		pdf_obj *resources, *annots;
		int i, j, k;
		page = pdf_load_page(ctx, doc, number);
		resources = pdf_page_resources(ctx, page);
		p = new_usage_processor(ctx, u);
		pdf_process_contents(ctx, &p->super, doc, resources, pdf_page_contents(ctx, page), NULL, NULL);
		/* Every appearance stream of every annotation, hidden ones and states not
		 * shown included (a check box's /Yes, a field JavaScript shows later). */
		annots = pdf_dict_get(ctx, page->obj, PDF_NAME(Annots));
		for (i = 0; i < pdf_array_len(ctx, annots); i++)
		{
			pdf_obj *ap = pdf_dict_get(ctx, pdf_array_get(ctx, annots, i), PDF_NAME(AP));
			for (j = 0; j < pdf_dict_len(ctx, ap); j++)
			{
				pdf_obj *kind = pdf_dict_get_val(ctx, ap, j);
				if (pdf_is_stream(ctx, kind))
					process_form(ctx, &p->super, doc, kind);
				else
					for (k = 0; k < pdf_dict_len(ctx, kind); k++)
						if (pdf_is_stream(ctx, pdf_dict_get_val(ctx, kind, k)))
							process_form(ctx, &p->super, doc, pdf_dict_get_val(ctx, kind, k));
			}
		}
		pdf_close_processor(ctx, &p->super);
	}
	fz_always(ctx)
	{
		pdf_drop_processor(ctx, &p->super);
		fz_drop_page(ctx, (fz_page *)page);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
}

/* Object `num`, or NULL when it cannot be loaded. */
static pdf_obj *load_quiet(fz_context *ctx, pdf_document *doc, int num)
{
	pdf_obj *obj = NULL;
	fz_try(ctx)
		obj = pdf_load_object(ctx, doc, num);
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		obj = NULL;
	}
	return obj;
}

static int seen_dict(t1_usage *u, int num)
{
	int i;
	for (i = 0; i < u->ndicts; i++)
		if (u->dicts[i] == num)
			return 1;
	return 0;
}

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
		buf = pdf_load_stream(ctx, file);
		/* A program FreeType cannot read is drawn with a substitute: left alone. */
		check = fz_new_font_from_buffer(ctx, NULL, buf, 0, 0);
		fz_drop_font(ctx, check);
		check = NULL;
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
					pdf_obj *obj = load_quiet(ctx, doc, i);
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

/* Runs one content stream (a tiling pattern's cell, a Type 3 glyph procedure) under
 * `res` with a fresh usage processor: the text it shows counts as used. */
static void examine_stream(fz_context *ctx, pdf_document *doc, t1_usage *u, pdf_obj *res, pdf_obj *stm)
{
	t1_processor *p = NULL;
	fz_var(p);
	fz_try(ctx)
	{
		p = new_usage_processor(ctx, u);
		pdf_process_contents(ctx, &p->super, doc, res, stm, NULL, NULL);
		pdf_close_processor(ctx, &p->super);
	}
	fz_always(ctx)
		pdf_drop_processor(ctx, &p->super);
	fz_catch(ctx)
		fz_rethrow(ctx);
}

/* The text no page shows directly: every tiling pattern's cell and every Type 3 glyph
 * procedure (of fonts used or not: more glyphs kept, never fewer). One without its own
 * /Resources (deprecated: it uses those of wherever it is drawn) cannot be followed,
 * nor can one that fails to run: then the caller keeps every font whole. Returns 0 then. */
static int examine_unpaged(fz_context *ctx, pdf_document *doc, t1_usage *u)
{
	int i, j, n = pdf_xref_len(ctx, doc), ok = 1;
	for (i = 1; i < n && ok; i++)
	{
		pdf_obj *obj = load_quiet(ctx, doc, i);
		fz_try(ctx)
		{
			pdf_obj *res = pdf_dict_get(ctx, obj, PDF_NAME(Resources));
			if (pdf_dict_get_int(ctx, obj, PDF_NAME(PatternType)) == 1 && pdf_obj_num_is_stream(ctx, doc, i))
			{
				if (!pdf_is_dict(ctx, res))
					ok = 0;
				else
				{
					pdf_obj *ref = pdf_new_indirect(ctx, doc, i, 0);
					fz_try(ctx)
						examine_stream(ctx, doc, u, res, ref);
					fz_always(ctx)
						pdf_drop_obj(ctx, ref);
					fz_catch(ctx)
						fz_rethrow(ctx);
				}
			}
			else if (pdf_dict_get(ctx, obj, PDF_NAME(Subtype)) == PDF_NAME(Type3) && pdf_dict_get(ctx, obj, PDF_NAME(Type)) == PDF_NAME(Font))
			{
				pdf_obj *procs = pdf_dict_get(ctx, obj, PDF_NAME(CharProcs));
				for (j = 0; j < pdf_dict_len(ctx, procs) && ok; j++)
				{
					pdf_obj *proc = pdf_dict_get_val(ctx, procs, j);
					fz_buffer *body = pdf_load_stream(ctx, proc);
					/* A glyph that selects no font (bitmap and path glyphs, nearly
					 * all) shows no text: no need for resources. */
					int text = body->len > 1 && memmem(body->data, body->len, "Tf", 2) != NULL;
					fz_drop_buffer(ctx, body);
					if (text && !pdf_is_dict(ctx, res))
						ok = 0;
					else if (text)
						examine_stream(ctx, doc, u, res, proc);
				}
			}
		}
		fz_always(ctx)
			pdf_drop_obj(ctx, obj);
		fz_catch(ctx)
		{
			fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
			fz_report_error(ctx);
			ok = 0;
		}
	}
	return ok;
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
	int i, n, m, converted = 0, whole = 0;
	pdf_obj *dr;
	if (!convert_fn || !cut_fn)
		return 0;
	memset(&u, 0, sizeof u);
	fz_try(ctx)
	{
		n = pdf_count_pages(ctx, doc);
		for (i = 0; i < n; i++)
			examine_page(ctx, doc, i, &u);
		/* Type 1 font dictionaries no content selected (used only in a pattern, a
		 * Type 3 glyph or an appearance state not shown, say): their programs keep
		 * every glyph. */
		whole = !examine_unpaged(ctx, doc, &u);
		m = pdf_xref_len(ctx, doc);
		for (i = 1; i < m; i++)
		{
			pdf_obj *obj = load_quiet(ctx, doc, i);
			pdf_obj *subtype = pdf_dict_get(ctx, obj, PDF_NAME(Subtype));
			pdf_obj *file = pdf_dict_get(ctx, pdf_dict_get(ctx, obj, PDF_NAME(FontDescriptor)), PDF_NAME(FontFile));
			int unseen = pdf_dict_get(ctx, obj, PDF_NAME(Type)) == PDF_NAME(Font) && (!seen_dict(&u, i) || whole);
			/* The index first: find_* may move the array (`u.x[find_x(...)]` may read
			 * the pointer before the call). */
			int at;
			if ((subtype == PDF_NAME(Type1) || subtype == PDF_NAME(MMType1)) && pdf_is_indirect(ctx, file) && unseen)
			{
				at = find_use(ctx, &u, pdf_to_num(ctx, file), 1);
				u.use[at].keep_all = 1;
			}
			if (simple_tounicode(ctx, obj) && unseen)
			{
				at = find_code_use(ctx, &u.tu, pdf_to_num(ctx, simple_tounicode(ctx, obj)));
				u.tu.items[at].keep = 1;
			}
			if (subtype == PDF_NAME(Type3) && unseen)
			{
				at = find_code_use(ctx, &u.t3, i);
				u.t3.items[at].keep = 1;
			}
			pdf_drop_obj(ctx, obj);
		}
		/* A form's default fonts show what a user types later: their CMaps are kept. */
		dr = pdf_dict_getp(ctx, pdf_trailer(ctx, doc), "Root/AcroForm/DR/Font");
		for (i = 0; i < pdf_dict_len(ctx, dr); i++)
			if (simple_tounicode(ctx, pdf_dict_get_val(ctx, dr, i)))
			{
				int at = find_code_use(ctx, &u.tu, pdf_to_num(ctx, simple_tounicode(ctx, pdf_dict_get_val(ctx, dr, i))));
				u.tu.items[at].keep = 1;
			}
		for (i = 0; i < u.len; i++)
			converted += convert_one(ctx, doc, &u.use[i]);
		for (i = 0; i < u.tu.len; i++)
			if (!u.tu.items[i].keep)
				converted += cut_one(ctx, doc, &u.tu.items[i]);
		for (i = 0; i < u.t3.len; i++)
			if (!u.t3.items[i].keep)
				converted += trim_type3(ctx, doc, &u.t3.items[i]);
	}
	fz_always(ctx)
	{
		for (i = 0; i < u.len; i++)
		{
			fz_drop_font(ctx, u.use[i].font);
			fz_free(ctx, u.use[i].gids);
		}
		fz_free(ctx, u.use);
		fz_free(ctx, u.dicts);
		fz_free(ctx, u.tu.items);
		fz_free(ctx, u.t3.items);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return converted;
}
