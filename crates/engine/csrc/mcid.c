/* Pages whose marked-content lookups would make MuPDF run for hours.
 *
 * When MuPDF runs or filters a page with /StructParents, it looks up the structure element
 * of every marked-content sequence (at BDC, at EMC, at each text show inside one) in the
 * page's ParentTree array, by MCID (pdf-op-run.c, pdf_lookup_mcid_in_mcids). It expects the
 * element's /K to hold the MCID as an integer; when it does not (a marked-content reference
 * dictionary, which the PDF spec allows), it scans every entry of the array and every /K
 * array in it, for every lookup: cubic in the number of sequences on the page. PyMuPDF's
 * test_5125.pdf (one page, 5,356 sequences, all under one element whose /K holds 5,356
 * MCR dictionaries) ran for more than an hour while mutool 1.21 draws it in 0.1 s.
 *
 * Such a scan can only find an element whose /K holds the MCID as an integer. Where the
 * estimated scan work of a page is large, its /StructParents is taken away while the page is
 * read (rendering, text extraction, redaction's filtering), and put back before anything is
 * saved: MuPDF then reads the page as untagged, which for such pages loses at most the
 * /Lang and /ActualText of elements its scan would have found.
 *
 * A MuPDF exception never unwinds through Rust: every call is behind fz_try. */
#include "mcid.h"

/* Scan work (entries read) above which a page is read as untagged: a few tenths of a second
 * of MuPDF's lookups. */
#define MCID_WORK_LIMIT 4000000.0

/* Whether /K holds any integer (an MCID MuPDF's lookups can match). */
static int
k_has_int(fz_context *ctx, pdf_obj *k)
{
	int i, n;
	if (pdf_is_int(ctx, k))
		return 1;
	n = pdf_is_array(ctx, k) ? pdf_array_len(ctx, k) : 0;
	for (i = 0; i < n; i++)
		if (pdf_is_int(ctx, pdf_array_get(ctx, k, i)))
			return 1;
	return 0;
}

/* The entries MuPDF's lookups would read on this page, about two lookups per sequence: each
 * reads its element's /K, and one whose element's /K holds no integer cannot match and
 * scans the whole array besides. */
static double
page_scan_work(fz_context *ctx, pdf_obj *parent_tree, pdf_obj *page)
{
	pdf_obj *sp = pdf_dict_get(ctx, page, PDF_NAME(StructParents));
	pdf_obj *mcids, *prev = NULL;
	double scan = 0, misses = 0;
	int i, n, prev_has_int = 0;
	if (!pdf_is_int(ctx, sp))
		return 0;
	mcids = pdf_lookup_number(ctx, parent_tree, pdf_to_int(ctx, sp));
	n = pdf_is_array(ctx, mcids) ? pdf_array_len(ctx, mcids) : 0;
	if (n < 64)
		return 0;
	for (i = 0; i < n; i++) {
		pdf_obj *elem = pdf_array_get(ctx, mcids, i);
		pdf_obj *k = pdf_dict_get(ctx, elem, PDF_NAME(K));
		scan += pdf_is_array(ctx, k) ? pdf_array_len(ctx, k) : 1;
		/* Runs of one element are common: its /K is read once per run. */
		if (elem == NULL || elem != prev)
			prev_has_int = k_has_int(ctx, k);
		prev = elem;
		misses += !prev_has_int;
	}
	return 2 * (scan + misses * scan);
}

/* Takes /StructParents away from every page whose lookups would read more than
 * MCID_WORK_LIMIT entries. Returns a new array [page, value, page, value, ...] to give to
 * engine_mcid_restore (NULL when no page was changed or on error). */
pdf_obj *
engine_mcid_untag_costly(fz_context *ctx, pdf_document *doc)
{
	pdf_obj *taken = NULL;
	fz_var(taken);
	fz_try(ctx) {
		pdf_obj *parent_tree = pdf_dict_getl(ctx, pdf_trailer(ctx, doc), PDF_NAME(Root),
			PDF_NAME(StructTreeRoot), PDF_NAME(ParentTree), NULL);
		int i, n = parent_tree ? pdf_count_pages(ctx, doc) : 0;
		for (i = 0; i < n; i++) {
			pdf_obj *page = pdf_lookup_page_obj(ctx, doc, i);
			if (page_scan_work(ctx, parent_tree, page) <= MCID_WORK_LIMIT)
				continue;
			if (!taken)
				taken = pdf_new_array(ctx, doc, 2);
			pdf_array_push(ctx, taken, page);
			pdf_array_push(ctx, taken, pdf_dict_get(ctx, page, PDF_NAME(StructParents)));
			pdf_dict_del(ctx, page, PDF_NAME(StructParents));
		}
	}
	fz_catch(ctx) {
		/* Reading the structure failed: MuPDF's own run will meet the same damage and
		 * treat the tree as broken. Pages already changed stay listed for restoring. */
		fz_ignore_error(ctx);
	}
	return taken;
}

/* Puts back what engine_mcid_untag_costly took and drops the list. */
void
engine_mcid_restore(fz_context *ctx, pdf_obj *taken)
{
	int i, n;
	if (!taken)
		return;
	fz_try(ctx) {
		n = pdf_array_len(ctx, taken);
		for (i = 0; i + 1 < n; i += 2)
			pdf_dict_put(ctx, pdf_array_get(ctx, taken, i), PDF_NAME(StructParents), pdf_array_get(ctx, taken, i + 1));
	}
	fz_always(ctx)
		pdf_drop_obj(ctx, taken);
	fz_catch(ctx)
		fz_ignore_error(ctx);
}

/* engine_mcid_untag_costly for the document `trailer` belongs to (the mupdf crate gives
 * Rust its objects, not its documents). */
pdf_obj *
engine_mcid_untag_costly_of(fz_context *ctx, pdf_obj *trailer)
{
	pdf_document *doc = NULL;
	fz_try(ctx)
		doc = pdf_get_bound_document(ctx, trailer);
	fz_catch(ctx)
		fz_ignore_error(ctx);
	return doc ? engine_mcid_untag_costly(ctx, doc) : NULL;
}
