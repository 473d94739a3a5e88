/* Private MuPDF contexts that share the mupdf crate's FZ_LOCK_FREETYPE (csrc/locks.c). */
#ifndef ENGINE_LOCKS_H
#define ENGINE_LOCKS_H
#include "mupdf/fitz.h"

fz_context *engine_new_private_context(size_t store_bytes);

#endif
