/* Compression of a whole PDF with MuPDF's image rewriter and writer, behind fz_try.
 * The mupdf crate exposes neither pdf_rewrite_images nor object streams, and a MuPDF
 * exception must never unwind through Rust. Each handle (engine_cz) has a private
 * fz_context (no state shared with the mupdf crate) and is used from one thread.
 * Between engine_cz_open and engine_cz_finish the engine's own image pass
 * (src/compress/images.rs, csrc/compress_images.c) may replace image streams. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include "compress.h"
#include "caught.h"
#include "locks.h"

/* Deflates `len` bytes of pixels at level 9 (zlib format) into `out` (`cap` bytes),
 * from any thread; returns the bytes written, 0 when it could not (zlib is used then). */
typedef size_t (*pixel_deflater)(const unsigned char *in, size_t len, unsigned char *out, size_t cap);

typedef struct {
	int rewrite_images;   /* 0 = lossless only */
	int threshold_dpi;    /* images above this effective dpi are downsampled ... */
	int target_dpi;       /* ... to this dpi */
	int jpeg_quality;     /* JPEG quality for colour and grey images */
	int lossless_stays_lossless; /* flate images re-encoded losslessly (not as JPEG) */
	int recompress_flate; /* re-deflate FlateDecode streams at the best level when smaller */
	int garbage;          /* MuPDF garbage level: 3 = merge duplicate objects, 4 = and duplicate streams */
	int object_streams;
	int skip_rewriter;    /* images the engine's pass did not take are kept as they are */
	int rewrite_in_place; /* MuPDF's rewriter on the document itself, as before the pass
	                       * existed (for comparisons; only without the pass) */
	int subset_fonts;     /* subset embedded TrueType/OpenType/CFF fonts to the glyphs used */
	int drop_private;     /* drop what no viewer shows: thumbnails, PieceInfo, non-document metadata */
	int page_count;       /* out */
	int rewriter_ran;     /* out: MuPDF's image rewriter ran (the content guard checks) */
	int fonts_subset;     /* out: MuPDF's font subsetter changed the document (the guard checks) */
	pixel_deflater deflate_pixels; /* set by the Rust side (zlib-rs); NULL: MuPDF's zlib */
} engine_compress_options;

/* Subsets the embedded fonts to the glyphs the pages (and their annotations) use, with
 * MuPDF's pdf_subset_fonts (TrueType, OpenType and CFF programs; a bare Type 1 program
 * is left as it is). A font it cannot parse is left alone by MuPDF; a failure of the
 * whole pass (a page that cannot be read) leaves the document unchanged, as the fonts
 * are rewritten only after every page was read. Returns 1 when it ran through. */
/* csrc/compress_fonts.c: Type 1 programs replaced by CFF subsets. */
int engine_cz_convert_type1(fz_context *ctx, pdf_document *doc);

static int subset_fonts(fz_context *ctx, pdf_document *doc)
{
	int ok = 0;
	fz_var(ok);
	fz_try(ctx)
	{
		pdf_subset_fonts(ctx, doc, 0, NULL);
		ok = 1;
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return ok;
}

/* Drops from one dictionary what no viewer shows: page thumbnails (/Thumb), private
 * application data (/PieceInfo, e.g. Illustrator's and Photoshop's copies of the
 * artwork) on any dictionary, and XMP metadata streams attached to anything but the
 * catalogue (pages, images, fonts, forms: Acrobat and InDesign repeat the document's).
 * The catalogue's /Metadata (the document's XMP) is kept. Given to drop_unreachable's
 * walk, so only what is reachable is looked at and what the keys led to is deleted
 * unread (annotator-base64-image.pdf's PieceInfo holds a 1.3 MB string that took 7% of
 * its run to parse when every object was). */
static void drop_private_keys(fz_context *ctx, pdf_obj *obj, pdf_obj *root)
{
	pdf_obj *type = pdf_dict_get(ctx, obj, PDF_NAME(Type));
	/* Deleted only when there: a deletion marks the dictionary changed. */
	if (pdf_dict_get(ctx, obj, PDF_NAME(PieceInfo)))
		pdf_dict_del(ctx, obj, PDF_NAME(PieceInfo));
	if (type == PDF_NAME(Page) && pdf_dict_get(ctx, obj, PDF_NAME(Thumb)))
		pdf_dict_del(ctx, obj, PDF_NAME(Thumb));
	if (obj != root && type != PDF_NAME(Catalog) && type != PDF_NAME(Metadata) &&
		pdf_is_stream(ctx, pdf_dict_get(ctx, obj, PDF_NAME(Metadata))))
		pdf_dict_del(ctx, obj, PDF_NAME(Metadata));
}


/* True when the document's XMP says it is PDF/A (pdfaid), whose metadata streams must
 * stay unfiltered. */
static int claims_pdfa(fz_context *ctx, pdf_document *doc)
{
	pdf_obj *md = pdf_dict_getp(ctx, pdf_trailer(ctx, doc), "Root/Metadata");
	fz_buffer *buf = NULL;
	int pdfa = 0;
	fz_var(buf);
	if (!pdf_is_stream(ctx, md))
		return 0;
	fz_try(ctx)
	{
		buf = pdf_load_stream(ctx, md);
		fz_terminate_buffer(ctx, buf);
		pdfa = strstr((const char *)buf->data, "pdfaid") != NULL;
	}
	fz_always(ctx)
		fz_drop_buffer(ctx, buf);
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		pdfa = 1;
	}
	return pdfa;
}

/* Deflates the unfiltered XMP metadata streams (MuPDF's writer leaves them as they
 * are; Ghostscript deflates them): lossless, but not for encrypted files, nor for PDF/A
 * files, which require them unfiltered, unless `pdfa_too` (the lossy levels drop the
 * OutputIntents a PDF/A file needs, so it stays no PDF/A anyway). Kept when deflating
 * does not make it smaller. The only place metadata is deflated. */
static void deflate_metadata(fz_context *ctx, pdf_document *doc, int pdfa_too)
{
	int i, n = pdf_xref_len(ctx, doc);
	if (doc->crypt || (!pdfa_too && claims_pdfa(ctx, doc)))
		return;
	for (i = 1; i < n; i++)
	{
		pdf_obj *ref = NULL;
		fz_buffer *buf = NULL, *comp = NULL;
		fz_var(ref);
		fz_var(buf);
		fz_var(comp);
		fz_try(ctx)
		{
			unsigned char *data;
			size_t len = 0;
			if (!pdf_obj_num_is_stream(ctx, doc, i))
				break;
			ref = pdf_new_indirect(ctx, doc, i, 0);
			if (pdf_dict_get(ctx, ref, PDF_NAME(Type)) != PDF_NAME(Metadata) || pdf_dict_get(ctx, ref, PDF_NAME(Filter)))
				break;
			buf = pdf_load_stream_number(ctx, doc, i);
			data = fz_new_deflated_data_from_buffer(ctx, &len, buf, FZ_DEFLATE_BEST);
			comp = fz_new_buffer_from_data(ctx, data, len);
			if (comp->len + 20 < buf->len)
			{
				pdf_update_stream(ctx, doc, ref, comp, 1);
				pdf_dict_put(ctx, ref, PDF_NAME(Filter), PDF_NAME(FlateDecode));
			}
		}
		fz_always(ctx)
		{
			fz_drop_buffer(ctx, comp);
			fz_drop_buffer(ctx, buf);
			pdf_drop_obj(ctx, ref);
		}
		fz_catch(ctx)
		{
			fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
			fz_report_error(ctx);
		}
	}
}

/* Largest decoded stream re-deflated (bigger ones, or decompression bombs, are copied). */
#define RECOMPRESS_CAP ((size_t)256 << 20)

/* `buf` (a stream's inflated data, PNG-predicted with the parameters `dp`) with the
 * predictor undone; NULL when the data does not decode cleanly. */
static fz_buffer *unpredicted(fz_context *ctx, fz_buffer *buf, pdf_obj *dp, int predictor)
{
	fz_stream *mem = NULL, *un = NULL;
	fz_buffer *plain = NULL;
	fz_var(mem);
	fz_var(un);
	fz_var(plain);
	fz_try(ctx)
	{
		int truncated = 0;
		mem = fz_open_buffer(ctx, buf);
		un = fz_open_predict(ctx, mem, predictor,
			pdf_dict_get_int_default(ctx, dp, PDF_NAME(Columns), 1),
			pdf_dict_get_int_default(ctx, dp, PDF_NAME(Colors), 1),
			pdf_dict_get_int_default(ctx, dp, PDF_NAME(BitsPerComponent), 8));
		plain = fz_read_best(ctx, un, 0, &truncated, RECOMPRESS_CAP);
		if (truncated || un->error)
		{
			fz_drop_buffer(ctx, plain);
			plain = NULL;
		}
	}
	fz_always(ctx)
	{
		fz_drop_stream(ctx, un);
		fz_drop_stream(ctx, mem);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_drop_buffer(ctx, plain);
		plain = NULL;
	}
	return plain;
}

/* The ASCII layer (ASCIIHexDecode or ASCII85Decode, first in the stream's filters) taken
 * off: data written for 7-bit channels is half (hex) or four fifths (base 85) binary.
 * The bytes under it stay as they are with the rest of the filters; a stream with no
 * other filter is then deflated by recompress_streams. qpdf does the same by default
 * (--decode-level=generalized). A layer that does not decode cleanly (binary garbage in
 * a hex stream, as in a fuzzed file) is kept: readers differ on what such data means. */
static void strip_ascii_layer(fz_context *ctx, pdf_document *doc, int num)
{
	pdf_obj *ref = NULL, *rest = NULL, *rest_dp = NULL;
	fz_stream *raw = NULL, *stm = NULL;
	fz_buffer *buf = NULL;
	fz_var(ref);
	fz_var(rest);
	fz_var(rest_dp);
	fz_var(raw);
	fz_var(stm);
	fz_var(buf);
	fz_try(ctx)
	{
		pdf_obj *f, *first, *dp;
		int truncated = 0, i, n;
		if (!pdf_obj_num_is_stream(ctx, doc, num))
			break;
		ref = pdf_new_indirect(ctx, doc, num, 0);
		f = pdf_dict_get(ctx, ref, PDF_NAME(Filter));
		first = pdf_is_array(ctx, f) ? pdf_array_get(ctx, f, 0) : f;
		if (first != PDF_NAME(ASCIIHexDecode) && first != PDF_NAME(AHx) &&
			first != PDF_NAME(ASCII85Decode) && first != PDF_NAME(A85))
			break;
		raw = pdf_open_raw_stream_number(ctx, doc, num);
		stm = first == PDF_NAME(ASCIIHexDecode) || first == PDF_NAME(AHx) ? fz_open_ahxd(ctx, raw) : fz_open_a85d(ctx, raw);
		buf = fz_read_best(ctx, stm, 0, &truncated, RECOMPRESS_CAP);
		if (truncated || stm->error)
			break;
		/* The filters and their parameters after the first. */
		n = pdf_is_array(ctx, f) ? pdf_array_len(ctx, f) : 1;
		dp = pdf_dict_get(ctx, ref, PDF_NAME(DecodeParms));
		if (n == 2)
		{
			rest = pdf_keep_obj(ctx, pdf_array_get(ctx, f, 1));
			rest_dp = pdf_is_array(ctx, dp) ? pdf_keep_obj(ctx, pdf_array_get(ctx, dp, 1)) : NULL;
		}
		else if (n > 2)
		{
			rest = pdf_new_array(ctx, doc, n - 1);
			for (i = 1; i < n; i++)
				pdf_array_push(ctx, rest, pdf_array_get(ctx, f, i));
			if (pdf_is_array(ctx, dp))
			{
				rest_dp = pdf_new_array(ctx, doc, n - 1);
				for (i = 1; i < n; i++)
					pdf_array_push(ctx, rest_dp, pdf_array_get(ctx, dp, i));
			}
		}
		/* compressed=1: the bytes are stored as given, under the filters set here. */
		pdf_update_stream(ctx, doc, ref, buf, 1);
		if (rest)
			pdf_dict_put(ctx, ref, PDF_NAME(Filter), rest);
		else
			pdf_dict_del(ctx, ref, PDF_NAME(Filter));
		if (rest_dp && !pdf_is_null(ctx, rest_dp))
			pdf_dict_put(ctx, ref, PDF_NAME(DecodeParms), rest_dp);
		else
			pdf_dict_del(ctx, ref, PDF_NAME(DecodeParms));
	}
	fz_always(ctx)
	{
		pdf_drop_obj(ctx, rest_dp);
		pdf_drop_obj(ctx, rest);
		fz_drop_buffer(ctx, buf);
		fz_drop_stream(ctx, stm);
		fz_drop_stream(ctx, raw);
		pdf_drop_obj(ctx, ref);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
}

/* Flate streams are re-deflated at level 9 when that is smaller (qpdf
 * --recompress-flate does the same), the deflating spread over the cores: the MuPDF
 * context stays on the calling thread, which inflates each stream and writes the
 * results back; the workers only deflate plain memory. Level 9 on one thread was
 * most of the run on small files (chart-slanted-text.pdf: 63%).
 *
 * Which deflater: libdeflate (level 9) for everything but images, zlib-rs (level 9,
 * through options->deflate_pixels) for images. On the 847 flate streams of
 * geotopo-117-pages.pdf (content streams and fonts, 6.6 MB inflated) libdeflate 9 gave
 * 926,788 bytes in 115 ms, zlib 9 954,816 bytes in 196 ms (zlib-rs 9: 958,779 in 97
 * ms); libdeflate's levels 10-12 (optimal parsing) were 3x slower still. On pixels the
 * longer match chains of zlib and zlib-rs win: chart-slanted-text.pdf's chart image is
 * 36,163 bytes with zlib-rs 9, 36,967 with zlib 9, 38,039 with libdeflate 9. Over the
 * 18 inflated forms of the corpus's 14 flate images of 64 KB and more (with and without
 * their PNG predictor) zlib-rs 9 wrote 2,972,898 bytes against zlib 9's 3,014,390,
 * smaller on 16 and equal on 2, and in less time on the large ones (the 2400-dpi
 * typewriter scan 0.83 against 2.05 s, a 1.4 MB scan 0.16-0.21 against 0.50-0.60 s):
 * see docs/render.md. zlib is kept as the fallback. zlib-rs runs level 9 with a nice
 * match length of 128 instead of 258 (deflateTune; PIXEL_NICE_MATCH in
 * pagework/compress/ffi.rs): the chart 36,109 bytes in 17 ms instead of 36,163 in 26. */
typedef struct
{
	int num;
	fz_buffer *buf;       /* the inflated data, predictor (if any) kept */
	fz_buffer *plain;     /* the same with the PNG predictor undone, or NULL */
	unsigned char *out;   /* deflated buf (malloc), NULL when zlib failed */
	unsigned long out_len;
	unsigned char *out2;  /* deflated plain */
	unsigned long out2_len;
	int pixels;           /* an image: zlib-rs (zlib as fallback), not libdeflate */
} deflate_job;

/* MuPDF's bundled zlib (libmupdf-third). */
extern int compress2(unsigned char *dest, unsigned long *dest_len, const unsigned char *source, unsigned long source_len, int level);
extern unsigned long compressBound(unsigned long source_len);

/* `in` deflated at level 9 (zlib format): pixels by `px` (zlib when it is NULL or
 * fails), the rest by libdeflate with `ld` (NULL when it could not be allocated: zlib
 * then); NULL on failure. */
static unsigned char *deflate_best(const fz_buffer *in, int pixels, struct libdeflate_compressor *ld, pixel_deflater px, unsigned long *len)
{
	unsigned long cap;
	unsigned char *out;
	if (pixels && px)
	{
		cap = compressBound((unsigned long)in->len);
		out = malloc(cap);
		*len = out ? (unsigned long)px(in->data, in->len, out, cap) : 0;
		if (*len)
			return out;
		free(out);
	}
	else if (!pixels && ld)
	{
		size_t bound = libdeflate_zlib_compress_bound(ld, in->len);
		out = malloc(bound);
		*len = out ? (unsigned long)libdeflate_zlib_compress(ld, in->data, in->len, out, bound) : 0;
		if (out && *len == 0)
		{
			free(out);
			out = NULL;
		}
		return out;
	}
	cap = compressBound((unsigned long)in->len);
	out = malloc(cap);
	*len = cap;
	if (out && compress2(out, len, in->data, (unsigned long)in->len, 9) != 0)
	{
		free(out);
		out = NULL;
	}
	return out;
}

/* The deflates of one batch, run while the batch is still being prepared: the calling
 * thread inflates streams (MuPDF, one context) and publishes each half of a job as soon as
 * it is ready; a helper thread deflates what is published (plain memory, no MuPDF), and the
 * calling thread joins in once the batch is complete. Before, every job of a batch was
 * prepared first and only then deflated (chart-slanted-text.pdf: its image's stored form
 * waited for the un-predicting of the other form). */
typedef struct
{
	deflate_job *jobs;
	int ready;      /* items published: 2k is job k as stored, 2k + 1 without its predictor */
	int next;       /* the next item to deflate */
	int closed;     /* the batch is complete: nothing more will be published */
	int helped;     /* the helper thread runs */
	pthread_t helper;
	pthread_mutex_t lock;
	pthread_cond_t more;
	pixel_deflater px;
} deflate_queue;

/* Deflates published items until the batch is closed and every item taken. Items are
 * the jobs' halves, so a single large predicted stream still uses two threads. */
static void *deflate_worker(void *arg)
{
	deflate_queue *q = arg;
	/* One libdeflate compressor per thread (it holds its own tables). */
	struct libdeflate_compressor *ld = libdeflate_alloc_compressor(9);
	for (;;)
	{
		deflate_job *j;
		int item;
		pthread_mutex_lock(&q->lock);
		while (q->next >= q->ready && !q->closed)
			pthread_cond_wait(&q->more, &q->lock);
		item = q->next < q->ready ? q->next++ : -1;
		pthread_mutex_unlock(&q->lock);
		if (item < 0)
			break;
		j = &q->jobs[item / 2];
		if (item % 2 == 0)
			j->out = deflate_best(j->buf, j->pixels, ld, q->px, &j->out_len);
		else if (j->plain)
			j->out2 = deflate_best(j->plain, j->pixels, ld, q->px, &j->out2_len);
	}
	if (ld)
		libdeflate_free_compressor(ld);
	return NULL;
}

/* Item `item` (and every one before it) is ready; the first of a batch starts the helper. */
static void deflate_publish(deflate_queue *q, int item)
{
	pthread_mutex_lock(&q->lock);
	q->ready = item + 1;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	if (!q->helped)
		q->helped = pthread_create(&q->helper, NULL, deflate_worker, q) == 0;
}

/* Closes the batch, deflates what is left on this thread beside the helper, and waits
 * for the helper: every published item is deflated when this returns. */
static void deflate_finish(deflate_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = 1;
	pthread_cond_broadcast(&q->more);
	pthread_mutex_unlock(&q->lock);
	deflate_worker(q);
	if (q->helped)
		pthread_join(q->helper, NULL);
	q->helped = 0;
	q->ready = q->next = q->closed = 0;
}

/* The job of stream `num` when its only filter is FlateDecode and it inflates cleanly,
 * in `slot` of the batch, its two items published to `q` as they are ready; 0 otherwise
 * (the stream is kept as it is, nothing published). */
static int deflate_job_of(fz_context *ctx, pdf_document *doc, int num, deflate_job *job, deflate_queue *q, int slot)
{
	pdf_obj *ref = NULL;
	fz_stream *stm = NULL, *raw = NULL;
	fz_buffer *buf = NULL;
	int ok = 0;
	fz_var(ok);
	fz_var(ref);
	fz_var(stm);
	fz_var(raw);
	fz_var(buf);
	memset(job, 0, sizeof *job);
	fz_try(ctx)
	{
		pdf_obj *f, *type, *dp;
		int truncated = 0, predictor;
		if (!pdf_obj_num_is_stream(ctx, doc, num))
			break;
		ref = pdf_new_indirect(ctx, doc, num, 0);
		f = pdf_dict_get(ctx, ref, PDF_NAME(Filter));
		if (pdf_is_array(ctx, f) && pdf_array_len(ctx, f) == 1)
			f = pdf_array_get(ctx, f, 0);
		type = pdf_dict_get(ctx, ref, PDF_NAME(Type));
		if ((f != PDF_NAME(FlateDecode) && f != PDF_NAME(Fl)) ||
			type == PDF_NAME(XRef) || type == PDF_NAME(ObjStm) || type == PDF_NAME(Metadata))
			break;
		/* Undo only the deflate layer: predictor-encoded data (DecodeParms) stays as
		 * it is, with its parameters. The document is not encrypted (checked by the
		 * caller), so the raw stream is the deflated bytes. */
		raw = pdf_open_raw_stream_number(ctx, doc, num);
		stm = fz_open_flated(ctx, raw, 15);
		buf = fz_read_best(ctx, stm, 0, &truncated, RECOMPRESS_CAP);
		/* fz_read turns a zlib error into a warning and an early end (stm->error):
		 * re-deflating what was read would replace damaged data, which other readers
		 * may still decode, with less (pdf20-utf8-test.pdf's image became empty). */
		if (truncated || stm->error)
			break;
		dp = pdf_dict_get(ctx, ref, PDF_NAME(DecodeParms));
		if (pdf_is_array(ctx, dp) && pdf_array_len(ctx, dp) == 1)
			dp = pdf_array_get(ctx, dp, 0);
		predictor = pdf_dict_get_int(ctx, dp, PDF_NAME(Predictor));
		job->num = num;
		job->pixels = pdf_dict_get(ctx, ref, PDF_NAME(Subtype)) == PDF_NAME(Image);
		job->buf = buf;
		buf = NULL;
		ok = 1;
		/* The stored form is deflated from here on, beside the un-predicting. Nothing
		 * below fails but on a system error (unpredicted() catches the others), and after
		 * one the caller waits for the helper, then frees every slot, this one included. */
		deflate_publish(q, 2 * slot);
		/* A PNG predictor is dropped when the data deflates smaller without it (qpdf
		 * does the same; chart-slanted-text.pdf's chart image: 37,338 bytes with its
		 * predictor, 36,967 without). */
		if (pdf_is_dict(ctx, dp) && predictor >= 10 && predictor <= 15)
			job->plain = unpredicted(ctx, job->buf, dp, predictor);
		deflate_publish(q, 2 * slot + 1);
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, buf);
		fz_drop_stream(ctx, stm);
		fz_drop_stream(ctx, raw);
		pdf_drop_obj(ctx, ref);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
		ok = 0;
	}
	return ok;
}

/* Writes a deflated job back when smaller than the stream's stored bytes, and frees it. */
static void deflate_job_apply(fz_context *ctx, pdf_document *doc, deflate_job *j)
{
	pdf_obj *ref = NULL;
	fz_buffer *data = NULL;
	fz_var(ref);
	fz_var(data);
	fz_try(ctx)
	{
		int64_t stored;
		ref = pdf_new_indirect(ctx, doc, j->num, 0);
		stored = pdf_dict_get_int64(ctx, ref, PDF_NAME(Length));
		if (j->out2 && (!j->out || j->out2_len < j->out_len) && (int64_t)j->out2_len < stored)
		{
			data = fz_new_buffer_from_copied_data(ctx, j->out2, j->out2_len);
			pdf_update_stream(ctx, doc, ref, data, 1);
			pdf_dict_del(ctx, ref, PDF_NAME(DecodeParms));
		}
		else if (j->out && (int64_t)j->out_len < stored)
		{
			data = fz_new_buffer_from_copied_data(ctx, j->out, j->out_len);
			pdf_update_stream(ctx, doc, ref, data, 1);
		}
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, data);
		pdf_drop_obj(ctx, ref);
		fz_drop_buffer(ctx, j->buf);
		fz_drop_buffer(ctx, j->plain);
		free(j->out);
		free(j->out2);
		memset(j, 0, sizeof *j);
	}
	fz_catch(ctx)
	{
		/* keep the stream as it was */
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
}

/* Inflated bytes held at once: the jobs are deflated in batches of about this much. */
#define DEFLATE_BATCH ((size_t)64 << 20)

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
static void drop_unreachable(fz_context *ctx, pdf_document *doc, engine_dict_visit visit)
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

/* Takes the ASCII layer off every stream and re-deflates the flate ones (not the images
 * the engine's pass wrote), in batches. */
static void recompress_streams(engine_cz *z, pixel_deflater px)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	int i, n = pdf_xref_len(ctx, doc), count = 0, cap = 64;
	size_t held = 0;
	/* Zeroed: on an exception every slot is freed, the one being filled included. */
	deflate_job *jobs = fz_calloc(ctx, cap, sizeof *jobs);
	deflate_queue q = { .jobs = jobs, .px = px };
	pthread_mutex_init(&q.lock, NULL);
	pthread_cond_init(&q.more, NULL);
	fz_try(ctx)
	{
		for (i = 1; i <= n; i++)
		{
			if (i < n && !engine_cz_written(z, i))
			{
				strip_ascii_layer(ctx, doc, i);
				if (deflate_job_of(ctx, doc, i, &jobs[count], &q, count))
				{
					held += jobs[count].buf->len + (jobs[count].plain ? jobs[count].plain->len : 0);
					count++;
				}
			}
			if (count && (i == n || count == cap || held >= DEFLATE_BATCH))
			{
				int k;
				deflate_finish(&q);
				for (k = 0; k < count; k++)
					deflate_job_apply(ctx, doc, &jobs[k]);
				count = 0;
				held = 0;
			}
		}
	}
	fz_always(ctx)
	{
		/* No helper may still read a buffer freed below. */
		if (q.helped)
			deflate_finish(&q);
		pthread_cond_destroy(&q.more);
		pthread_mutex_destroy(&q.lock);
		for (i = 0; i < cap; i++)
		{
			fz_drop_buffer(ctx, jobs[i].buf);
			fz_drop_buffer(ctx, jobs[i].plain);
			free(jobs[i].out);
			free(jobs[i].out2);
		}
		fz_free(ctx, jobs);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
}

/* The trailer's /ID made a function of its first string (kept: an encrypted file's key
 * depends on it): MuPDF's save puts random bytes in the second, which the xref stream
 * then deflates to a byte more or less, so two levels with nothing to do apart came out
 * a byte apart either way (scanned-rotated-4-directions.pdf: balanced 73,211 bytes,
 * light 73,210 in one run). The save is then told not to change it. */
static void settle_identity(fz_context *ctx, pdf_document *doc)
{
	pdf_obj *id = pdf_dict_get(ctx, pdf_trailer(ctx, doc), PDF_NAME(ID));
	unsigned char digest[16];
	const char *first;
	size_t n = 0;
	fz_md5 md5;
	if (!pdf_is_array(ctx, id) || pdf_array_len(ctx, id) < 2)
		return;
	first = pdf_to_string(ctx, pdf_array_get(ctx, id, 0), &n);
	fz_md5_init(&md5);
	fz_md5_update(&md5, (const unsigned char *)first, n);
	fz_md5_update(&md5, (const unsigned char *)"compressed", 10);
	fz_md5_final(&md5, digest);
	pdf_array_put_string(ctx, id, 1, (const char *)digest, sizeof digest);
}

/* Opens `input` into a new handle. Returns ENGINE_OK (then *out is set; close it with
 * engine_cz_close), ENGINE_OPEN_FAILED, ENGINE_NEEDS_PASSWORD or ENGINE_NO_CONTEXT. */
int engine_cz_open(const char *input, engine_cz **out, int *page_count, char *err, int errlen)
{
	fz_context *ctx = engine_new_private_context(FZ_STORE_DEFAULT);
	pdf_document *doc = NULL;
	engine_cz *z = NULL;
	int rc = ENGINE_OK;
	*out = NULL;
	if (!ctx)
		return ENGINE_NO_CONTEXT;
	/* As the mupdf crate's contexts: MuPDF's warnings (damaged files) are not printed. */
	fz_set_warning_callback(ctx, NULL, NULL);
	fz_set_error_callback(ctx, NULL, NULL);
	fz_var(doc);
	fz_var(z);
	fz_try(ctx)
	{
		doc = pdf_open_document(ctx, input);
		if (pdf_needs_password(ctx, doc))
			rc = ENGINE_NEEDS_PASSWORD;
		else
		{
			*page_count = pdf_count_pages(ctx, doc);
			z = fz_malloc_struct(ctx, engine_cz);
			z->ctx = ctx;
			z->doc = doc;
			z->path = fz_strdup(ctx, input);
		}
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_OPEN_FAILED;
	}
	if (!z)
	{
		fz_drop_document(ctx, (fz_document *)doc);
		fz_drop_context(ctx);
		return rc;
	}
	*out = z;
	return ENGINE_OK;
}

void engine_cz_close(engine_cz *z)
{
	fz_context *ctx;
	if (!z)
		return;
	ctx = z->ctx;
	engine_cz_drop_candidates(z);
	fz_drop_document(ctx, (fz_document *)z->doc);
	fz_free(ctx, z->path);
	fz_free(ctx, z);
	fz_drop_context(ctx);
}

static void rewrite_images(fz_context *ctx, pdf_document *doc, void *opaque)
{
	engine_compress_options *o = opaque;
	pdf_image_rewriter_options r;
	char q[8];
	memset(&r, 0, sizeof r);
	snprintf(q, sizeof q, "%d", o->jpeg_quality);
	/* Colour and grey images get the same settings. Images stored losslessly
	 * (flate: often synthetic, flat colour) stay lossless when
	 * lossless_stays_lossless is set: a downsampled flat image deflates far
	 * smaller than it JPEG-encodes. */
#define SET_FAMILY(fam) do { \
		r.fam##_lossless_image_subsample_method = FZ_SUBSAMPLE_BICUBIC; \
		r.fam##_lossy_image_subsample_method = FZ_SUBSAMPLE_BICUBIC; \
		r.fam##_lossless_image_subsample_threshold = o->threshold_dpi; \
		r.fam##_lossless_image_subsample_to = o->target_dpi; \
		r.fam##_lossy_image_subsample_threshold = o->threshold_dpi; \
		r.fam##_lossy_image_subsample_to = o->target_dpi; \
		r.fam##_lossless_image_recompress_method = \
			o->lossless_stays_lossless ? FZ_RECOMPRESS_LOSSLESS : FZ_RECOMPRESS_JPEG; \
		r.fam##_lossy_image_recompress_method = FZ_RECOMPRESS_JPEG; \
		r.fam##_lossy_image_recompress_quality = q; \
		r.fam##_lossless_image_recompress_quality = q; \
	} while (0)
	SET_FAMILY(color);
	SET_FAMILY(gray);
#undef SET_FAMILY
	/* Bitonal scans stay bitonal and lossless: never subsampled, re-encoded
	 * as CCITT G4 only when that is smaller. */
	r.bitonal_image_subsample_method = FZ_SUBSAMPLE_AVERAGE;
	r.bitonal_image_subsample_threshold = 0;
	r.bitonal_image_subsample_to = 0;
	r.bitonal_image_recompress_method = FZ_RECOMPRESS_FAX;
	r.recompress_when = FZ_RECOMPRESS_WHEN_SMALLER;
	pdf_rewrite_images(ctx, doc, &r);
}

/* Runs MuPDF's image rewriter over the images the engine's pass left (all of them when
 * there was no pass), the structural clean-up, and saves to `output`. Returns ENGINE_OK
 * or ENGINE_FAILED (message in err). */
int engine_cz_finish(engine_cz *z, const char *output, engine_compress_options *o, char *err, int errlen)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	int rc = ENGINE_OK;
	fz_var(rc);
	fz_try(ctx)
	{
		pdf_write_options w;
		o->page_count = pdf_count_pages(ctx, doc);
		o->rewriter_ran = 0;
		o->fonts_subset = 0;
		/* Lossless, so at every level (compress_colorspace.c); before the palettes are
		 * flattened, which only a tint transform left large warrants. */
		if (!doc->crypt)
			engine_cz_reduce_sampled_functions(ctx, doc);
		if (o->rewrite_images)
		{
			/* The rewriter filters every page's content and rewrites its resources,
			 * which damages some files: it runs on a second opening and only its
			 * new images are copied over; the caller still checks the output. */
			if (!o->skip_rewriter && engine_cz_needs_rewriter(z))
			{
				o->rewriter_ran = 1;
				if (o->rewrite_in_place)
					rewrite_images(ctx, doc, o);
				else
					engine_cz_isolated_rewrite(z, rewrite_images, o);
			}
			/* The print-condition ICC profiles of PDF/X and PDF/A (/OutputIntents,
			 * often several hundred KB) are dropped, as Ghostscript's presets do;
			 * the pages' own colour spaces are kept. */
			pdf_dict_del(ctx, pdf_dict_get(ctx, pdf_trailer(ctx, doc), PDF_NAME(Root)), PDF_NAME(OutputIntents));
			/* Spot colours of indexed palettes become process colours, as those presets
			 * convert them too (compress_colorspace.c); after the rewriter, whose new
			 * images may carry copies of such palettes. */
			if (!doc->crypt)
				engine_cz_flatten_spot_palettes(ctx, doc);
		}
		if (o->drop_private && !doc->crypt)
			engine_cz_slim_metadata(ctx, doc);
		/* One walk drops the private keys (lossy levels) and then what is unreachable,
		 * including what only those keys led to. */
		drop_unreachable(ctx, doc, o->drop_private ? drop_private_keys : NULL);
		/* New font programs are stored unfiltered and deflated by the save below at
		 * the highest level. Encrypted documents are left alone (their streams would
		 * have to be re-encrypted). */
		if (o->subset_fonts && !doc->crypt)
		{
			o->fonts_subset = subset_fonts(ctx, doc);
			o->fonts_subset |= engine_cz_convert_type1(ctx, doc) > 0;
		}
		if (o->recompress_flate)
			deflate_metadata(ctx, doc, o->drop_private);
		if (o->recompress_flate && !doc->crypt)
			recompress_streams(z, o->deflate_pixels);
		pdf_parse_write_options(ctx, &w, "compress=yes,compress-fonts=yes,compress-images=yes");
		w.do_garbage = o->garbage;
		/* Duplicates merged here by hash; the save's own merge (garbage 3 and 4) compares
		 * every pair of objects. Not for encrypted files, whose raw stream bytes are
		 * encrypted per object. */
		if (o->garbage >= 3 && !doc->crypt)
		{
			engine_cz_merge_icc_profiles(ctx, doc);
			engine_cz_merge_duplicates(ctx, doc);
			w.do_garbage = 2;
		}
		w.do_use_objstms = o->object_streams;
		w.do_encrypt = PDF_ENCRYPT_KEEP;
		/* What the save deflates (object streams, unfiltered streams, new font
		 * programs) at zlib level 9, as qpdf --compression-level=9. */
		w.compression_effort = 100;
		settle_identity(ctx, doc);
		w.dont_regenerate_id = 1;
		pdf_save_document(ctx, doc, output, &w);
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		rc = ENGINE_FAILED;
	}
	return rc;
}
