/* CCITT Group 4 (T.6) encoding of packed 1-bit rows, for the compress pass's bitonal
 * images: MuPDF's encoder (source/fitz/encode-fax.c, Copyright (C) 2004-2021 Artifex
 * Software, Inc., AGPL-3.0-or-later, as this project; the code tables below are copied
 * from it) with two changes and the same output bytes:
 * - each row's changing elements are found once, 64 pixels at a time (the XOR of a word
 *   with itself shifted by a pixel, then count-leading-zeros), and the coding walks those
 *   lists with indices that only move forward (MuPDF reads pixel by pixel from a0 for every
 *   code, on both lines: its encoder was 60% of compressing a one-page 300-dpi scan,
 *   linearized-epson-printout.pdf, and still 58% with whole bytes of one colour skipped);
 * - codes go to a plain growing buffer, so no MuPDF context is made per image.
 * A unit test (src/pagework/compress/ffi.rs) checks the bytes against MuPDF's encoder,
 * run by engine_g4_encode_mupdf. */
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include "mupdf/fitz.h"
#include "locks.h"

typedef struct
{
	unsigned short code;
	unsigned short nbits;
} cfe_code;

typedef struct {
	cfe_code termination[64];
	cfe_code makeup[41];
} cf_runs;

/* Define the end-of-line code. */
static const cfe_code cf_run_eol = {1, 12};

/* Define the 2-D run codes. */
static const cfe_code cf2_run_pass = {0x1, 4};
static const cfe_code cf2_run_vertical[7] =
{
	{0x3, 7},
	{0x3, 6},
	{0x3, 3},
	{0x1, 1},
	{0x2, 3},
	{0x2, 6},
	{0x2, 7}
};
static const cfe_code cf2_run_horizontal = {1, 3};

/* White run codes. */
static const cf_runs cf_white_runs =
{
	/* Termination codes */
	{
		{0x35, 8}, {0x7, 6}, {0x7, 4}, {0x8, 4},
		{0xb, 4}, {0xc, 4}, {0xe, 4}, {0xf, 4},
		{0x13, 5}, {0x14, 5}, {0x7, 5}, {0x8, 5},
		{0x8, 6}, {0x3, 6}, {0x34, 6}, {0x35, 6},
		{0x2a, 6}, {0x2b, 6}, {0x27, 7}, {0xc, 7},
		{0x8, 7}, {0x17, 7}, {0x3, 7}, {0x4, 7},
		{0x28, 7}, {0x2b, 7}, {0x13, 7}, {0x24, 7},
		{0x18, 7}, {0x2, 8}, {0x3, 8}, {0x1a, 8},
		{0x1b, 8}, {0x12, 8}, {0x13, 8}, {0x14, 8},
		{0x15, 8}, {0x16, 8}, {0x17, 8}, {0x28, 8},
		{0x29, 8}, {0x2a, 8}, {0x2b, 8}, {0x2c, 8},
		{0x2d, 8}, {0x4, 8}, {0x5, 8}, {0xa, 8},
		{0xb, 8}, {0x52, 8}, {0x53, 8}, {0x54, 8},
		{0x55, 8}, {0x24, 8}, {0x25, 8}, {0x58, 8},
		{0x59, 8}, {0x5a, 8}, {0x5b, 8}, {0x4a, 8},
		{0x4b, 8}, {0x32, 8}, {0x33, 8}, {0x34, 8}
	},

	/* Make-up codes */
	{
		{0, 0} /* dummy */ , {0x1b, 5}, {0x12, 5}, {0x17, 6},
		{0x37, 7}, {0x36, 8}, {0x37, 8}, {0x64, 8},
		{0x65, 8}, {0x68, 8}, {0x67, 8}, {0xcc, 9},
		{0xcd, 9}, {0xd2, 9}, {0xd3, 9}, {0xd4, 9},
		{0xd5, 9}, {0xd6, 9}, {0xd7, 9}, {0xd8, 9},
		{0xd9, 9}, {0xda, 9}, {0xdb, 9}, {0x98, 9},
		{0x99, 9}, {0x9a, 9}, {0x18, 6}, {0x9b, 9},
		{0x8, 11}, {0xc, 11}, {0xd, 11}, {0x12, 12},
		{0x13, 12}, {0x14, 12}, {0x15, 12}, {0x16, 12},
		{0x17, 12}, {0x1c, 12}, {0x1d, 12}, {0x1e, 12},
		{0x1f, 12}
	}
};

/* Black run codes. */
static const cf_runs cf_black_runs =
{
	/* Termination codes */
	{
		{0x37, 10}, {0x2, 3}, {0x3, 2}, {0x2, 2},
		{0x3, 3}, {0x3, 4}, {0x2, 4}, {0x3, 5},
		{0x5, 6}, {0x4, 6}, {0x4, 7}, {0x5, 7},
		{0x7, 7}, {0x4, 8}, {0x7, 8}, {0x18, 9},
		{0x17, 10}, {0x18, 10}, {0x8, 10}, {0x67, 11},
		{0x68, 11}, {0x6c, 11}, {0x37, 11}, {0x28, 11},
		{0x17, 11}, {0x18, 11}, {0xca, 12}, {0xcb, 12},
		{0xcc, 12}, {0xcd, 12}, {0x68, 12}, {0x69, 12},
		{0x6a, 12}, {0x6b, 12}, {0xd2, 12}, {0xd3, 12},
		{0xd4, 12}, {0xd5, 12}, {0xd6, 12}, {0xd7, 12},
		{0x6c, 12}, {0x6d, 12}, {0xda, 12}, {0xdb, 12},
		{0x54, 12}, {0x55, 12}, {0x56, 12}, {0x57, 12},
		{0x64, 12}, {0x65, 12}, {0x52, 12}, {0x53, 12},
		{0x24, 12}, {0x37, 12}, {0x38, 12}, {0x27, 12},
		{0x28, 12}, {0x58, 12}, {0x59, 12}, {0x2b, 12},
		{0x2c, 12}, {0x5a, 12}, {0x66, 12}, {0x67, 12}
	},

	/* Make-up codes. */
	{
		{0, 0} /* dummy */ , {0xf, 10}, {0xc8, 12}, {0xc9, 12},
		{0x5b, 12}, {0x33, 12}, {0x34, 12}, {0x35, 12},
		{0x6c, 13}, {0x6d, 13}, {0x4a, 13}, {0x4b, 13},
		{0x4c, 13}, {0x4d, 13}, {0x72, 13}, {0x73, 13},
		{0x74, 13}, {0x75, 13}, {0x76, 13}, {0x77, 13},
		{0x52, 13}, {0x53, 13}, {0x54, 13}, {0x55, 13},
		{0x5a, 13}, {0x5b, 13}, {0x64, 13}, {0x65, 13},
		{0x8, 11}, {0xc, 11}, {0xd, 11}, {0x12, 12},
		{0x13, 12}, {0x14, 12}, {0x15, 12}, {0x16, 12},
		{0x17, 12}, {0x1c, 12}, {0x1d, 12}, {0x1e, 12},
		{0x1f, 12}
	}
};

/* Bits written most significant first; the last byte padded with zeros. */
typedef struct
{
	unsigned char *data;
	size_t len, cap;
	unsigned int acc; /* pending bits, in the low `n` bits */
	int n;
	int failed;
} bits;

static void put(bits *b, unsigned int code, int nbits)
{
	b->acc = (b->acc << nbits) | (code & ((1u << nbits) - 1));
	b->n += nbits;
	while (b->n >= 8)
	{
		if (b->len == b->cap)
		{
			size_t cap = b->cap ? b->cap * 2 : 4096;
			unsigned char *d = realloc(b->data, cap);
			if (!d)
			{
				b->failed = 1;
				b->n = 0;
				return;
			}
			b->data = d;
			b->cap = cap;
		}
		b->n -= 8;
		b->data[b->len++] = (unsigned char)(b->acc >> b->n);
	}
	b->acc &= (1u << b->n) - 1;
}

static void putcode(bits *b, const cfe_code *c)
{
	put(b, c->code, c->nbits);
}

/* The changing elements of a row of `w` pixels (a 1 bit is white, as MuPDF's getbit):
 * every x whose colour differs from pixel x - 1's, pixel -1 being white, in order, then
 * `w` twice (so that the coding may read one past any element). `out` holds w + 2. Bits
 * past `w` in the last byte are ignored. */
static void changes(const unsigned char *line, int w, int *out)
{
	int n = 0;
	int nbytes = (w + 7) >> 3;
	unsigned long long prev = 1; /* pixel -1: white (a 1 bit) */
	for (int byte = 0; byte < nbytes; byte += 8)
	{
		/* Up to 8 bytes, most significant first; missing bytes read as white. */
		unsigned long long v = 0;
		int k, take = nbytes - byte < 8 ? nbytes - byte : 8;
		for (k = 0; k < take; k++)
			v = (v << 8) | line[byte + k];
		for (; k < 8; k++)
			v = (v << 8) | 0xff;
		{
			/* bit 63 - i set where pixel byte * 8 + i differs from the one before it */
			unsigned long long d = v ^ ((v >> 1) | (prev << 63));
			int base = byte * 8;
			int left = w - base; /* pixels of this word that are in the row */
			if (left < 64)
				d &= ~0ULL << (64 - left);
			while (d)
			{
				int lz = __builtin_clzll(d);
				out[n++] = base + lz;
				d &= ~(1ULL << (63 - lz));
			}
		}
		prev = v & 1;
	}
	out[n] = w;
	out[n + 1] = w;
}

static void putrun(bits *b, int run, int c)
{
	const cf_runs *codetable = c ? &cf_black_runs : &cf_white_runs;
	if (run > 63)
	{
		int m = run >> 6;
		while (m > 40)
		{
			putcode(b, &codetable->makeup[40]);
			m -= 40;
		}
		if (m > 0)
			putcode(b, &codetable->makeup[m]);
		putcode(b, &codetable->termination[run & 63]);
	}
	else
		putcode(b, &codetable->termination[run]);
}

/* G4 of `rows` rows of `columns` pixels, `stride` bytes apart. Returns malloc'ed data and
 * its length, or NULL when memory ran out. The modes are chosen exactly as MuPDF's encoder
 * chooses them: a1 is the first changing element of the coding line after a0; b1 the first
 * of the reference line after a0 whose colour is not a0's (an element at an even index
 * turns the line black, at an odd one white), b2 the one after b1. */
unsigned char *engine_g4(const unsigned char *src, int columns, int rows, ptrdiff_t stride, size_t *len)
{
	bits b = { NULL, 0, 0, 0, 0, 0 };
	/* Two lists of changing elements (coding line, reference line), swapped per row; the
	 * first reference line is white (no elements). */
	int *cur = malloc(sizeof(int) * ((size_t)columns + 2));
	int *ref = malloc(sizeof(int) * ((size_t)columns + 2));
	if (!cur || !ref)
	{
		free(cur);
		free(ref);
		return NULL;
	}
	ref[0] = ref[1] = columns;
	while (rows-- > 0 && !b.failed)
	{
		int a0 = -1, c = 0, i = 0, j = 0;
		changes(src, columns, cur);
		while (a0 < columns)
		{
			int a1, b1, b2, diff, k;
			/* i and j: the first elements after a0 (elements at or before it stay behind,
			 * as a0 only grows). */
			while (cur[i] <= a0)
				i++;
			while (ref[j] <= a0)
				j++;
			a1 = cur[i];
			/* The colour after element k is black for even k; b1's must be c ^ 1. Not kept
			 * in j: the next a0 may lie before b1 (vertical mode up to 3 pixels left of it,
			 * horizontal mode anywhere), and then element j is the next b1's candidate. */
			k = ref[j] < columns && (j & 1) != c ? j + 1 : j;
			b1 = ref[k];
			b2 = b1 < columns ? ref[k + 1] : columns;
			diff = b1 - a1;
			if (a0 < 0)
				a0 = 0;
			if (b2 < a1)
			{
				/* pass mode */
				putcode(&b, &cf2_run_pass);
				a0 = b2;
			}
			else if (diff >= -3 && diff <= 3)
			{
				/* vertical mode */
				putcode(&b, &cf2_run_vertical[diff + 3]);
				a0 = a1;
				c = c ^ 1;
			}
			else
			{
				/* horizontal mode */
				int a2 = a1 < columns ? cur[i + 1] : columns;
				putcode(&b, &cf2_run_horizontal);
				putrun(&b, a1 - a0, c);
				putrun(&b, a2 - a1, c ^ 1);
				a0 = a2;
			}
		}
		{
			int *t = ref;
			ref = cur;
			cur = t;
		}
		src += stride;
	}
	free(cur);
	free(ref);
	putcode(&b, &cf_run_eol);
	putcode(&b, &cf_run_eol);
	if (b.n > 0 && !b.failed)
		put(&b, 0, 8 - b.n);
	if (b.failed)
	{
		free(b.data);
		return NULL;
	}
	*len = b.len;
	return b.data ? b.data : malloc(1);
}

/* CCITT G4 of packed 1-bit rows (stride (w + 7) / 8; a 1 bit is G4 white); callable from
 * any thread. Returns malloc'ed data (engine_g4_free) and its length, or NULL. */
unsigned char *engine_g4_encode(const unsigned char *packed, int w, int h, size_t *len)
{
	return engine_g4(packed, w, h, (w + 7) / 8, len);
}

/* The same by MuPDF's own encoder, in a context of its own: the reference the unit test
 * holds engine_g4 to. */
unsigned char *engine_g4_encode_mupdf(const unsigned char *packed, int w, int h, size_t *len)
{
	fz_context *ctx = engine_new_private_context(FZ_STORE_UNLIMITED);
	fz_buffer *buf = NULL;
	unsigned char *out = NULL;
	if (!ctx)
		return NULL;
	fz_var(buf);
	fz_var(out);
	fz_try(ctx)
	{
		buf = fz_compress_ccitt_fax_g4(ctx, packed, w, h, (w + 7) / 8);
		out = malloc(buf->len ? buf->len : 1);
		if (out) {
			memcpy(out, buf->data, buf->len);
			*len = buf->len;
		}
	}
	fz_always(ctx)
		fz_drop_buffer(ctx, buf);
	fz_catch(ctx)
	{
		free(out);
		out = NULL;
	}
	fz_drop_context(ctx);
	return out;
}

void engine_g4_free(unsigned char *p)
{
	free(p);
}
