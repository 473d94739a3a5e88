/* Which glyphs and codes the content of a document shows, font by font: what the Type 1
 * conversion and the ToUnicode and Type 3 cuts of compress_fonts.c may keep. Found with a
 * content processor over every page, form XObject, annotation appearance, tiling pattern
 * and Type 3 glyph procedure (glyph ids as MuPDF draws them, FreeType's). */
#ifndef ENGINE_COMPRESS_FONT_USAGE_H
#define ENGINE_COMPRESS_FONT_USAGE_H

#include "mupdf/fitz.h"
#include "mupdf/pdf.h"

typedef struct {
	int num;         /* the program's object number: /FontFile, or /FontFile3 when `cff` */
	int cff;         /* a bare CFF program (/FontFile3 /Type1C) of a simple font */
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

/* The Type 1 program of simple font `dict`: its /FontFile, else its /FontFile3 when that is a
 * bare CFF (/Type1C: `*cff` set); NULL for other fonts and programs. */
pdf_obj *engine_type1_program(fz_context *ctx, pdf_obj *dict, int *cff);
/* Fills `u` (zeroed) with the glyphs and codes every font of `doc` shows; a font whose
 * uses could not all be seen is marked to be kept whole. Throws when a page cannot be
 * read (nothing may then be cut). */
void engine_font_usage_gather(fz_context *ctx, pdf_document *doc, t1_usage *u);
void engine_font_usage_drop(fz_context *ctx, t1_usage *u);
/* Object `num`, or NULL when it cannot be loaded. */
pdf_obj *engine_load_object_quiet(fz_context *ctx, pdf_document *doc, int num);

#endif
