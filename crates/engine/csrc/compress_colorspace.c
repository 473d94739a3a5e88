/* Spot colours made cheap: sampled tint transforms that are multilinear stored by their
 * corners (every level, lossless), and indexed palettes over spot colours whose tint
 * transform stays large flattened to their process alternate (lossy levels).
 *
 * Multilinear tint transforms: print exports (InDesign via Distiller, PDF/X) store a DeviceN
 * space's tint transform as a sampled (type 0) function on a grid of 9 to 17 points per
 * colorant, 9^5 x 4 = 236 KB for CMYK and one spot colour, even where every sample is the
 * multilinear interpolation of the grid's corners (each colorant adding its own process
 * colour). A type 0 function of order 1 interpolates multilinearly between samples, so such a
 * grid and its 2^m corners define the same function, up to the rounding of the samples: when
 * every sample is within one sample unit of the corners' interpolation (each was rounded, the
 * corners too), the grid is replaced by its corners (what Ghostscript's pdfwrite writes too:
 * 96 bytes for that function).
 *
 * Indexed palettes over spot colours (lossy levels).
 *
 * An /Indexed colour space whose base is /Separation or /DeviceN keeps its palette in spot
 * components and needs the spot space's tint transform to show it: print exports (InDesign
 * via Distiller, PDF/X) often carry a sampled (type 0) tint transform of 5 inputs, tens to
 * hundreds of KB, for a palette of a hundred entries. Each palette entry is mapped here
 * through the tint transform, with MuPDF's own function evaluation (what a viewer does to
 * show it), into the alternate space (DeviceGray, DeviceRGB, DeviceCMYK, or ICCBased with
 * components in 0..1); the palette then indexes the alternate directly, and a tint
 * transform nothing else uses is dropped by the save's garbage collection. Images and
 * content keep their indices, so nothing else changes. On screen the colours are those
 * shown before, to 8-bit rounding; what is lost is the separation itself (a print shop's
 * spot plate), which is why only the lossy levels do it, as Ghostscript's pdfwrite presets
 * convert spot colours. Spaces naming the special colorants /All or /None (every plate, no
 * plate) are kept. */
#include <math.h>
#include <string.h>
#include "compressor.h"

/* Most work spent on one function (values x corners x inputs): about a second. */
#define MAX_GRID_WORK (256u << 20)

static unsigned read_bits(const unsigned char *p, size_t bit, int bps)
{
	unsigned v = 0;
	int i;
	if (bps == 8)
		return p[bit >> 3];
	if (bps == 16)
		return ((unsigned)p[bit >> 3] << 8) | p[(bit >> 3) + 1];
	for (i = 0; i < bps; i++, bit++)
		v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1);
	return v;
}

static void write_bits(unsigned char *p, size_t bit, int bps, unsigned v)
{
	int i;
	for (i = bps - 1; i >= 0; i--, bit++)
		if ((v >> i) & 1)
			p[bit >> 3] |= (unsigned char)(0x80 >> (bit & 7));
}

/* Replaces a multilinear sampled function's grid by its corners; returns 1 when it did. */
static int reduce_sampled(fz_context *ctx, pdf_document *doc, pdf_obj *ref)
{
	pdf_obj *size = pdf_dict_get(ctx, ref, PDF_NAME(Size));
	pdf_obj *encode = pdf_dict_get(ctx, ref, PDF_NAME(Encode));
	int m = pdf_array_len(ctx, size);
	int n = pdf_array_len(ctx, pdf_dict_get(ctx, ref, PDF_NAME(Range))) / 2;
	int bps = pdf_dict_get_int(ctx, ref, PDF_NAME(BitsPerSample));
	int dims[FZ_MAX_COLORS], i, j, k, done = 0;
	size_t samples = 1, corners, need, idx[FZ_MAX_COLORS];
	fz_buffer *data = NULL, *out = NULL;
	const unsigned char *p;

	if (m < 1 || m > 8 || n < 1 || n > FZ_MAX_COLORS || pdf_dict_get_int(ctx, ref, PDF_NAME(Order)) == 3)
		return 0;
	if (bps != 1 && bps != 2 && bps != 4 && bps != 8 && bps != 12 && bps != 16)
		return 0;
	for (i = 0; i < m; i++)
	{
		dims[i] = pdf_array_get_int(ctx, size, i);
		if (dims[i] < 2 || dims[i] > 4096)
			return 0;
		/* Only the default /Encode [0 Size-1]: the corners then sit at 0 and 1. */
		if (encode && (pdf_array_get_real(ctx, encode, 2 * i) != 0 || pdf_array_get_real(ctx, encode, 2 * i + 1) != dims[i] - 1))
			return 0;
		samples *= (size_t)dims[i];
		if (samples * n > MAX_GRID_WORK)
			return 0;
	}
	corners = (size_t)1 << m;
	if (samples * n * corners * m > MAX_GRID_WORK)
		return 0;
	if (samples == corners)
		return 0;
	need = (samples * n * bps + 7) / 8;

	fz_var(data);
	fz_var(out);
	fz_try(ctx)
	{
		data = pdf_load_stream(ctx, ref);
		if (fz_buffer_storage(ctx, data, (unsigned char **)&p) >= need)
		{
			unsigned corner[256 * FZ_MAX_COLORS];
			size_t s;
			int exact = 1;
			/* The corners' samples: corner c has index 0 or Size-1 along dimension k by bit k. */
			for (j = 0; j < (int)corners; j++)
			{
				size_t at = 0, stride = 1;
				for (k = 0; k < m; k++)
				{
					at += ((j >> k) & 1) ? (size_t)(dims[k] - 1) * stride : 0;
					stride *= dims[k];
				}
				for (k = 0; k < n; k++)
					corner[j * n + k] = read_bits(p, (at * n + k) * bps, bps);
			}
			/* Every sample against the corners' multilinear interpolation (the first
			 * input varies fastest, as the samples are stored). */
			memset(idx, 0, sizeof idx);
			for (s = 0; s < samples && exact; s++)
			{
				for (k = 0; k < n && exact; k++)
				{
					double v = 0;
					for (j = 0; j < (int)corners; j++)
					{
						double w = 1;
						for (i = 0; i < m; i++)
						{
							double t = (double)idx[i] / (dims[i] - 1);
							w *= ((j >> i) & 1) ? t : 1 - t;
						}
						v += w * corner[j * n + k];
					}
					if (fabs(v - read_bits(p, (s * n + k) * bps, bps)) > 1 + 1e-9)
						exact = 0;
				}
				for (i = 0; i < m && ++idx[i] == (size_t)dims[i]; i++)
					idx[i] = 0;
			}
			if (exact)
			{
				size_t bytes = (corners * n * bps + 7) / 8;
				unsigned char packed[(256 * FZ_MAX_COLORS * 16 + 7) / 8];
				memset(packed, 0, bytes);
				for (j = 0; j < (int)(corners * n); j++)
					write_bits(packed, (size_t)j * bps, bps, corner[j]);
				out = fz_new_buffer_from_copied_data(ctx, packed, bytes);
				for (i = 0; i < m; i++)
					pdf_array_put_int(ctx, size, i, 2);
				pdf_update_stream(ctx, doc, ref, out, 0);
				done = 1;
			}
		}
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, data);
		fz_drop_buffer(ctx, out);
	}
	fz_catch(ctx)
	{
		fz_report_error(ctx);
		done = 0;
	}
	return done;
}

/* How walk_objects hands each object to its visitor: as an indirect reference (what
 * pdf_update_stream needs) or as the loaded object. */
enum walk_as
{
	WALK_REFERENCE,
	WALK_OBJECT
};

/* Calls visit on every object of the document, as `as` says; an object that throws is
 * reported and skipped. Returns the sum of what visit returned (how many it changed). */
static int walk_objects(fz_context *ctx, pdf_document *doc, enum walk_as as,
	int (*visit)(fz_context *ctx, pdf_document *doc, pdf_obj *obj))
{
	int len = pdf_xref_len(ctx, doc), num, changed = 0;
	for (num = 1; num < len; num++)
	{
		pdf_obj *obj = NULL;
		fz_var(obj);
		fz_try(ctx)
		{
			obj = as == WALK_REFERENCE ? pdf_new_indirect(ctx, doc, num, 0) : pdf_load_object(ctx, doc, num);
			changed += visit(ctx, doc, obj);
		}
		fz_always(ctx)
			pdf_drop_obj(ctx, obj);
		fz_catch(ctx)
			fz_report_error(ctx);
	}
	return changed;
}

static int visit_sampled(fz_context *ctx, pdf_document *doc, pdf_obj *ref)
{
	pdf_obj *type = pdf_dict_get(ctx, ref, PDF_NAME(FunctionType));
	if (pdf_is_stream(ctx, ref) && pdf_is_int(ctx, type) && pdf_to_int(ctx, type) == 0)
		return reduce_sampled(ctx, doc, ref);
	return 0;
}

/* Stores every multilinear sampled function by its grid's corners; returns how many. */
int engine_cz_reduce_sampled_functions(fz_context *ctx, pdf_document *doc)
{
	return walk_objects(ctx, doc, WALK_REFERENCE, visit_sampled);
}

/* Stored bytes of a tint transform above which its palettes are flattened. */
#define TINT_WORTH_FLATTENING 4096

/* Components of an alternate space the palette can index, 0 when it cannot. */
static int alternate_components(fz_context *ctx, pdf_obj *alt)
{
	if (pdf_name_eq(ctx, alt, PDF_NAME(DeviceGray)))
		return 1;
	if (pdf_name_eq(ctx, alt, PDF_NAME(DeviceRGB)))
		return 3;
	if (pdf_name_eq(ctx, alt, PDF_NAME(DeviceCMYK)))
		return 4;
	if (pdf_is_array(ctx, alt) && pdf_name_eq(ctx, pdf_array_get(ctx, alt, 0), PDF_NAME(ICCBased)))
	{
		pdf_obj *profile = pdf_array_get(ctx, alt, 1);
		pdf_obj *range = pdf_dict_get(ctx, profile, PDF_NAME(Range));
		int n = pdf_dict_get_int(ctx, profile, PDF_NAME(N)), i;
		if (n != 1 && n != 3 && n != 4)
			return 0;
		/* Palette bytes map to 0..1; a profile with other ranges (Lab-like) is kept. */
		for (i = 0; range && i < 2 * n; i++)
			if (pdf_array_get_real(ctx, range, i) != (i & 1 ? 1.0f : 0.0f))
				return 0;
		return n;
	}
	return 0;
}

/* Spot components of a /Separation or /DeviceN base, 0 when it is not one the pass takes. */
static int spot_components(fz_context *ctx, pdf_obj *base)
{
	pdf_obj *kind = pdf_array_get(ctx, base, 0);
	if (pdf_name_eq(ctx, kind, PDF_NAME(Separation)))
	{
		pdf_obj *name = pdf_array_get(ctx, base, 1);
		if (pdf_name_eq(ctx, name, PDF_NAME(All)) || pdf_name_eq(ctx, name, PDF_NAME(None)))
			return 0;
		return 1;
	}
	if (pdf_name_eq(ctx, kind, PDF_NAME(DeviceN)))
	{
		pdf_obj *names = pdf_array_get(ctx, base, 1);
		int n = pdf_array_len(ctx, names), i;
		if (n < 1 || n > FZ_MAX_COLORS)
			return 0;
		for (i = 0; i < n; i++)
		{
			pdf_obj *name = pdf_array_get(ctx, names, i);
			if (!pdf_is_name(ctx, name) || pdf_name_eq(ctx, name, PDF_NAME(All)) || pdf_name_eq(ctx, name, PDF_NAME(None)))
				return 0;
		}
		return n;
	}
	return 0;
}

/* Flattens one colour space when it is an indexed palette over spot colours; returns 1
 * when it changed. A space MuPDF cannot evaluate is left as it is. */
static int flatten(fz_context *ctx, pdf_obj *cs)
{
	pdf_obj *base, *alt, *lookup;
	pdf_function *tint = NULL;
	fz_buffer *stream = NULL;
	unsigned char *table = NULL;
	const unsigned char *src;
	size_t src_len;
	int n_in, n_out, hival, i, k, done = 0;

	if (!pdf_is_array(ctx, cs) || pdf_array_len(ctx, cs) != 4 || !pdf_name_eq(ctx, pdf_array_get(ctx, cs, 0), PDF_NAME(Indexed)))
		return 0;
	base = pdf_array_get(ctx, cs, 1);
	if (!pdf_is_array(ctx, base) || pdf_array_len(ctx, base) < 4)
		return 0;
	n_in = spot_components(ctx, base);
	alt = pdf_array_get(ctx, base, 2);
	n_out = alternate_components(ctx, alt);
	hival = pdf_array_get_int(ctx, cs, 2);
	lookup = pdf_array_get(ctx, cs, 3);
	if (!n_in || !n_out || hival < 0 || hival > 255)
		return 0;
	/* Only where the tint transform is what costs: a sampled grid left large (not
	 * multilinear); a small one is cheaper kept than the spot plate is lost. */
	if (!pdf_is_stream(ctx, pdf_array_get(ctx, base, 3)) || pdf_dict_get_int(ctx, pdf_array_get(ctx, base, 3), PDF_NAME(Length)) < TINT_WORTH_FLATTENING)
		return 0;

	fz_var(tint);
	fz_var(stream);
	fz_var(table);
	fz_try(ctx)
	{
		if (pdf_is_string(ctx, lookup))
		{
			src = (const unsigned char *)pdf_to_str_buf(ctx, lookup);
			src_len = pdf_to_str_len(ctx, lookup);
		}
		else if (pdf_is_stream(ctx, lookup))
		{
			stream = pdf_load_stream(ctx, lookup);
			src_len = fz_buffer_storage(ctx, stream, (unsigned char **)&src);
		}
		else
			src_len = 0, src = NULL;
		if (src && src_len >= (size_t)(hival + 1) * n_in)
		{
			tint = pdf_load_function(ctx, pdf_array_get(ctx, base, 3), n_in, n_out);
			table = fz_malloc(ctx, (size_t)(hival + 1) * n_out);
			for (i = 0; i <= hival; i++)
			{
				float in[FZ_MAX_COLORS], out[FZ_MAX_COLORS];
				for (k = 0; k < n_in; k++)
					in[k] = src[i * n_in + k] / 255.0f;
				pdf_eval_function(ctx, tint, in, n_in, out, n_out);
				for (k = 0; k < n_out; k++)
				{
					float v = out[k] < 0 ? 0 : out[k] > 1 ? 1 : out[k];
					table[i * n_out + k] = (unsigned char)(v * 255.0f + 0.5f);
				}
			}
			/* Kept first: putting it drops the base, which may be what holds it. */
			alt = pdf_keep_obj(ctx, alt);
			pdf_array_put_drop(ctx, cs, 1, alt);
			pdf_array_put_drop(ctx, cs, 3, pdf_new_string(ctx, (const char *)table, (size_t)(hival + 1) * n_out));
			done = 1;
		}
	}
	fz_always(ctx)
	{
		fz_free(ctx, table);
		fz_drop_buffer(ctx, stream);
		pdf_drop_function(ctx, tint);
	}
	fz_catch(ctx)
	{
		fz_report_error(ctx);
		done = 0;
	}
	return done;
}

/* The direct colour spaces of a dictionary: its /ColorSpace (an image's space, or a
 * resource dictionary's entries) and those of its direct /Resources (a page's or a form's). */
static int flatten_direct(fz_context *ctx, pdf_obj *dict)
{
	pdf_obj *cs = pdf_dict_get(ctx, dict, PDF_NAME(ColorSpace));
	pdf_obj *res = pdf_dict_get(ctx, dict, PDF_NAME(Resources));
	int changed = 0;
	if (cs && !pdf_is_indirect(ctx, cs))
	{
		if (pdf_is_dict(ctx, cs))
		{
			int i, n = pdf_dict_len(ctx, cs);
			for (i = 0; i < n; i++)
			{
				pdf_obj *v = pdf_dict_get_val(ctx, cs, i);
				if (!pdf_is_indirect(ctx, v))
					changed += flatten(ctx, v);
			}
		}
		else
			changed += flatten(ctx, cs);
	}
	if (res && !pdf_is_indirect(ctx, res) && pdf_is_dict(ctx, res))
		changed += flatten_direct(ctx, res);
	return changed;
}

static int visit_palettes(fz_context *ctx, pdf_document *doc, pdf_obj *obj)
{
	(void)doc;
	if (pdf_is_array(ctx, obj))
		return flatten(ctx, obj);
	if (pdf_is_dict(ctx, obj))
		return flatten_direct(ctx, obj);
	return 0;
}

/* Flattens every indexed palette over spot colours: the indirect colour-space arrays and
 * the direct ones of every dictionary (see flatten_direct). Returns how many changed. */
int engine_cz_flatten_spot_palettes(fz_context *ctx, pdf_document *doc)
{
	return walk_objects(ctx, doc, WALK_OBJECT, visit_palettes);
}
