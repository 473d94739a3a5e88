/* The lock of MuPDF's process-wide state, shared by the engine's private contexts and
 * the mupdf crate's.
 *
 * The engine's private contexts (render threads, compress, G4) are made without locks
 * so that threads share no store, glyph cache or allocator lock (render_thread.c). But
 * MuPDF keeps some state in globals guarded by FZ_LOCK_FREETYPE: the context the
 * OpenJPEG and HarfBuzz allocators call back into (load-jpx.c, harfbuzz.c: "it is
 * vital that any fz_lock/fz_unlock handlers are shared between all the fz_contexts in
 * use at a time"). Without a shared lock, two threads decoding JPEG 2000 images at once
 * freed memory through each other's (or a NULL) context: rendering a 4-page JPEG 2000
 * PDF on two threads crashed every time. So every private context takes the mupdf
 * crate's own FZ_LOCK_FREETYPE mutex (adopted from one of its contexts before the first
 * private context is made) and nothing for the other locks, which guard only
 * per-context state here. */
#include <mupdf/fitz.h>

static fz_locks_context crate_locks;

static void lock(void *user, int n)
{
	(void)user;
	if (n == FZ_LOCK_FREETYPE && crate_locks.lock)
		crate_locks.lock(crate_locks.user, n);
}

static void unlock(void *user, int n)
{
	(void)user;
	if (n == FZ_LOCK_FREETYPE && crate_locks.unlock)
		crate_locks.unlock(crate_locks.user, n);
}

static const fz_locks_context private_locks = { NULL, lock, unlock };

/* Takes the lock functions of `crate_ctx` (a mupdf crate context). Called once, before
 * any private context exists (src/pdf/private_context.rs). */
void engine_locks_adopt(fz_context *crate_ctx)
{
	crate_locks = crate_ctx->locks;
}

/* A new context for one thread: its own store (`store_bytes`), glyph cache and font
 * context, and the shared FZ_LOCK_FREETYPE. */
fz_context *engine_new_private_context(size_t store_bytes)
{
	return fz_new_context(NULL, &private_locks, store_bytes);
}
