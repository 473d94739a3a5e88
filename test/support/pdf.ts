// Small valid PDFs written by hand (xref offsets computed), for tests and the soak script that
// must run without the corpus (../shared is absent on a fresh clone).

/** Serialises numbered objects (1..n, object 1 the catalog) with a correct xref table. */
function writePdf(objs: string[]): Uint8Array {
  let out = "%PDF-1.7\n";
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out +=
    `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

/** A PDF of `pages` blank pages of `size` points (US Letter unless given). */
export function blankPdf(pages: number, size: [number, number] = [612, 792]): Uint8Array {
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i} 0 R`).join(" ");
  const objs = ["<< /Type /Catalog /Pages 2 0 R >>", `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`];
  for (let i = 0; i < pages; i++) objs.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${size[0]} ${size[1]}] >>`);
  return writePdf(objs);
}

/** A PDF of `pages` blank Letter pages. */
export function tinyPdf(pages = 1): Uint8Array {
  return blankPdf(pages);
}

/** A PDF of `pages` text pages, each reading "<label> page <n>" in Helvetica. */
export function minimalPdf(pages: number, label: string): Uint8Array {
  const kids = Array.from({ length: pages }, (_, i) => `${4 + i * 2} 0 R`).join(" ");
  const objs = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  for (let i = 0; i < pages; i++) {
    const text = `BT /F1 24 Tf 72 700 Td (${label} page ${i + 1}) Tj ET`;
    objs.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
    );
    objs.push(`<< /Length ${text.length} >>\nstream\n${text}\nendstream`);
  }
  return writePdf(objs);
}

/** The 8-byte PNG signature plus an IHDR: identified as PNG, never as PDF. */
export function pngHeader(): Uint8Array {
  return Uint8Array.from(Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex"));
}

/**
 * A saved PDF's bytes as text without the second half of its trailer `/ID`: MuPDF draws it
 * anew at every save from a generator seeded with the time (a file identifier, not content), so
 * two saves of the same document differ there and nowhere else.
 */
export function withoutSaveId(bytes: Uint8Array): string {
  return Buffer.from(bytes)
    .toString("latin1")
    .replace(/(\/ID\s*\[\s*<[0-9A-Fa-f]*>\s*<)[0-9A-Fa-f]*>/g, "$1>");
}
