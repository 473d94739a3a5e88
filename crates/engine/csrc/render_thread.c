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
#include <string.h>
#include <mupdf/fitz.h>
#include "caught.h"
#include "locks.h"

typedef struct {
	fz_context *ctx;
	fz_document *doc;
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
	if (!d)
		return;
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
