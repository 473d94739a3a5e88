/* A document opened in a MuPDF context of its own, for one render thread.
 *
 * The mupdf crate gives each thread a context cloned from one base context, and cloned
 * contexts share that context's locks, resource store and glyph cache: every
 * allocation, every store lookup and every cached glyph takes a process-wide mutex. Two
 * render threads then spend ~15% of their time waiting on each other (measured on the
 * 352-page book at 150 dpi: 2 threads 1.56x one thread, 2 processes 1.85x). A context
 * made here (engine_new_private_context) has its own store and glyph cache and no locks
 * but the one that guards MuPDF's globals (csrc/locks.c), so render threads share
 * nothing else.
 *
 * A MuPDF exception never unwinds through Rust: every call is behind fz_try. */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <mupdf/fitz.h>
#include "caught.h"
#include "locks.h"
#include "mcid.h"

typedef struct {
	fz_context *ctx;
	fz_document *doc;
	/* Fonts met by engine_rdoc_text, kept so that their slots stay valid. */
	fz_font **fonts;
	int nfonts, maxfonts;
} engine_rdoc;


/* Opens `path` in a new private context whose resource store holds at most
 * `store_bytes`. 0 on success (*out set), 1 on failure (message in err). */
int engine_rdoc_open(const char *path, size_t store_bytes, engine_rdoc **out, char *err, int errlen)
{
	engine_rdoc *d;
	fz_context *ctx = engine_new_private_context(store_bytes);
	*out = NULL;
	if (!ctx) {
		if (errlen > 0) {
			strncpy(err, "cannot create a MuPDF context", errlen - 1);
			err[errlen - 1] = 0;
		}
		return 1;
	}
	/* As the mupdf crate's base context: no printing of warnings and errors. */
	fz_set_warning_callback(ctx, NULL, NULL);
	fz_set_error_callback(ctx, NULL, NULL);
	d = calloc(1, sizeof *d);
	if (!d) {
		fz_drop_context(ctx);
		return 1;
	}
	d->ctx = ctx;
	fz_try(ctx) {
		fz_register_document_handlers(ctx);
		d->doc = fz_open_document(ctx, path);
		/* Read only: pages MuPDF would take hours to run are read as untagged (csrc/mcid.c). */
		if (pdf_document_from_fz_document(ctx, d->doc))
			pdf_drop_obj(ctx, engine_mcid_untag_costly(ctx, pdf_document_from_fz_document(ctx, d->doc)));
	}
	fz_catch(ctx) {
		copy_message(ctx, err, errlen);
		fz_drop_context(ctx);
		free(d);
		return 1;
	}
	*out = d;
	return 0;
}

void engine_rdoc_close(engine_rdoc *d)
{
	int i;
	if (!d)
		return;
	for (i = 0; i < d->nfonts; i++)
		fz_drop_font(d->ctx, d->fonts[i]);
	free(d->fonts);
	fz_drop_document(d->ctx, d->doc);
	fz_drop_context(d->ctx);
	free(d);
}

/* Renders page `index` (0-based) scaled by `scale`, annotations and widgets included,
 * as RGB without alpha (what the mupdf crate's Page::to_pixmap(.., device_rgb, false,
 * true) gives). On success *pix is the pixmap for engine_rdoc_drop_pixmap and the other
 * outputs describe its samples. */
int engine_rdoc_render(engine_rdoc *d, int index, float scale, void **pix, unsigned char **samples,
	int *w, int *h, int *n, int *stride, char *err, int errlen)
{
	fz_context *ctx = d->ctx;
	fz_page *page = NULL;
	fz_pixmap *p = NULL;
	fz_var(page);
	fz_var(p);
	*pix = NULL;
	fz_try(ctx) {
		page = fz_load_page(ctx, d->doc, index);
		p = fz_new_pixmap_from_page(ctx, page, fz_scale(scale, scale), fz_device_rgb(ctx), 0);
	}
	fz_always(ctx)
		fz_drop_page(ctx, page);
	fz_catch(ctx) {
		copy_message(ctx, err, errlen);
		return 1;
	}
	*pix = p;
	*samples = fz_pixmap_samples(ctx, p);
	*w = fz_pixmap_width(ctx, p);
	*h = fz_pixmap_height(ctx, p);
	*n = fz_pixmap_components(ctx, p); /* colorants, spots and alpha */
	*stride = (int)fz_pixmap_stride(ctx, p);
	return 0;
}

void engine_rdoc_drop_pixmap(engine_rdoc *d, void *pix)
{
	fz_drop_pixmap(d->ctx, pix);
}

/* The slot of `font` in the handle's font table, added when new. */
static uint32_t font_slot(fz_context *ctx, engine_rdoc *d, fz_font *font)
{
	int i;
	for (i = d->nfonts - 1; i >= 0; i--)
		if (d->fonts[i] == font)
			return (uint32_t)i;
	if (d->nfonts == d->maxfonts) {
		int m = d->maxfonts ? d->maxfonts * 2 : 16;
		fz_font **f = realloc(d->fonts, m * sizeof *f);
		if (!f)
			fz_throw(ctx, FZ_ERROR_SYSTEM, "out of memory");
		d->fonts = f;
		d->maxfonts = m;
	}
	d->fonts[d->nfonts] = fz_keep_font(ctx, font);
	return (uint32_t)d->nfonts++;
}

/* The structured text of page `index` (0-based; default options, as the mupdf crate's
 * Page::to_text_page with no flags, annotations and widgets included) as pairs of
 * 32-bit values: a character and its font's slot (engine_rdoc_font_name), each line
 * ended by ENGINE_LINE_END. For the compress content guard, which read it through the
 * mupdf crate before: on the crate's shared context its two threads waited on each
 * other's allocation lock. 0 on success (*out from malloc, *len pairs), 1 on failure. */
#define ENGINE_LINE_END 0xffffffffu
int engine_rdoc_text(engine_rdoc *d, int index, uint32_t **out, size_t *len)
{
	fz_context *ctx = d->ctx;
	fz_page *page = NULL;
	fz_stext_page *text = NULL;
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	fz_var(page);
	fz_var(text);
	fz_var(v);
	fz_var(n);
	fz_var(cap);
	*out = NULL;
	*len = 0;
	fz_try(ctx) {
		fz_stext_options opts = { 0 };
		fz_stext_block *b;
		fz_stext_line *l;
		fz_stext_char *c;
		page = fz_load_page(ctx, d->doc, index);
		text = fz_new_stext_page_from_page(ctx, page, &opts);
		for (b = text->first_block; b; b = b->next) {
			if (b->type != FZ_STEXT_BLOCK_TEXT)
				continue;
			for (l = b->u.t.first_line; l; l = l->next) {
				for (c = l->first_char; ; c = c->next) {
					if (n + 2 > cap) {
						size_t m = cap ? cap * 2 : 4096;
						uint32_t *w = realloc(v, m * sizeof *w);
						if (!w)
							fz_throw(ctx, FZ_ERROR_SYSTEM, "out of memory");
						v = w;
						cap = m;
					}
					if (!c) {
						v[n++] = ENGINE_LINE_END;
						v[n++] = 0;
						break;
					}
					v[n++] = c->c < 0 ? 0xfffdu : (uint32_t)c->c;
					v[n++] = c->font ? font_slot(ctx, d, c->font) : ENGINE_LINE_END;
				}
			}
		}
	}
	fz_always(ctx) {
		fz_drop_stext_page(ctx, text);
		fz_drop_page(ctx, page);
	}
	fz_catch(ctx) {
		free(v);
		v = NULL;
		rc = 1;
	}
	*out = v;
	*len = n / 2;
	return rc;
}

/* The name of the font in `slot` (as fz_font_name), or NULL. */
const char *engine_rdoc_font_name(engine_rdoc *d, uint32_t slot)
{
	return slot < (uint32_t)d->nfonts ? fz_font_name(d->ctx, d->fonts[slot]) : NULL;
}

void engine_rdoc_free(void *p)
{
	free(p);
}

/* The page count, or -1 when it cannot be read. */
int engine_rdoc_count_pages(engine_rdoc *d)
{
	int n = -1;
	fz_var(n);
	fz_try(d->ctx)
		n = fz_count_pages(d->ctx, d->doc);
	fz_catch(d->ctx)
		n = -1;
	return n;
}

/* Colour management off for this handle's context: text extraction does not look at
 * colours, and converting each page's gray fill through LCMS was a third of the content
 * guard's text extraction (geotopo-117-pages.pdf). */
void engine_rdoc_no_icc(engine_rdoc *d)
{
	fz_disable_icc(d->ctx);
}
