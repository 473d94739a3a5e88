/* The glyphs and codes shown, font by font (compress_font_usage.h). */
#define _GNU_SOURCE
#include <string.h>
#include "compress_font_usage.h"

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

pdf_obj *engine_type1_program(fz_context *ctx, pdf_obj *dict, int *cff)
{
	pdf_obj *subtype = pdf_dict_get(ctx, dict, PDF_NAME(Subtype));
	pdf_obj *fd = pdf_dict_get(ctx, dict, PDF_NAME(FontDescriptor));
	pdf_obj *file = pdf_dict_get(ctx, fd, PDF_NAME(FontFile));
	*cff = 0;
	if (subtype != PDF_NAME(Type1) && subtype != PDF_NAME(MMType1))
		return NULL;
	if (pdf_is_indirect(ctx, file))
		return file;
	file = pdf_dict_get(ctx, fd, PDF_NAME(FontFile3));
	if (!pdf_is_indirect(ctx, file) || !pdf_name_eq(ctx, pdf_dict_get(ctx, file, PDF_NAME(Subtype)), PDF_NAME(Type1C)))
		return NULL;
	*cff = 1;
	return file;
}

static void t1_Tf(fz_context *ctx, pdf_processor *proc, const char *name, pdf_font_desc *font, float size)
{
	t1_processor *p = (t1_processor *)proc;
	pdf_obj *dict = pdf_lookup_resource(ctx, proc->rstack, PDF_NAME(Font), name);
	pdf_obj *subtype = pdf_dict_get(ctx, dict, PDF_NAME(Subtype));
	int cff;
	pdf_obj *file = engine_type1_program(ctx, dict, &cff);
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
	if (!file || !font || !font->font)
		return;
	num = pdf_to_num(ctx, file);
	i = find_use(ctx, u, num, 1);
	u->use[i].cff = cff;
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

pdf_obj *engine_load_object_quiet(fz_context *ctx, pdf_document *doc, int num)
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
		pdf_obj *obj = engine_load_object_quiet(ctx, doc, i);
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

void engine_font_usage_gather(fz_context *ctx, pdf_document *doc, t1_usage *u)
{
	int i, n, m, whole;
	pdf_obj *dr;
	n = pdf_count_pages(ctx, doc);
	for (i = 0; i < n; i++)
		examine_page(ctx, doc, i, u);
	/* Type 1 font dictionaries no content selected (used only in a pattern, a
	 * Type 3 glyph or an appearance state not shown, say): their programs keep
	 * every glyph. */
	whole = !examine_unpaged(ctx, doc, u);
	m = pdf_xref_len(ctx, doc);
	for (i = 1; i < m; i++)
	{
		pdf_obj *obj = engine_load_object_quiet(ctx, doc, i);
		pdf_obj *subtype = pdf_dict_get(ctx, obj, PDF_NAME(Subtype));
		int cff;
		pdf_obj *file = engine_type1_program(ctx, obj, &cff);
		int unseen = pdf_dict_get(ctx, obj, PDF_NAME(Type)) == PDF_NAME(Font) && (!seen_dict(u, i) || whole);
		/* The index first: find_* may move the array (`u->x[find_x(...)]` may read
		 * the pointer before the call). */
		int at;
		if (file && unseen)
		{
			at = find_use(ctx, u, pdf_to_num(ctx, file), 1);
			u->use[at].cff = cff;
			u->use[at].keep_all = 1;
		}
		if (simple_tounicode(ctx, obj) && unseen)
		{
			at = find_code_use(ctx, &u->tu, pdf_to_num(ctx, simple_tounicode(ctx, obj)));
			u->tu.items[at].keep = 1;
		}
		if (subtype == PDF_NAME(Type3) && unseen)
		{
			at = find_code_use(ctx, &u->t3, i);
			u->t3.items[at].keep = 1;
		}
		pdf_drop_obj(ctx, obj);
	}
	/* A form's default fonts show what a user types later: their programs and CMaps are
	 * kept whole. */
	dr = pdf_dict_getp(ctx, pdf_trailer(ctx, doc), "Root/AcroForm/DR/Font");
	for (i = 0; i < pdf_dict_len(ctx, dr); i++)
	{
		pdf_obj *font = pdf_dict_get_val(ctx, dr, i);
		int cff, at;
		pdf_obj *file = engine_type1_program(ctx, font, &cff);
		if (file)
		{
			at = find_use(ctx, u, pdf_to_num(ctx, file), 1);
			u->use[at].cff = cff;
			u->use[at].keep_all = 1;
		}
		if (simple_tounicode(ctx, font))
		{
			at = find_code_use(ctx, &u->tu, pdf_to_num(ctx, simple_tounicode(ctx, font)));
			u->tu.items[at].keep = 1;
		}
	}
}

void engine_font_usage_drop(fz_context *ctx, t1_usage *u)
{
	int i;
	for (i = 0; i < u->len; i++)
	{
		fz_drop_font(ctx, u->use[i].font);
		fz_free(ctx, u->use[i].gids);
	}
	fz_free(ctx, u->use);
	fz_free(ctx, u->dicts);
	fz_free(ctx, u->tu.items);
	fz_free(ctx, u->t3.items);
}
