/* Duplicate objects merged before the save, by hash: what MuPDF's writer does at
 * garbage level 4, without its cost. Its removeduplicateobjs compares every object with
 * every earlier one (and loads both streams from the file for each pair of streams with
 * equal dictionaries), again after every round that merged something: on the 117-page
 * geotopo-117-pages.pdf that was 29% of the balanced run. Here each object is hashed once
 * per round (a stream's bytes only when another stream has the same dictionary), objects
 * are compared with MuPDF's own pdf_objcmp_deep only within a hash group, and references
 * to a duplicate are pointed at the lowest-numbered equal object, as MuPDF does; the
 * duplicates are then unreferenced and the save's garbage collection drops them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "compressor.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;
	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ^ n;
}

/* Equal objects (pdf_objcmp_deep without the stream bytes) hash equal: a dictionary's
 * entries are summed, as MuPDF compares unsorted dictionaries in any order. */
static uint64_t hash_obj(fz_context *ctx, pdf_obj *obj, int depth)
{
	int i, n;
	uint64_t h;
	if (depth > 100)
		return 2;
	if (pdf_is_indirect(ctx, obj))
		return mix(3, ((uint64_t)(uint32_t)pdf_to_num(ctx, obj) << 16) ^ (uint64_t)pdf_to_gen(ctx, obj));
	if (!obj || pdf_is_null(ctx, obj))
		return 4;
	if (pdf_is_bool(ctx, obj))
		return 5 + pdf_to_bool(ctx, obj);
	if (pdf_is_int(ctx, obj))
		return mix(6, (uint64_t)pdf_to_int64(ctx, obj));
	if (pdf_is_real(ctx, obj))
	{
		float f = pdf_to_real(ctx, obj);
		uint32_t bits;
		if (f == 0)
			f = 0; /* -0 compares equal to 0 */
		memcpy(&bits, &f, sizeof bits);
		return mix(7, bits);
	}
	if (pdf_is_name(ctx, obj))
	{
		const char *s = pdf_to_name(ctx, obj);
		return mix(8, hash_bytes((const unsigned char *)s, strlen(s)));
	}
	if (pdf_is_string(ctx, obj))
		return mix(9, hash_bytes((const unsigned char *)pdf_to_str_buf(ctx, obj), pdf_to_str_len(ctx, obj)));
	if (pdf_is_array(ctx, obj))
	{
		n = pdf_array_len(ctx, obj);
		h = 10;
		for (i = 0; i < n; i++)
			h = mix(h, hash_obj(ctx, pdf_array_get(ctx, obj, i), depth + 1));
		return mix(h, (uint64_t)n);
	}
	if (pdf_is_dict(ctx, obj))
	{
		uint64_t sum = 0;
		n = pdf_dict_len(ctx, obj);
		for (i = 0; i < n; i++)
			sum += mix(hash_obj(ctx, pdf_dict_get_key(ctx, obj, i), depth + 1),
				hash_obj(ctx, pdf_dict_get_val(ctx, obj, i), depth + 1));
		return mix(mix(11, sum), (uint64_t)n);
	}
	return 12;
}

typedef struct
{
	uint64_t hash;
	int num;
} entry;

static int by_hash(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->num - y->num;
}

/* Points every reference to a duplicate inside `obj` (not following references) at the
 * object it duplicates. */
static void redirect(fz_context *ctx, pdf_document *doc, pdf_obj *obj, const int *map, int len, int depth)
{
	int i, n;
	if (depth > 100 || pdf_is_indirect(ctx, obj))
		return;
	if (pdf_is_array(ctx, obj))
	{
		n = pdf_array_len(ctx, obj);
		for (i = 0; i < n; i++)
		{
			pdf_obj *v = pdf_array_get(ctx, obj, i);
			int num = pdf_is_indirect(ctx, v) ? pdf_to_num(ctx, v) : 0;
			if (num > 0 && num < len && map[num])
				pdf_array_put_drop(ctx, obj, i, pdf_new_indirect(ctx, doc, map[num], 0));
			else
				redirect(ctx, doc, v, map, len, depth + 1);
		}
	}
	else if (pdf_is_dict(ctx, obj))
	{
		n = pdf_dict_len(ctx, obj);
		for (i = 0; i < n; i++)
		{
			pdf_obj *v = pdf_dict_get_val(ctx, obj, i);
			int num = pdf_is_indirect(ctx, v) ? pdf_to_num(ctx, v) : 0;
			if (num > 0 && num < len && map[num])
				pdf_dict_put_drop(ctx, obj, pdf_dict_get_key(ctx, obj, i), pdf_new_indirect(ctx, doc, map[num], 0));
			else
				redirect(ctx, doc, v, map, len, depth + 1);
		}
	}
}

/* Loads object `num` (a new reference); NULL when it does not exist, is null or fails
 * to load. */
static pdf_obj *load(fz_context *ctx, pdf_document *doc, int num)
{
	pdf_obj *obj = NULL;
	fz_var(obj);
	fz_try(ctx)
	{
		if (pdf_object_exists(ctx, doc, num))
			obj = pdf_load_object(ctx, doc, num);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
		obj = NULL;
	}
	if (obj && pdf_is_null(ctx, obj))
	{
		pdf_drop_obj(ctx, obj);
		obj = NULL;
	}
	return obj;
}

/* The hash of stream `num`'s stored bytes; its number when they cannot be read (then
 * it equals nothing). */
static uint64_t stream_bytes_hash(fz_context *ctx, pdf_document *doc, int num)
{
	fz_buffer *buf = NULL;
	uint64_t h = (uint64_t)num;
	fz_var(buf);
	fz_var(h);
	fz_try(ctx)
	{
		buf = pdf_load_raw_stream_number(ctx, doc, num);
		h = hash_bytes(buf->data, buf->len);
	}
	fz_always(ctx)
		fz_drop_buffer(ctx, buf);
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return h;
}

/* MuPDF's own deep comparison (stream bytes included); unequal when it fails. */
static int same_object(fz_context *ctx, pdf_obj *a, pdf_obj *b)
{
	int same = 0;
	fz_var(same);
	fz_try(ctx)
		same = pdf_objcmp_deep(ctx, a, b) == 0;
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
	return same;
}

/* One round: returns how many objects were found to duplicate an earlier one. Objects
 * merged away by an earlier round (`gone`, set here for this round's) are left out:
 * nothing refers to them any more, and counting them again kept every file at the
 * 32-round cap (geotopo-117-pages.pdf: 32 rounds of 3,725 objects, 80 ms, for the 32
 * duplicates of the first). */
static int merge_round(fz_context *ctx, pdf_document *doc, uint64_t *stream_hash, unsigned char *stream_hashed, unsigned char *gone)
{
	int len = pdf_xref_len(ctx, doc);
	pdf_obj **objs = fz_calloc(ctx, len, sizeof *objs);
	entry *e = NULL;
	int *map = NULL;
	int count = 0, merged = 0, i, j, k;
	fz_var(e);
	fz_var(map);
	fz_try(ctx)
	{
		e = fz_malloc(ctx, (size_t)len * sizeof *e);
		map = fz_calloc(ctx, len, sizeof *map);
		for (i = 1; i < len; i++)
		{
			pdf_obj *type;
			if (gone[i])
				continue;
			objs[i] = load(ctx, doc, i);
			if (!objs[i])
				continue;
			type = pdf_dict_get(ctx, objs[i], PDF_NAME(Type));
			/* Never pages (as MuPDF), nor the writer's own structures. */
			if (type == PDF_NAME(Page) || type == PDF_NAME(XRef) || type == PDF_NAME(ObjStm))
				continue;
			e[count].hash = hash_obj(ctx, objs[i], 0) ^ (pdf_obj_num_is_stream(ctx, doc, i) ? 0x5bd1e995ULL : 0);
			e[count].num = i;
			count++;
		}
		qsort(e, count, sizeof *e, by_hash);
		/* Streams that share a dictionary hash with another: their bytes join the hash. */
		for (i = 0; i < count; i = j)
		{
			for (j = i + 1; j < count && e[j].hash == e[i].hash; j++)
				;
			if (j - i < 2)
				continue;
			for (k = i; k < j; k++)
			{
				int num = e[k].num;
				if (!pdf_obj_num_is_stream(ctx, doc, num))
					continue;
				if (!stream_hashed[num])
				{
					stream_hash[num] = stream_bytes_hash(ctx, doc, num);
					stream_hashed[num] = 1;
				}
				e[k].hash = mix(e[k].hash, stream_hash[num]);
			}
		}
		qsort(e, count, sizeof *e, by_hash);
		/* Within a group (sorted by number), each object is merged into the first
		 * earlier one it equals, which is not itself a duplicate. */
		for (i = 0; i < count; i = j)
		{
			for (j = i + 1; j < count && e[j].hash == e[i].hash; j++)
				;
			for (k = i + 1; k < j; k++)
			{
				int a = e[k].num, m;
				for (m = i; m < k; m++)
				{
					int b = e[m].num;
					if (!map[b] && same_object(ctx, objs[a], objs[b]))
					{
						map[a] = b;
						gone[a] = 1;
						merged++;
						break;
					}
				}
			}
		}
		if (merged)
		{
			for (i = 1; i < len; i++)
				if (objs[i] && !map[i])
					redirect(ctx, doc, objs[i], map, len, 0);
			redirect(ctx, doc, pdf_trailer(ctx, doc), map, len, 0);
		}
	}
	fz_always(ctx)
	{
		for (i = 1; i < len; i++)
			pdf_drop_obj(ctx, objs[i]);
		fz_free(ctx, objs);
		fz_free(ctx, e);
		fz_free(ctx, map);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
	return merged;
}

int engine_cz_merge_duplicates(fz_context *ctx, pdf_document *doc)
{
	int len = pdf_xref_len(ctx, doc), rounds, total = 0, merged;
	uint64_t *stream_hash = NULL;
	unsigned char *stream_hashed = NULL, *gone = NULL;
	fz_var(stream_hash);
	fz_var(stream_hashed);
	fz_var(gone);
	fz_try(ctx)
	{
		stream_hash = fz_calloc(ctx, len, sizeof *stream_hash);
		stream_hashed = fz_calloc(ctx, len, 1);
		gone = fz_calloc(ctx, len, 1);
		/* Merging dictionaries makes the dictionaries that point at them equal in turn
		 * (a font's descriptor, then the font): rounds until nothing merges. */
		for (rounds = 0; rounds < 32; rounds++)
		{
			merged = merge_round(ctx, doc, stream_hash, stream_hashed, gone);
			total += merged;
			if (!merged)
				break;
		}
	}
	fz_always(ctx)
	{
		fz_free(ctx, stream_hash);
		fz_free(ctx, stream_hashed);
		fz_free(ctx, gone);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
	return total;
}

/* ICC profiles equal but for the header's creation date and profile ID (bytes 24-35 and
 * 84-99) are one profile: applications that write one copy per image or page stamp each with
 * its time (test_2904.pdf from PyMuPDF's tests carries 20 copies of a 40 KB CMYK profile
 * differing only there, 713 KB of its 1.8 MB). The duplicates are pointed at the
 * lowest-numbered copy, as for byte-equal objects; colours are unchanged, since neither
 * field takes part in colour conversion. Profiles over 16 MiB are left alone. */
#define ICC_MAX_BYTES (16 << 20)

/* An ICCBased colour space's stream: /N, no /Type or /Subtype. */
static int looks_like_icc(fz_context *ctx, pdf_obj *dict)
{
	return pdf_is_int(ctx, pdf_dict_get(ctx, dict, PDF_NAME(N))) && !pdf_dict_get(ctx, dict, PDF_NAME(Type))
		&& !pdf_dict_get(ctx, dict, PDF_NAME(Subtype)) && !pdf_dict_get(ctx, dict, PDF_NAME(Length1));
}

/* The decoded profile with its date and ID zeroed; NULL when it is not an ICC profile. */
static fz_buffer *normalised_profile(fz_context *ctx, pdf_document *doc, int num)
{
	fz_buffer *buf = NULL;
	fz_var(buf);
	fz_try(ctx)
	{
		fz_buffer *stored = pdf_load_stream_number(ctx, doc, num);
		/* The stream's own buffer when it is held in memory unfiltered: changed on a copy. */
		if (stored->len >= 128 && stored->len <= ICC_MAX_BYTES && memcmp(stored->data + 36, "acsp", 4) == 0)
		{
			fz_try(ctx)
				buf = fz_new_buffer_from_copied_data(ctx, stored->data, stored->len);
			fz_always(ctx)
				fz_drop_buffer(ctx, stored);
			fz_catch(ctx)
				fz_rethrow(ctx);
			memset(buf->data + 24, 0, 12);
			memset(buf->data + 84, 0, 16);
		}
		else
			fz_drop_buffer(ctx, stored);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
		fz_drop_buffer(ctx, buf);
		buf = NULL;
	}
	return buf;
}

/* Same /N, /Alternate and /Range: the profile alone decides. */
static int same_icc_dict(fz_context *ctx, pdf_obj *a, pdf_obj *b)
{
	return pdf_objcmp(ctx, pdf_dict_get(ctx, a, PDF_NAME(N)), pdf_dict_get(ctx, b, PDF_NAME(N))) == 0
		&& pdf_objcmp(ctx, pdf_dict_get(ctx, a, PDF_NAME(Alternate)), pdf_dict_get(ctx, b, PDF_NAME(Alternate))) == 0
		&& pdf_objcmp(ctx, pdf_dict_get(ctx, a, PDF_NAME(Range)), pdf_dict_get(ctx, b, PDF_NAME(Range))) == 0;
}

int engine_cz_merge_icc_profiles(fz_context *ctx, pdf_document *doc)
{
	int len = pdf_xref_len(ctx, doc), count = 0, merged = 0, i, j, k;
	entry *e = NULL;
	fz_buffer **bytes = NULL; /* normalised profiles, by object number */
	int *map = NULL;
	fz_var(e);
	fz_var(bytes);
	fz_var(map);
	fz_try(ctx)
	{
		e = fz_calloc(ctx, len > 0 ? len : 1, sizeof *e);
		bytes = fz_calloc(ctx, len > 0 ? len : 1, sizeof *bytes);
		map = fz_calloc(ctx, len > 0 ? len : 1, sizeof *map);
		for (i = 1; i < len; i++)
		{
			pdf_obj *obj;
			if (!pdf_obj_num_is_stream(ctx, doc, i))
				continue;
			obj = load(ctx, doc, i);
			if (!obj || !looks_like_icc(ctx, obj) || !(bytes[i] = normalised_profile(ctx, doc, i)))
			{
				pdf_drop_obj(ctx, obj);
				continue;
			}
			pdf_drop_obj(ctx, obj);
			e[count].hash = hash_bytes(bytes[i]->data, bytes[i]->len);
			e[count].num = i;
			count++;
		}
		qsort(e, count, sizeof *e, by_hash);
		for (i = 0; i < count; i = j)
		{
			for (j = i + 1; j < count && e[j].hash == e[i].hash; j++)
				;
			for (k = i + 1; k < j; k++)
			{
				pdf_obj *a = pdf_load_object(ctx, doc, e[k].num), *b = pdf_load_object(ctx, doc, e[i].num);
				fz_buffer *x = bytes[e[k].num], *y = bytes[e[i].num];
				int same = x->len == y->len && memcmp(x->data, y->data, y->len) == 0 && same_icc_dict(ctx, a, b);
				pdf_drop_obj(ctx, a);
				pdf_drop_obj(ctx, b);
				if (same)
				{
					map[e[k].num] = e[i].num;
					merged++;
				}
			}
		}
		if (merged)
		{
			for (i = 1; i < len; i++)
			{
				pdf_obj *obj = map[i] ? NULL : load(ctx, doc, i);
				if (obj)
					redirect(ctx, doc, obj, map, len, 0);
				pdf_drop_obj(ctx, obj);
			}
			redirect(ctx, doc, pdf_trailer(ctx, doc), map, len, 0);
		}
	}
	fz_always(ctx)
	{
		for (i = 0; bytes && i < len; i++)
			fz_drop_buffer(ctx, bytes[i]);
		fz_free(ctx, bytes);
		fz_free(ctx, e);
		fz_free(ctx, map);
	}
	fz_catch(ctx)
		fz_rethrow(ctx);
	return merged;
}
