/* What the compress levels drop from the metadata and the private data of a document
 * (lossy levels), and the metadata streams they deflate (every level). */
#include <string.h>
#include "compressor.h"

/* Drops from one dictionary what no viewer shows: page thumbnails (/Thumb), private
 * application data (/PieceInfo, e.g. Illustrator's and Photoshop's copies of the
 * artwork) on any dictionary, and XMP metadata streams attached to anything but the
 * catalogue (pages, images, fonts, forms: Acrobat and InDesign repeat the document's).
 * The catalogue's /Metadata (the document's XMP) is kept. Given to engine_cz_drop_unreachable's
 * walk, so only what is reachable is looked at and what the keys led to is deleted
 * unread (annotator-base64-image.pdf's PieceInfo holds a 1.3 MB string that took 7% of
 * its run to parse when every object was). */
void engine_cz_drop_private_keys(fz_context *ctx, pdf_obj *obj, pdf_obj *root)
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
void engine_cz_deflate_metadata(fz_context *ctx, pdf_document *doc, int pdfa_too)
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

/* The document's XMP (the catalogue's /Metadata) without its embedded thumbnails
 * (<xmp:Thumbnails>, <xap:Thumbnails>: a base64 JPEG, 24 KB in a Photoshop file that
 * holds a 64 KB page image), stored unfiltered: engine_cz_deflate_metadata deflates
 * it with the other metadata. For the lossy levels only. Metadata that cannot be read
 * is left as it is. */
void engine_cz_slim_metadata(fz_context *ctx, pdf_document *doc)
{
	pdf_obj *md = pdf_dict_getp(ctx, pdf_trailer(ctx, doc), "Root/Metadata");
	fz_buffer *xml = NULL, *out = NULL;
	fz_var(xml);
	fz_var(out);
	if (!pdf_is_stream(ctx, md))
		return;
	fz_try(ctx)
	{
		unsigned char *data;
		size_t len, pos = 0;
		xml = pdf_load_stream(ctx, md);
		len = fz_buffer_storage(ctx, xml, &data);
		out = fz_new_buffer(ctx, len + 1);
		while (pos < len) {
			/* an element <prefix:Thumbnails ...> ... </prefix:Thumbnails> */
			const char *hit = NULL;
			size_t k;
			for (k = pos; k + 12 <= len; k++)
				if (data[k] == ':' && !memcmp(data + k + 1, "Thumbnails", 10)) {
					hit = (const char *)data + k;
					break;
				}
			if (hit) {
				size_t colon = (const unsigned char *)hit - data, open = colon, end;
				while (open > pos && data[open] != '<' && data[open] != '>' && data[open] != '/')
					open--;
				if (data[open] == '<' && (data[colon + 11] == '>' || data[colon + 11] == ' ' ||
					data[colon + 11] == '\n' || data[colon + 11] == '\r' || data[colon + 11] == '\t')) {
					/* the closing tag: "</" + the same qualified name + ">" */
					size_t qlen = colon + 11 - (open + 1);
					for (end = colon + 11; end + qlen + 3 <= len; end++)
						if (data[end] == '<' && data[end + 1] == '/' &&
							!memcmp(data + end + 2, data + open + 1, qlen) && data[end + 2 + qlen] == '>')
							break;
					if (end + qlen + 3 <= len) {
						fz_append_data(ctx, out, data + pos, open - pos);
						pos = end + qlen + 3;
						continue;
					}
				}
				fz_append_data(ctx, out, data + pos, colon + 1 - pos);
				pos = colon + 1;
				continue;
			}
			fz_append_data(ctx, out, data + pos, len - pos);
			pos = len;
		}
		/* Unfiltered (compressed = 0 drops /Filter and /DecodeParms). */
		pdf_update_stream(ctx, doc, md, out, 0);
	}
	fz_always(ctx)
	{
		fz_drop_buffer(ctx, xml);
		fz_drop_buffer(ctx, out);
	}
	fz_catch(ctx)
	{
		fz_rethrow_if(ctx, FZ_ERROR_SYSTEM);
		fz_report_error(ctx);
	}
}
