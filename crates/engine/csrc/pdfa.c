/* What PDF/A-2b output (src/ocr/pdfa/) needs from MuPDF that the mupdf crate does not expose:
 * the ICC profile of MuPDF's DeviceRGB (its built-in sRGB profile) for the output intent, and
 * the document's header version and trailer /ID.
 *
 * A MuPDF exception never unwinds through Rust: every call that may throw is behind fz_try. */
#include "mupdf/fitz.h"
#include "mupdf/pdf.h"
#include "caught.h"

/* The ICC profile MuPDF uses for DeviceRGB: its bytes (owned by the context's colour
 * management, valid while the process runs) and their length; 0 when MuPDF was built without
 * ICC support. */
size_t
engine_pdfa_srgb_icc(fz_context *ctx, const unsigned char **data)
{
	fz_colorspace *cs = fz_device_rgb(ctx);
	unsigned char *bytes = NULL;
	size_t len = 0;
	*data = NULL;
	if (!cs || !(cs->flags & FZ_COLORSPACE_IS_ICC) || !cs->u.icc.buffer)
		return 0;
	len = fz_buffer_storage(ctx, cs->u.icc.buffer, &bytes);
	*data = bytes;
	return len;
}

/* For the document of `trailer`: a header version PDF/A-2 allows (1.0 to 1.7: a 2.0 document
 * is written as 1.7) and a trailer /ID of two random 16-byte strings when it has none (MuPDF
 * then renews the second at every save, as for any document with an /ID). 0, or -1 with the
 * error in err. */
int
engine_pdfa_header_and_id(fz_context *ctx, pdf_obj *trailer, char *err, int errlen)
{
	fz_try(ctx)
	{
		pdf_document *doc = pdf_get_bound_document(ctx, trailer);
		pdf_obj *id;
		unsigned char rnd[32];
		if (!doc)
			fz_throw(ctx, FZ_ERROR_ARGUMENT, "the trailer belongs to no document");
		if (doc->version > 17)
			doc->version = 17;
		id = pdf_dict_get(ctx, trailer, PDF_NAME(ID));
		if (!pdf_is_array(ctx, id) || pdf_array_len(ctx, id) != 2)
		{
			fz_memrnd(ctx, rnd, sizeof rnd);
			id = pdf_dict_put_array(ctx, trailer, PDF_NAME(ID), 2);
			pdf_array_push_string(ctx, id, (char *)rnd, 16);
			pdf_array_push_string(ctx, id, (char *)rnd + 16, 16);
		}
	}
	fz_catch(ctx)
	{
		copy_message(ctx, err, errlen);
		return -1;
	}
	return 0;
}
