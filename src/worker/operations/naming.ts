// Result file names derive from the upload's name: its stem, made safe for Content-Disposition
// and ZIP entries, bounded in length.
export function baseName(filename: string): string {
  return (filename.replace(/\.[A-Za-z0-9]+$/, "") || "document").replace(/[^\w.-]+/g, "_").slice(0, 100);
}
