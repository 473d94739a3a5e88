/* JPEG encoding (render path, compress image pass) and decoding (compress image pass,
 * with DCT-domain downscaling) with the system's libjpeg-turbo (libjpeg.so.62, SIMD), loaded at run
 * time with dlopen(RTLD_LOCAL | RTLD_DEEPBIND): MuPDF links its own IJG libjpeg with the
 * same jpeg_* symbol names, so nothing here calls a jpeg_* function by name; every entry
 * point is looked up with dlsym in the loaded library. When the library is missing,
 * engine_turbo_available() returns 0 and the engine uses its pure-Rust encoder. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

typedef struct jpeg_error_mgr *(*std_error_fn)(struct jpeg_error_mgr *);
typedef void (*create_fn)(j_compress_ptr, int, size_t);
typedef void (*set_defaults_fn)(j_compress_ptr);
typedef void (*set_quality_fn)(j_compress_ptr, int, boolean);
typedef void (*start_fn)(j_compress_ptr, boolean);
typedef JDIMENSION (*write_fn)(j_compress_ptr, JSAMPARRAY, JDIMENSION);
typedef void (*finish_fn)(j_compress_ptr);
typedef void (*destroy_fn)(j_compress_ptr);
typedef void (*progression_fn)(j_compress_ptr);
typedef void (*dcreate_fn)(j_decompress_ptr, int, size_t);
typedef void (*mem_src_fn)(j_decompress_ptr, const unsigned char *, unsigned long);
typedef int (*read_header_fn)(j_decompress_ptr, boolean);
typedef boolean (*dstart_fn)(j_decompress_ptr);
typedef JDIMENSION (*read_fn)(j_decompress_ptr, JSAMPARRAY, JDIMENSION);
typedef boolean (*dfinish_fn)(j_decompress_ptr);
typedef void (*ddestroy_fn)(j_decompress_ptr);

static struct {
	int ok;
	std_error_fn std_error;
	create_fn create;
	set_defaults_fn set_defaults;
	set_quality_fn set_quality;
	start_fn start;
	write_fn write;
	finish_fn finish;
	destroy_fn destroy;
	progression_fn progression;
	int dec_ok; /* the decoder entry points below were all found */
	dcreate_fn dcreate;
	mem_src_fn mem_src;
	read_header_fn read_header;
	dstart_fn dstart;
	read_fn read;
	dfinish_fn dfinish;
	ddestroy_fn ddestroy;
} lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	const char *names[] = { "libjpeg.so.62", "libjpeg.so.8", NULL };
	void *h = NULL;
	int i;
	for (i = 0; names[i] && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (!h)
		return;
	/* Only libjpeg-turbo has SIMD. */
	if (!dlsym(h, "tjInitCompress") && !dlsym(h, "jpeg_skip_scanlines"))
		return;
	lib.std_error = (std_error_fn)dlsym(h, "jpeg_std_error");
	lib.create = (create_fn)dlsym(h, "jpeg_CreateCompress");
	lib.set_defaults = (set_defaults_fn)dlsym(h, "jpeg_set_defaults");
	lib.set_quality = (set_quality_fn)dlsym(h, "jpeg_set_quality");
	lib.start = (start_fn)dlsym(h, "jpeg_start_compress");
	lib.write = (write_fn)dlsym(h, "jpeg_write_scanlines");
	lib.finish = (finish_fn)dlsym(h, "jpeg_finish_compress");
	lib.destroy = (destroy_fn)dlsym(h, "jpeg_destroy_compress");
	lib.progression = (progression_fn)dlsym(h, "jpeg_simple_progression");
	lib.ok = lib.std_error && lib.create && lib.set_defaults && lib.set_quality &&
		lib.start && lib.write && lib.finish && lib.destroy && lib.progression;
	lib.dcreate = (dcreate_fn)dlsym(h, "jpeg_CreateDecompress");
	lib.mem_src = (mem_src_fn)dlsym(h, "jpeg_mem_src");
	lib.read_header = (read_header_fn)dlsym(h, "jpeg_read_header");
	lib.dstart = (dstart_fn)dlsym(h, "jpeg_start_decompress");
	lib.read = (read_fn)dlsym(h, "jpeg_read_scanlines");
	lib.dfinish = (dfinish_fn)dlsym(h, "jpeg_finish_decompress");
	lib.ddestroy = (ddestroy_fn)dlsym(h, "jpeg_destroy_decompress");
	lib.dec_ok = lib.ok && lib.dcreate && lib.mem_src && lib.read_header && lib.dstart &&
		lib.read && lib.dfinish && lib.ddestroy;
}

int engine_turbo_available(void)
{
	pthread_once(&once, load);
	return lib.ok;
}

struct err_mgr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char *msg;
	int msglen;
};

static void on_error(j_common_ptr cinfo)
{
	struct err_mgr *e = (struct err_mgr *)cinfo->err;
	if (e->msglen > 0)
		e->pub.format_message(cinfo, e->msg); /* JMSG_LENGTH_MAX = 200 */
	longjmp(e->jump, 1);
}

static void on_message(j_common_ptr cinfo) { (void)cinfo; }

/* Output into a buffer grown with this file's malloc/realloc (not the library's
 * jpeg_mem_dest: a buffer must be freed by the allocator that made it, and the library
 * is bound to libc's while the host process may use another). */
struct dest_mgr {
	struct jpeg_destination_mgr pub;
	unsigned char *buf;
	size_t cap;
	struct err_mgr *err;
};

static void dest_init(j_compress_ptr cinfo)
{
	struct dest_mgr *d = (struct dest_mgr *)cinfo->dest;
	d->pub.next_output_byte = d->buf;
	d->pub.free_in_buffer = d->cap;
}

static boolean dest_empty(j_compress_ptr cinfo)
{
	struct dest_mgr *d = (struct dest_mgr *)cinfo->dest;
	size_t used = d->cap; /* the whole buffer is full when this is called */
	unsigned char *n = realloc(d->buf, d->cap * 2);
	if (!n)
		longjmp(d->err->jump, 1);
	d->buf = n;
	d->cap *= 2;
	d->pub.next_output_byte = d->buf + used;
	d->pub.free_in_buffer = d->cap - used;
	return TRUE;
}

static void dest_term(j_compress_ptr cinfo) { (void)cinfo; }

/* Encoder flags of engine_turbo_encode_flags. */
#define TURBO_OPTIMIZE 1    /* optimised Huffman tables (one extra pass over the coefficients) */
#define TURBO_PROGRESSIVE 2 /* progressive scans (implies optimised tables) */

/* Encodes w x h pixels of `comps` (1 grey, 3 RGB) interleaved samples, rows `stride`
 * bytes apart: baseline with the standard Huffman tables unless `flags` (TURBO_*) ask
 * for more. On success *out is a malloc'd buffer for engine_turbo_free. */
int engine_turbo_encode_flags(const unsigned char *px, int w, int h, int stride, int comps, int quality, int dpi,
	int flags, unsigned char **out, unsigned long *outlen, char *msg, int msglen)
{
	struct jpeg_compress_struct cinfo;
	struct err_mgr err;
	struct dest_mgr dest;
	struct dest_mgr *volatile dp = &dest; /* read after longjmp */
	if (!engine_turbo_available())
		return -1;
	memset(&dest, 0, sizeof dest);
	dest.cap = (size_t)w * h * comps / 8 + 65536;
	dest.buf = malloc(dest.cap);
	if (!dest.buf)
		return 1;
	dest.err = &err;
	memset(&cinfo, 0, sizeof cinfo);
	err.msg = msglen >= JMSG_LENGTH_MAX ? msg : NULL;
	err.msglen = msglen >= JMSG_LENGTH_MAX ? msglen : 0;
	cinfo.err = lib.std_error(&err.pub);
	err.pub.error_exit = on_error;
	err.pub.output_message = on_message;
	if (setjmp(err.jump)) {
		lib.destroy(&cinfo);
		free(dp->buf);
		return 1;
	}
	lib.create(&cinfo, JPEG_LIB_VERSION, sizeof cinfo);
	dest.pub.init_destination = dest_init;
	dest.pub.empty_output_buffer = dest_empty;
	dest.pub.term_destination = dest_term;
	cinfo.dest = &dest.pub;
	cinfo.image_width = w;
	cinfo.image_height = h;
	cinfo.input_components = comps;
	cinfo.in_color_space = comps == 1 ? JCS_GRAYSCALE : JCS_RGB;
	lib.set_defaults(&cinfo); /* baseline, 4:2:0 for colour, no Huffman optimisation */
	lib.set_quality(&cinfo, quality, TRUE);
	cinfo.density_unit = 1;
	cinfo.X_density = cinfo.Y_density = dpi > 65535 ? 65535 : dpi;
	cinfo.dct_method = JDCT_ISLOW;
	if (flags & TURBO_OPTIMIZE)
		cinfo.optimize_coding = TRUE;
	if (flags & TURBO_PROGRESSIVE)
		lib.progression(&cinfo);
	lib.start(&cinfo, TRUE);
	while (cinfo.next_scanline < cinfo.image_height) {
		JSAMPROW rows[16];
		JDIMENSION n = 0;
		while (n < 16 && cinfo.next_scanline + n < cinfo.image_height) {
			rows[n] = (JSAMPROW)(px + (size_t)(cinfo.next_scanline + n) * stride);
			n++;
		}
		lib.write(&cinfo, rows, n);
	}
	lib.finish(&cinfo);
	lib.destroy(&cinfo);
	*out = dest.buf;
	*outlen = dest.cap - dest.pub.free_in_buffer;
	return 0;
}

void engine_turbo_free(unsigned char *p) { free(p); }

int engine_turbo_decoder_available(void)
{
	pthread_once(&once, load);
	return lib.dec_ok;
}

/* Decodes a baseline or progressive JPEG of `comps` components (1 grey, 3 colour,
 * output as RGB) and exactly w x h pixels, scaled down in the DCT domain by the largest
 * of 1/8, 1/4, 1/2 that still gives at least min_w x min_h pixels (much cheaper than a
 * full decode followed by scaling: only the low-frequency coefficients are transformed).
 * On success *out (malloc'd, for engine_turbo_free) holds *ow x *oh x comps packed samples.
 * `transform` (colour only): 1 the data is YCbCr, 0 it is RGB, -1 the JPEG's markers say
 * (PDF's /ColorTransform). 
 * Returns 0, -1 without the library, 2 when the data does not match (component count,
 * size) or the decoder warned (corrupt data: left to the caller's other path), 1 on a
 * decoding error. Thread-safe: every call has its own decoder. */
int engine_turbo_decode(const unsigned char *data, unsigned long len, int w, int h, int comps, int transform,
	int min_w, int min_h, unsigned char **out, int *ow, int *oh, char *msg, int msglen)
{
	struct jpeg_decompress_struct cinfo;
	struct err_mgr err;
	unsigned char *volatile px = NULL; /* read after longjmp */
	size_t stride;
	int denom;
	if (!engine_turbo_decoder_available())
		return -1;
	memset(&cinfo, 0, sizeof cinfo);
	err.msg = msglen >= JMSG_LENGTH_MAX ? msg : NULL;
	err.msglen = msglen >= JMSG_LENGTH_MAX ? msglen : 0;
	cinfo.err = lib.std_error(&err.pub);
	err.pub.error_exit = on_error;
	err.pub.output_message = on_message;
	if (setjmp(err.jump)) {
		lib.ddestroy(&cinfo);
		free(px);
		return 1;
	}
	lib.dcreate(&cinfo, JPEG_LIB_VERSION, sizeof cinfo);
	lib.mem_src(&cinfo, data, len);
	lib.read_header(&cinfo, TRUE);
	if (cinfo.num_components != comps || (int)cinfo.image_width != w || (int)cinfo.image_height != h ||
		cinfo.data_precision != 8) {
		lib.ddestroy(&cinfo);
		return 2;
	}
	if (comps == 3 && transform >= 0)
		cinfo.jpeg_color_space = transform ? JCS_YCbCr : JCS_RGB;
	cinfo.out_color_space = comps == 1 ? JCS_GRAYSCALE : JCS_RGB;
	cinfo.dct_method = JDCT_ISLOW;
	/* libjpeg rounds scaled sizes up: ceil(w / denom). */
	for (denom = 8; denom > 1; denom /= 2)
		if ((w + denom - 1) / denom >= min_w && (h + denom - 1) / denom >= min_h)
			break;
	cinfo.scale_num = 1;
	cinfo.scale_denom = denom;
	lib.dstart(&cinfo);
	stride = (size_t)cinfo.output_width * cinfo.output_components;
	px = malloc(stride * cinfo.output_height);
	if (!px) {
		lib.ddestroy(&cinfo);
		return 1;
	}
	while (cinfo.output_scanline < cinfo.output_height) {
		JSAMPROW rows[16];
		JDIMENSION n = 0;
		while (n < 16 && cinfo.output_scanline + n < cinfo.output_height) {
			rows[n] = (JSAMPROW)(px + (size_t)(cinfo.output_scanline + n) * stride);
			n++;
		}
		lib.read(&cinfo, rows, n);
	}
	lib.dfinish(&cinfo);
	*ow = cinfo.output_width;
	*oh = cinfo.output_height;
	if (err.pub.num_warnings > 0) {
		lib.ddestroy(&cinfo);
		free(px);
		return 2;
	}
	lib.ddestroy(&cinfo);
	*out = px;
	return 0;
}
