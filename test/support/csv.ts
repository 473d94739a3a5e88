// An RFC 4180 reader for checking CSV outputs (ours and LibreOffice's) in tests and benchmarks.

/** Rows of fields; quoted fields may hold the delimiter, doubled quotes and line breaks. */
export function parseCsv(text: string, d = ","): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let f = "";
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (q) {
      if (c === '"' && text[i + 1] === '"') (f += '"'), i++;
      else if (c === '"') q = false;
      else f += c;
    } else if (c === '"') q = true;
    else if (c === d) row.push(f), (f = "");
    else if (c === "\r" && text[i + 1] === "\n") {
    } else if (c === "\n") row.push(f), rows.push(row), (row = []), (f = "");
    else f += c;
  }
  if (f !== "" || row.length) row.push(f), rows.push(row);
  return rows;
}
