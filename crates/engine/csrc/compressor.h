/* The compressor's shared declarations: return codes, the handle (engine_cz) with its
 * image list, and the passes, each in a file of its own. The engine
 * (src/pagework/compress/ffi.rs) is the only caller of the entry points, which are in
 * compress.c (open, the passes in their order, save), compress_images.c (the image pass)
 * and compress_fonts.c (the fonts pass); nothing here calls back into the engine. Calls go
 * one way: compress.c calls the passes; a pass calls only the walks (compress_walk.c) and
 * the image list (compress_images.c). */
#ifndef ENGINE_COMPRESSOR_H
#define ENGINE_COMPRESSOR_H

#include "mupdf/fitz.h"
#include "mupdf/pdf.h"

/* Return codes; keep in sync with src/pagework/compress/ffi.rs. */
#define ENGINE_OK 0
#define ENGINE_OPEN_FAILED 1
#define ENGINE_NEEDS_PASSWORD 2
#define ENGINE_FAILED 3
#define ENGINE_NO_CONTEXT 4

/* Image encodings the engine's image pass reads and writes. */
#define ENGINE_IMG_DCT 1
#define ENGINE_IMG_FLATE 2
/* 1-bit, one component (grey, 2-colour indexed, stencil mask), any filter MuPDF decodes
 * but JPX: handed out decoded (packed rows). */
#define ENGINE_IMG_BITONAL 3
/* How engine_cz_replace_bitonal's data is encoded (keep in sync with src/pagework/compress/ffi.rs). */
#define ENGINE_BITONAL_FLATE 0
#define ENGINE_BITONAL_G4 1
#define ENGINE_BITONAL_G4_BLACK_IS_1 2
/* Too large to decode (see ENGINE_KEEP_ABOVE): kept as stored, hidden from the rewriter. */
#define ENGINE_IMG_KEEP 4
/* Images whose samples at 8 bits would exceed this are never decoded: MuPDF's rewriter
 * unpacks a 35000 x 35000 bitonal scan to 1.2 GB (9 s); such an image is kept. */
#define ENGINE_KEEP_ABOVE ((double)(512 << 20))

/* One image XObject the engine's pass may re-encode; layout shared with
 * src/pagework/compress/ffi.rs. */
typedef struct {
	int num;        /* object number */
	int kind;       /* ENGINE_IMG_DCT, _FLATE (the stream's only filter, or DCT deflated), _BITONAL or _KEEP */
	int width, height;
	int comps;      /* 1 grey or 3 colour, 8 bits each */
	int png_predictor; /* flate: rows carry a PNG predictor byte (/Predictor >= 10) */
	int flate_wrapped; /* DCT: stored as [/FlateDecode /DCTDecode] (deflated JPEG data) */
	int color_transform; /* DCT: /ColorTransform of DecodeParms, -1 when absent (the JPEG's markers decide) */
	float dpi;      /* effective dpi: the smallest over every use on every page */
	int length;     /* bytes of the stream as stored */
	int jbig2;      /* bitonal: stored with JBIG2Decode (which G4 or flate rarely beat) */
} engine_image;

typedef struct {
	engine_image info;
	int handled;    /* re-encoded (or found not worth it) by the engine: MuPDF's rewriter skips it */
	int written;    /* its stream was replaced by the pass (already deflated as the pass chose) */
	fz_buffer *raw;
} engine_candidate;

typedef struct {
	fz_context *ctx;
	pdf_document *doc;
	char *path;     /* the input, opened a second time for the image list */
	engine_candidate *cand;
	int ncand, maxcand;
	int *others;    /* object numbers of images the pass does not take (MuPDF's rewriter does) */
	int nothers, maxothers;
	int inline_images; /* inline images seen (kept as they are) */
	int gathered;   /* the list is complete (every page read through) */
	struct engine_font_work *fonts; /* the fonts pass between its two halves (compress_fonts.c) */
} engine_cz;

/* compress_images.c: the image list of the engine's pass. */
void engine_cz_drop_candidates(engine_cz *z);
/* True when object `num` is an image the pass wrote: the save's flate re-deflation
 * skips it (the pass's flate is final; inflating and deflating it again cost time). */
int engine_cz_written(engine_cz *z, int num);
/* True when some image is left for MuPDF's rewriter. */
int engine_cz_needs_rewriter(engine_cz *z);
/* Called for every use of an image (obj NULL for an inline image). */
typedef void (image_use_fn)(fz_context *ctx, void *opaque, fz_image **image, fz_matrix ctm, pdf_obj *obj);
/* Calls `fn` for every use of an image on one page, its annotations and widgets (the
 * largest use sets an image's dpi, so repeated uses count), without changing anything. */
void engine_cz_for_each_image_use(fz_context *ctx, pdf_document *doc, int page_num, image_use_fn *fn, void *opaque);

/* compress_rewrite.c: runs `rewrite` (MuPDF's pdf_rewrite_images) on a second opening
 * of the file, the handled images hidden from it, and copies the images it replaced
 * into the document's own image objects. */
void engine_cz_isolated_rewrite(engine_cz *z, void (*rewrite)(fz_context *, pdf_document *, void *), void *opaque);

/* compress_metadata.c. A change to one dictionary (`root`: the resolved catalogue), for
 * the walk that drops private data. */
typedef void (*engine_dict_visit)(fz_context *ctx, pdf_obj *dict, pdf_obj *root);
/* Drops thumbnails, PieceInfo and non-document XMP from one dictionary (an engine_dict_visit). */
void engine_cz_drop_private_keys(fz_context *ctx, pdf_obj *obj, pdf_obj *root);
/* Deflates the unfiltered XMP metadata streams (PDF/A files' only when `pdfa_too`). */
void engine_cz_deflate_metadata(fz_context *ctx, pdf_document *doc, int pdfa_too);
/* The document's XMP without embedded thumbnails (lossy levels). */
void engine_cz_slim_metadata(fz_context *ctx, pdf_document *doc);

/* compress_deflate.c: takes the ASCII layer off every stream and re-deflates the flate
 * ones at the best level (not the images the pass wrote). */
void engine_cz_recompress_streams(engine_cz *z);
/* `len` bytes of pixels deflated by zlib-rs at level 9 (zlib format) into `out` (`cap`
 * bytes), from any thread; the bytes written, 0 when they did not fit. */
size_t engine_deflate_pixels(const unsigned char *in, size_t len, unsigned char *out, size_t cap);

/* compress_fonts.c: the fonts pass, in two halves around the engine's conversion of Type 1
 * programs to CFF and its cut of ToUnicode CMaps (layouts shared with
 * src/pagework/compress/ffi.rs). */
typedef struct {
	int num;                    /* the /FontFile stream */
	const unsigned char *data;  /* the program, decoded */
	size_t len;
	int length1, length2;       /* its /Length1 and /Length2 */
	const unsigned char *names; /* the names of the glyphs shown, each ended by a NUL */
	size_t names_len;
	int keep_all;               /* a font of it that no content selects: every glyph kept */
} engine_t1_copy;
typedef struct {
	int num;                    /* the ToUnicode stream */
	const unsigned char *data;  /* the CMap, decoded */
	size_t len;
	const unsigned char *used;  /* 256 flags: the one-byte codes shown */
} engine_cmap_copy;
/* Bytes the engine hands in (NULL: keep what is there). */
typedef struct {
	const unsigned char *data;
	size_t len;
} engine_bytes;
typedef struct {
	int subset;                 /* MuPDF's subsetter ran through (the guard checks) */
	int type1;                  /* Type 1 programs copied out (engine_cz_type1_program) */
	int cmaps;                  /* CMaps copied out (engine_cz_cmap_program) */
} engine_fonts_found;
typedef struct {
	int type1_converted;        /* Type 1 programs replaced by CFF */
	int cff_subset;             /* bare CFF programs cut by MuPDF's CFF subsetter */
	int cmaps_cut;
	int type3_trimmed;          /* Type 3 fonts that lost unused glyph procedures */
} engine_fonts_installed;
/* First half: MuPDF's subsetter, then copies of the Type 1 programs and ToUnicode CMaps in
 * use (valid until the second half); changes nothing else. */
int engine_cz_fonts_collect(engine_cz *z, engine_fonts_found *r, char *err, int errlen);
const engine_t1_copy *engine_cz_type1_program(engine_cz *z, int i);
const engine_cmap_copy *engine_cz_cmap_program(engine_cz *z, int i);
/* Second half: `type1[i]` (a CFF program) replaces Type 1 program i when FreeType reads it
 * and it is smaller, `cmaps[i]` replaces CMap i; bare CFF programs are cut by MuPDF and
 * unused Type 3 glyphs dropped. */
int engine_cz_fonts_install(engine_cz *z, const engine_bytes *type1, int ntype1, const engine_bytes *cmaps,
	int ncmaps, engine_fonts_installed *r, char *err, int errlen);
/* Frees what the first half kept (engine_cz_close calls it too). */
void engine_cz_drop_font_work(engine_cz *z);
/* compress_dedup.c: merges duplicate objects by hash (what the save does at garbage
 * level 3 and 4, in linear rather than quadratic time). Returns how many. */
int engine_cz_merge_duplicates(fz_context *ctx, pdf_document *doc);
int engine_cz_merge_icc_profiles(fz_context *ctx, pdf_document *doc);
/* compress_colorspace.c: multilinear sampled functions stored by their corners (every
 * level), and indexed palettes over spot colours with a large tint transform mapped to
 * their alternate (lossy levels); each returns how many changed. */
int engine_cz_reduce_sampled_functions(fz_context *ctx, pdf_document *doc);
int engine_cz_flatten_spot_palettes(fz_context *ctx, pdf_document *doc);

/* compress_walk.c: walks over the object graph. Pushes the references and containers
 * among the values of `o` (a dictionary or an array; a dictionary's `skip` key, when not
 * NULL, left out) onto the stack `*stack` (`*top` entries of `*cap`, grown as needed). */
void engine_push_children(fz_context *ctx, pdf_obj *o, pdf_obj *skip, pdf_obj ***stack, int *top, int *cap);
/* Deletes every object the save's garbage collection would drop; `visit`, when not
 * NULL, changes each dictionary reached first. */
void engine_cz_drop_unreachable(fz_context *ctx, pdf_document *doc, engine_dict_visit visit);
/* A test on one dictionary, for engine_page_reaches. */
typedef int (*engine_dict_match)(fz_context *ctx, pdf_obj *dict);
/* True when a dictionary `match` holds for can be reached from page `page_num`; `seen`
 * has `n` (xref length) entries, zeroed before the first call and kept across the pages
 * of one `match`; `stamp` is positive and unique per call. */
int engine_page_reaches(fz_context *ctx, pdf_document *doc, int page_num, int *seen, int n, int stamp, engine_dict_match match);

#endif
