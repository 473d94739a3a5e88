/* Copying objects of one parsed document into another, for split (src/pdf/graft.rs).
 * It is MuPDF's pdf_graft_mapped_object with two differences: the caller can point
 * source objects at chosen targets before copying (split sends every page outside a
 * part to one placeholder, so a link to another page copies nothing), and indirect
 * objects are copied from a work list instead of by recursion (long /Next chains).
 * Runs with the mupdf crate's context and objects on the calling thread; every MuPDF
 * exception is caught here and returned as a message. */
#include <string.h>
#include "mupdf/fitz.h"
#include "mupdf/pdf.h"
#include "caught.h"

typedef struct { int src, dst; } engine_pending;

typedef struct {
	pdf_document *src, *dst;
	int len;             /* entries in map */
	int *map;            /* source object number -> target number; 0 = not copied yet */
	engine_pending *todo; /* targets allocated whose value is still to be copied */
	int ntodo, maxtodo;
} engine_graft;

static void ensure_map(fz_context *ctx, engine_graft *g, int num)
{
	if (num < g->len)
		return;
	int len = g->len * 2 > num + 1 ? g->len * 2 : num + 1;
	g->map = fz_realloc(ctx, g->map, (size_t)len * sizeof(int));
	memset(g->map + g->len, 0, (size_t)(len - g->len) * sizeof(int));
	g->len = len;
}

static int target_of(fz_context *ctx, engine_graft *g, int num)
{
	ensure_map(ctx, g, num);
	if (!g->map[num])
	{
		if (g->ntodo == g->maxtodo)
		{
			int max = g->maxtodo ? g->maxtodo * 2 : 256;
			g->todo = fz_realloc(ctx, g->todo, (size_t)max * sizeof(engine_pending));
			g->maxtodo = max;
		}
		g->map[num] = pdf_create_object(ctx, g->dst);
		g->todo[g->ntodo].src = num;
		g->todo[g->ntodo].dst = g->map[num];
		g->ntodo++;
	}
	return g->map[num];
}

/* A copy of a direct object bound to the target; indirect references become references
 * to their targets (allocated and queued on first sight). */
static pdf_obj *copy_value(fz_context *ctx, engine_graft *g, pdf_obj *obj, int skip_parent)
{
	pdf_obj *out = NULL;
	int i, n;
	/* Names, numbers, strings, booleans and null belong to no document. */
	if (!pdf_get_bound_document(ctx, obj))
		return pdf_keep_obj(ctx, obj);
	if (pdf_is_indirect(ctx, obj))
	{
		int num = pdf_to_num(ctx, obj);
		if (num < 1)
			return NULL;
		return pdf_new_indirect(ctx, g->dst, target_of(ctx, g, num), 0);
	}
	fz_var(out);
	if (pdf_is_dict(ctx, obj))
	{
		n = pdf_dict_len(ctx, obj);
		out = pdf_new_dict(ctx, g->dst, n);
		fz_try(ctx)
			for (i = 0; i < n; i++)
			{
				pdf_obj *key = pdf_dict_get_key(ctx, obj, i);
				if (skip_parent && key == PDF_NAME(Parent))
					continue;
				pdf_dict_put_drop(ctx, out, key, copy_value(ctx, g, pdf_dict_get_val(ctx, obj, i), 0));
			}
		fz_catch(ctx)
		{
			pdf_drop_obj(ctx, out);
			fz_rethrow(ctx);
		}
		return out;
	}
	if (pdf_is_array(ctx, obj))
	{
		n = pdf_array_len(ctx, obj);
		out = pdf_new_array(ctx, g->dst, n);
		fz_try(ctx)
			for (i = 0; i < n; i++)
				pdf_array_push_drop(ctx, out, copy_value(ctx, g, pdf_array_get(ctx, obj, i), 0));
		fz_catch(ctx)
		{
			pdf_drop_obj(ctx, out);
			fz_rethrow(ctx);
		}
		return out;
	}
	return pdf_keep_obj(ctx, obj);
}

/* Copies the values (and raw stream data) of the queued objects. An object MuPDF
 * cannot load, even after its repair, becomes null, as a reader would treat it. */
static void drain(fz_context *ctx, engine_graft *g)
{
	while (g->ntodo > 0)
	{
		engine_pending p = g->todo[--g->ntodo];
		pdf_obj *val = NULL, *copy = NULL, *ref = NULL;
		fz_buffer *buf = NULL;
		fz_var(val);
		fz_var(copy);
		fz_var(ref);
		fz_var(buf);
		fz_try(ctx)
		{
			fz_try(ctx)
				val = pdf_load_object(ctx, g->src, p.src);
			fz_catch(ctx)
			{
				fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
				fz_report_error(ctx);
				val = NULL;
			}
			copy = copy_value(ctx, g, val, 0);
			pdf_update_object(ctx, g->dst, p.dst, copy);
			if (val && pdf_obj_num_is_stream(ctx, g->src, p.src))
			{
				buf = pdf_load_raw_stream_number(ctx, g->src, p.src);
				ref = pdf_new_indirect(ctx, g->dst, p.dst, 0);
				pdf_update_stream(ctx, g->dst, ref, buf, 1);
			}
		}
		fz_always(ctx)
		{
			pdf_drop_obj(ctx, val);
			pdf_drop_obj(ctx, copy);
			pdf_drop_obj(ctx, ref);
			fz_drop_buffer(ctx, buf);
		}
		fz_catch(ctx)
			fz_rethrow(ctx);
	}
}

engine_graft *engine_graft_new(fz_context *ctx, pdf_obj *src_obj, pdf_obj *dst_obj, char *err, int errlen)
{
	engine_graft *g = NULL;
	fz_var(g);
	fz_try(ctx)
	{
		pdf_document *src = pdf_get_bound_document(ctx, src_obj);
		pdf_document *dst = pdf_get_bound_document(ctx, dst_obj);
		if (!src || !dst)
			fz_throw(ctx, FZ_ERROR_ARGUMENT, "objects to graft between belong to no document");
		g = fz_malloc_struct(ctx, engine_graft);
		g->src = pdf_keep_document(ctx, src);
		g->dst = pdf_keep_document(ctx, dst);
		g->len = pdf_xref_len(ctx, src) + 1;
		g->map = fz_calloc(ctx, g->len, sizeof(int));
	}
	fz_catch(ctx)
	{
		if (g)
		{
			pdf_drop_document(ctx, g->src);
			pdf_drop_document(ctx, g->dst);
			fz_free(ctx, g);
		}
		copy_message(ctx, err, errlen);
		return NULL;
	}
	return g;
}

void engine_graft_drop(fz_context *ctx, engine_graft *g)
{
	if (!g)
		return;
	pdf_drop_document(ctx, g->src);
	pdf_drop_document(ctx, g->dst);
	fz_free(ctx, g->map);
	fz_free(ctx, g->todo);
	fz_free(ctx, g);
}

/* References to source object `src_num` lead to target object `dst_num`. */
int engine_graft_redirect(fz_context *ctx, engine_graft *g, int src_num, int dst_num, char *err, int errlen)
{
	fz_try(ctx)
	{
		if (src_num < 1)
			fz_throw(ctx, FZ_ERROR_ARGUMENT, "no object number to redirect");
		ensure_map(ctx, g, src_num);
		g->map[src_num] = dst_num;
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		return 1;
	}
	return 0;
}

/* Copies `obj` and what it reaches into *out (a reference for indirect objects);
 * with skip_parent, a dictionary's /Parent is left out. Returns 0, or 1 with a
 * message. */
int engine_graft_copy(fz_context *ctx, engine_graft *g, pdf_obj *obj, int skip_parent, pdf_obj **out, char *err, int errlen)
{
	pdf_obj *copy = NULL;
	fz_var(copy);
	*out = NULL;
	fz_try(ctx)
	{
		copy = copy_value(ctx, g, obj, skip_parent);
		drain(ctx, g);
	}
	fz_catch(ctx)
	{
		pdf_drop_obj(ctx, copy);
		g->ntodo = 0;
		copy_message(ctx, err, errlen);
		return 1;
	}
	*out = copy;
	return 0;
}
