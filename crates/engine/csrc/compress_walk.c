/* Walks over the object graph: what the trailer reaches (the unreachable is deleted),
 * and what a page reaches (the content walks skip pages that reach nothing they seek). */
#include "compressor.h"

void engine_push_children(fz_context *ctx, pdf_obj *o, pdf_obj *skip, pdf_obj ***stack, int *top, int *cap)
{
	int i, len = pdf_is_dict(ctx, o) ? pdf_dict_len(ctx, o) : pdf_is_array(ctx, o) ? pdf_array_len(ctx, o) : 0;
	if (*top + len > *cap)
	{
		while (*top + len > *cap)
			*cap *= 2;
		*stack = fz_realloc_array(ctx, *stack, *cap, pdf_obj *);
	}
	for (i = 0; i < len; i++)
	{
		pdf_obj *v;
		if (pdf_is_dict(ctx, o))
		{
			if (skip && pdf_dict_get_key(ctx, o, i) == skip)
				continue;
			v = pdf_dict_get_val(ctx, o, i);
		}
		else
			v = pdf_array_get(ctx, o, i);
		/* Only containers and references lead anywhere. */
		if (pdf_is_indirect(ctx, v) || pdf_is_dict(ctx, v) || pdf_is_array(ctx, v))
			(*stack)[(*top)++] = v;
	}
}

/* Marks (live[num] = 1) every object reachable from the trailer: what the save's
 * garbage collection keeps. `visit`, when not NULL, is given every dictionary reached
 * (and the resolved catalogue) before the walk goes on into what it then holds. Returns
 * NULL when the walk fails. */
static unsigned char *reachable(fz_context *ctx, pdf_document *doc, engine_dict_visit visit)
{
	int n = pdf_xref_len(ctx, doc), top = 0, cap = 256;
	unsigned char *live = NULL;
	pdf_obj **stack = NULL;
	pdf_obj *root = pdf_resolve_indirect(ctx, pdf_dict_get(ctx, pdf_trailer(ctx, doc), PDF_NAME(Root)));
	fz_var(live);
	fz_var(stack);
	fz_try(ctx)
	{
		live = fz_calloc(ctx, n > 0 ? n : 1, 1);
		stack = fz_malloc_array(ctx, cap, pdf_obj *);
		stack[top++] = pdf_trailer(ctx, doc);
		while (top)
		{
			pdf_obj *o = stack[--top];
			if (pdf_is_indirect(ctx, o))
			{
				int num = pdf_to_num(ctx, o);
				if (num <= 0 || num >= n || live[num])
					continue;
				live[num] = 1;
				o = pdf_resolve_indirect(ctx, o);
			}
			if (visit && pdf_is_dict(ctx, o))
				visit(ctx, o, root);
			engine_push_children(ctx, o, NULL, &stack, &top, &cap);
		}
	}
	fz_always(ctx)
		fz_free(ctx, stack);
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
		fz_free(ctx, live);
		live = NULL;
	}
	return live;
}

/* Deletes every object the save's garbage collection would drop, before the steps that
 * look at every object: the file is compressed as it is when the engine's open changed
 * nothing (src/pagework/compress.rs), so an earlier revision's leftovers are still there,
 * and so are the objects the lossy levels unlink (output intents, thumbnails, PieceInfo).
 * Re-deflating them at level 9 was most of a run (scanned-french-diacritics.pdf: a
 * 390 KB ICC profile, 36 of 41 ms), and an unused font dictionary made the Type 1
 * conversion keep every glyph. Object and xref streams are kept: the objects packed in
 * them are read from them on demand. `visit`, when not NULL, changes each dictionary the
 * walk reaches before it goes on (reachable()). Nothing is deleted when the walk fails. */
void engine_cz_drop_unreachable(fz_context *ctx, pdf_document *doc, engine_dict_visit visit)
{
	unsigned char *live = reachable(ctx, doc, visit);
	unsigned char *holds = NULL;
	int i, n = pdf_xref_len(ctx, doc);
	if (!live)
		return;
	fz_var(holds);
	fz_try(ctx)
	{
		/* The object streams are found from the table, not by parsing every dropped
		 * object for its /Type: an object packed in one has an entry of type 'o' whose
		 * offset is the stream's number. An xref stream's dictionary is kept parsed by
		 * MuPDF since the open (pdf_read_new_xref), so its /Type costs nothing to read;
		 * any other dropped object is not parsed at all (annotator-base64-image.pdf's
		 * PieceInfo holds a 2.6 MB hex string: lexing it was 6% of its balanced run). */
		holds = fz_calloc(ctx, n > 0 ? n : 1, 1);
		for (i = 1; i < n; i++)
		{
			pdf_xref_entry *e = pdf_get_xref_entry_no_null(ctx, doc, i);
			if (e->type == 'o' && e->ofs > 0 && e->ofs < n)
				holds[e->ofs] = 1;
		}
		for (i = 1; i < n; i++)
		{
			pdf_xref_entry *e;
			if (live[i] || holds[i] || !pdf_object_exists(ctx, doc, i))
				continue;
			e = pdf_get_xref_entry_no_null(ctx, doc, i);
			if (e->obj && pdf_dict_get(ctx, e->obj, PDF_NAME(Type)) == PDF_NAME(XRef))
				continue;
			pdf_delete_object(ctx, doc, i);
		}
	}
	fz_always(ctx)
	{
		fz_free(ctx, holds);
		fz_free(ctx, live);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
}

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
