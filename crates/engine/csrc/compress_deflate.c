/* Streams re-deflated at the best level, over the cores, and the ASCII layer taken off
 * every stream (engine_cz_recompress_streams, the lossless levels' stream pass). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
/* zlib-rs's copy of zlib.h (the libz-rs-sys crate's include directory): z_stream and the
 * constants. Its functions are called by the names libz-rs-sys exports them under (its
 * `semver-prefix` feature: ENGINE_ZRS_PREFIX, set by build.rs), which do not meet those
 * of MuPDF's bundled zlib. */
#include "zlib.h"
#include "compressor.h"

#define ENGINE_PASTE2(a, b) a##b
#define ENGINE_PASTE(a, b) ENGINE_PASTE2(a, b)
#define ZRS(name) ENGINE_PASTE(ENGINE_ZRS_PREFIX, name)
extern int ZRS(deflateInit2_)(z_streamp strm, int level, int method, int window_bits, int mem_level, int strategy,
	const char *version, int stream_size);
extern int ZRS(deflateTune)(z_streamp strm, int good_length, int max_lazy, int nice_length, int max_chain);
extern int ZRS(deflate)(z_streamp strm, int flush);
extern int ZRS(deflateEnd)(z_streamp strm);

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
 * other filter is then deflated by engine_cz_recompress_streams. qpdf does the same by default
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
 * engine_deflate_pixels) for images. On the 847 flate streams of
 * geotopo-117-pages.pdf (content streams and fonts, 6.6 MB inflated) libdeflate 9 gave
 * 926,788 bytes in 115 ms, zlib 9 954,816 bytes in 196 ms (zlib-rs 9: 958,779 in 97
 * ms); libdeflate's levels 10-12 (optimal parsing) were 3x slower still. On pixels the
 * longer match chains of zlib and zlib-rs win: chart-slanted-text.pdf's chart image is
 * 36,163 bytes with zlib-rs 9, 36,967 with zlib 9, 38,039 with libdeflate 9. Over the
 * 18 inflated forms of the corpus's 14 flate images of 64 KB and more (with and without
 * their PNG predictor) zlib-rs 9 wrote 2,972,898 bytes against zlib 9's 3,014,390,
 * smaller on 16 and equal on 2, and in less time on the large ones (the 2400-dpi
 * typewriter scan 0.83 against 2.05 s, a 1.4 MB scan 0.16-0.21 against 0.50-0.60 s):
 * see docs/compress.md. zlib is kept as the fallback. zlib-rs runs level 9 with a nice
 * match length of 128 instead of 258 (deflateTune, PIXEL_NICE_MATCH below): the chart
 * 36,109 bytes in 17 ms instead of 36,163 in 26. */
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

/* The match length at which engine_deflate_pixels stops looking for a longer match (zlib's
 * `nice_length`; 258 at level 9). Measured on chart-slanted-text.pdf's 1.15 MB chart,
 * plain / with its PNG predictor: 258: 36,163 / 36,490 bytes in 26 / 27 ms; 192: 36,049 /
 * 36,374 in 21 / 23; 128: 36,109 / 36,451 in 17 / 18; 96: 36,194 / 36,551 in 15 / 16 (a
 * shorter chain instead: 2048 +0.3%, 1024 +2%). Pixel rows repeat the row above for long
 * runs, where level 9 walks its whole chain for a longer match that hardly pays. */
#define PIXEL_NICE_MATCH 128

size_t engine_deflate_pixels(const unsigned char *in, size_t len, unsigned char *out, size_t cap)
{
	z_stream s;
	size_t written;
	if (!in || !out || len > 0xffffffffu)
		return 0;
	/* Zeroed: no allocator set, zlib-rs's own. */
	memset(&s, 0, sizeof s);
	if (ZRS(deflateInit2_)(&s, 9, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, (int)sizeof s) != Z_OK)
		return 0;
	ZRS(deflateTune)(&s, 32, 258, PIXEL_NICE_MATCH, 4096);
	s.next_in = (unsigned char *)in;
	s.avail_in = (unsigned int)len;
	s.next_out = out;
	s.avail_out = cap > 0xffffffffu ? 0xffffffffu : (unsigned int)cap;
	written = ZRS(deflate)(&s, Z_FINISH) == Z_STREAM_END ? (size_t)s.total_out : 0;
	ZRS(deflateEnd)(&s);
	return written;
}

/* `in` deflated at level 9 (zlib format): pixels by zlib-rs (MuPDF's bundled zlib when
 * that fails), the rest by libdeflate with `ld` (NULL when it could not be allocated:
 * zlib then); NULL on failure. compress2 and compressBound are MuPDF's zlib's
 * (libmupdf-third), declared by zlib.h under their own names. */
static unsigned char *deflate_best(const fz_buffer *in, int pixels, struct libdeflate_compressor *ld, unsigned long *len)
{
	unsigned long cap;
	unsigned char *out;
	if (pixels)
	{
		cap = compressBound((unsigned long)in->len);
		out = malloc(cap);
		*len = out ? (unsigned long)engine_deflate_pixels(in->data, in->len, out, cap) : 0;
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
			j->out = deflate_best(j->buf, j->pixels, ld, &j->out_len);
		else if (j->plain)
			j->out2 = deflate_best(j->plain, j->pixels, ld, &j->out2_len);
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

/* Takes the ASCII layer off every stream and re-deflates the flate ones (not the images
 * the engine's pass wrote), in batches. */
void engine_cz_recompress_streams(engine_cz *z)
{
	fz_context *ctx = z->ctx;
	pdf_document *doc = z->doc;
	int i, n = pdf_xref_len(ctx, doc), count = 0, cap = 64;
	size_t held = 0;
	/* Zeroed: on an exception every slot is freed, the one being filled included. */
	deflate_job *jobs = fz_calloc(ctx, cap, sizeof *jobs);
	deflate_queue q = { .jobs = jobs };
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
