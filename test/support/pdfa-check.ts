// A rule-by-rule check of PDF/A-2b (ISO 19005-2, level B) for the tests, independent of the
// engine's code (crates/engine/src/ocr/pdfa/). veraPDF, the reference validator, is a Java
// program distributed through Maven, not through npm, PyPI, crates.io or Debian, so it cannot be
// installed here; no package of those registries validates PDF/A. This reads the file through
// `qpdf --json` (every object, streams decoded) and checks the rules below, each named after its
// clause of ISO 19005-2. It does not check what only a full validator can: content stream
// operators and implementation limits, embedded font programs against their dictionaries,
// ICC profile contents beyond their header, transparency groups' colour spaces.
import { readFileSync } from "node:fs";

type Json = any;

/** Every violation found, as "clause: what"; empty when the file passes every rule here. */
export function pdfaViolations(path: string): string[] {
  const out: string[] = [];
  const bytes = readFileSync(path);
  const head = bytes.subarray(0, 64).toString("latin1");

  // 6.1.2 File header: %PDF-1.n (n 0-7), then a comment of at least four bytes above 127.
  const header = /^%PDF-1\.[0-7](?:\r\n|\r|\n)%(.{4})/s.exec(head);
  if (!header) out.push("6.1.2: the header is not %PDF-1.n (n 0-7) followed by a binary comment");
  else if ([...header[1]!].some((c) => c.charCodeAt(0) < 128))
    out.push("6.1.2: the second line's comment has a byte below 128");
  // 6.1.3 Nothing after the last %%EOF but an end of line.
  if (!/%%EOF\r?\n?$/.test(bytes.subarray(-16).toString("latin1"))) out.push("6.1.3: data after %%EOF");

  const q = Bun.spawnSync(["qpdf", "--json=2", "--json-stream-data=inline", "--decode-level=generalized", path], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (q.exitCode !== 0 && q.exitCode !== 3) return [...out, `qpdf cannot read the file: ${q.stderr.toString()}`];
  const doc: Json = JSON.parse(q.stdout.toString());
  const objects: Record<string, Json> = doc.qpdf[1];
  const trailer: Json = objects.trailer?.value ?? {};
  const resolve = (v: Json): Json => {
    if (typeof v === "string" && / R$/.test(v)) {
      const o = objects[`obj:${v}`];
      return o?.value ?? o?.stream?.dict ?? null;
    }
    return v;
  };
  const streamOf = (v: Json): { dict: Json; data: Buffer } | null => {
    const o = typeof v === "string" ? objects[`obj:${v}`] : null;
    return o?.stream ? { dict: o.stream.dict, data: Buffer.from(o.stream.data ?? "", "base64") } : null;
  };
  const text = (v: Json): string | undefined =>
    typeof v === "string" && v.startsWith("u:")
      ? v.slice(2)
      : typeof v === "string" && v.startsWith("b:")
        ? Buffer.from(v.slice(2), "hex").toString("latin1")
        : undefined;

  // 6.1.3 Trailer: an /ID of two strings, no /Encrypt.
  const id = resolve(trailer["/ID"]);
  if (!Array.isArray(id) || id.length !== 2) out.push("6.1.3: the trailer has no /ID of two strings");
  if (trailer["/Encrypt"]) out.push("6.1.3: the file is encrypted");

  const dicts: Json[] = [];
  for (const [key, o] of Object.entries(objects)) {
    if (key === "trailer") continue;
    const dict = o.stream ? o.stream.dict : o.value;
    if (dict && typeof dict === "object" && !Array.isArray(dict)) dicts.push(dict);
  }
  // Direct dictionaries inside objects are checked too: walk every value.
  const all: Json[] = [];
  const walk = (v: Json, depth: number) => {
    if (depth > 40 || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else {
      all.push(v);
      for (const x of Object.values(v)) walk(x, depth + 1);
    }
  };
  dicts.forEach((d) => walk(d, 0));
  walk(trailer, 0);

  // 6.1.7 Streams: no external files, no LZW.
  for (const [key, o] of Object.entries(objects)) {
    const d = o.stream?.dict;
    if (!d) continue;
    if (d["/F"] || d["/FFilter"] || d["/FDecodeParms"]) out.push(`6.1.7.1: ${key} refers to an external file`);
    const filters = [d["/Filter"]].flat();
    if (filters.includes("/LZWDecode")) out.push(`6.1.7.2: ${key} is LZW-compressed`);
  }

  const root = resolve(trailer["/Root"]);
  if (!root) return [...out, "the trailer has no /Root"];

  // 6.2.3 Output intent: a GTS_PDFA1 intent with an ICC profile (RGB, grey or CMYK), and every
  // intent's profile the same object.
  const intents = (resolve(root["/OutputIntents"]) ?? []).map(resolve);
  const pdfa = intents.filter((i: Json) => i?.["/S"] === "/GTS_PDFA1");
  let intentSpace = "";
  if (pdfa.length === 0) out.push("6.2.3: no GTS_PDFA1 output intent");
  const profiles = new Set(intents.map((i: Json) => i?.["/DestOutputProfile"]).filter(Boolean));
  if (profiles.size > 1) out.push("6.2.3: output intents with different profiles");
  for (const intent of pdfa) {
    const profile = streamOf(intent["/DestOutputProfile"]);
    if (!profile) {
      out.push("6.2.3: the PDF/A output intent has no DestOutputProfile stream");
      continue;
    }
    const icc = profile.data;
    intentSpace = icc.subarray(16, 20).toString("latin1");
    const n = { "RGB ": 3, GRAY: 1, CMYK: 4 }[intentSpace];
    if (icc.subarray(36, 40).toString("latin1") !== "acsp") out.push("6.2.3: the profile is not an ICC profile");
    if (!n) out.push(`6.2.3: the profile's colour space ${intentSpace} is not RGB, GRAY or CMYK`);
    if (profile.dict["/N"] !== n) out.push(`6.2.3: the profile's /N ${profile.dict["/N"]} is not ${n}`);
    if (icc[8]! > 4) out.push(`6.2.3: ICC version ${icc[8]} is above 4`);
    if (!["mntr", "prtr"].includes(icc.subarray(12, 16).toString("latin1")))
      out.push("6.2.3: the profile's class is neither mntr nor prtr");
  }
  // 6.2.4.3 Device colour spaces must match the intent: DeviceCMYK needs a CMYK one.
  if (intentSpace !== "CMYK") {
    const usesCmyk = all.some((d) => Object.values(d).some((v) => v === "/DeviceCMYK"));
    const contentCmyk = Object.values(objects).some((o: Json) => {
      const d = o.stream?.dict;
      if (!d || d["/Subtype"] === "/Image" || d["/Type"] === "/Metadata" || d["/N"] !== undefined) return false;
      const s = Buffer.from(o.stream.data ?? "", "base64").toString("latin1");
      return /(^|\s)(\d*\.?\d+\s+){4}[kK](\s|$)/.test(s) || /\/DeviceCMYK\s+c[sS]/.test(s);
    });
    if (usesCmyk || contentCmyk) out.push("6.2.4.3: DeviceCMYK is used without a CMYK output intent");
  }

  for (const d of all) {
    // 6.2.8 Images: no /Alternates, no /OPI, /Interpolate not true.
    if (d["/Subtype"] === "/Image") {
      if (d["/Alternates"]) out.push("6.2.8: an image has /Alternates");
      if (d["/OPI"]) out.push("6.2.8: an image has /OPI");
      if (d["/Interpolate"] === true) out.push("6.2.8: an image has /Interpolate true");
    }
    // 6.2.9 XObjects: no PostScript, no reference XObjects.
    if (d["/Subtype"] === "/PS" || d["/Subtype2"] === "/PS" || (d["/Subtype"] === "/Form" && d["/PS"]))
      out.push("6.2.9: a PostScript XObject");
    if (d["/Subtype"] === "/Form" && d["/Ref"]) out.push("6.2.9: a reference XObject");
    // 6.2.5 Graphics states: no transfer functions; 6.2.10: standard blend modes only.
    if (d["/Type"] === "/ExtGState" || d["/BM"] !== undefined || d["/TR"] !== undefined) {
      if (d["/TR"] !== undefined) out.push("6.2.5: a graphics state has /TR");
      if (d["/TR2"] !== undefined && d["/TR2"] !== "/Default") out.push("6.2.5: a graphics state has /TR2");
      const standard =
        "/Normal /Compatible /Multiply /Screen /Overlay /Darken /Lighten /ColorDodge /ColorBurn /HardLight /SoftLight /Difference /Exclusion /Hue /Saturation /Color /Luminosity".split(
          " ",
        );
      for (const bm of [d["/BM"] ?? []].flat()) if (!standard.includes(bm)) out.push(`6.2.10: blend mode ${bm}`);
    }
    // 6.2.11.4.1 Fonts: every font program embedded (Type 3 fonts are content, not programs).
    if (d["/Type"] === "/Font" && d["/Subtype"] !== "/Type3" && d["/Subtype"] !== "/Type0") {
      const fd = resolve(d["/FontDescriptor"]);
      if (!fd || !(fd["/FontFile"] || fd["/FontFile2"] || fd["/FontFile3"]))
        out.push(`6.2.11.4.1: font ${d["/BaseFont"]} is not embedded`);
      // 6.2.11.8 No CID the text layer shows may land on glyph 0 (.notdef): the layer's font
      // maps exactly the CIDs it uses (other fonts' maps also cover CIDs no text shows).
      const map = d["/BaseFont"] === "/GlyphLessFont" ? streamOf(d["/CIDToGIDMap"]) : null;
      if (map) {
        const gids = [];
        for (let i = 2; i + 1 < map.data.length; i += 2) gids.push(map.data.readUInt16BE(i));
        if (gids.includes(0)) out.push(`6.2.11.8: font ${d["/BaseFont"]} maps a CID in use to .notdef`);
      }
    }
    // 6.3 Annotations: allowed types, printed and visible, only a normal appearance.
    if (d["/Type"] === "/Annot" || (d["/Rect"] && d["/Subtype"] && d["/P"] !== undefined)) {
      const subtype = d["/Subtype"];
      if (["/Sound", "/Movie", "/Screen", "/3D", "/FileAttachment", "/RichMedia"].includes(subtype))
        out.push(`6.3.1: a ${subtype} annotation`);
      if (subtype !== "/Popup") {
        const f = Number(d["/F"] ?? 0);
        if (!(f & 4) || f & (1 | 2 | 32 | 256)) out.push(`6.3.2: a ${subtype} annotation is hidden or not printed`);
      }
      const ap = resolve(d["/AP"]);
      if (ap && (ap["/R"] || ap["/D"])) out.push(`6.3.3: a ${subtype} annotation has /R or /D appearances`);
    }
    // 6.5 Actions: none of the forbidden kinds, no additional actions.
    const forbidden = [
      "/Launch",
      "/Sound",
      "/Movie",
      "/ResetForm",
      "/ImportData",
      "/Hide",
      "/SetOCGState",
      "/Rendition",
      "/Trans",
      "/GoTo3DView",
      "/JavaScript",
    ];
    if (forbidden.includes(d["/S"])) out.push(`6.5.1: a ${d["/S"]} action`);
    if (d["/AA"] !== undefined) out.push("6.5.2: additional actions (/AA)");
  }

  // 6.6.2 Metadata: an unfiltered XMP stream identifying PDF/A-2B, equal to the Info dictionary.
  const meta = streamOf(root["/Metadata"]);
  if (!meta) out.push("6.6.2.1: the catalog has no /Metadata stream");
  else {
    if (meta.dict["/Type"] !== "/Metadata" || meta.dict["/Subtype"] !== "/XML")
      out.push("6.6.2.1: /Metadata is not /Type /Metadata /Subtype /XML");
    const raw = objects[`obj:${root["/Metadata"]}`]?.stream;
    if (raw?.dict?.["/Filter"]) out.push("6.6.2.1: the metadata stream is filtered");
    const xmp = meta.data.toString("utf8");
    const packet = /<\?xpacket begin=[^?]*\?>/.exec(xmp)?.[0] ?? "";
    if (!packet) out.push("6.6.2.1: no xpacket header");
    if (/bytes=|encoding=/.test(packet)) out.push("6.6.2.1: the xpacket header has bytes or encoding");
    const prop = (name: string) => {
      const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xmp);
      if (!m) return undefined;
      const li = /<rdf:li[^>]*>([\s\S]*?)<\/rdf:li>/.exec(m[1]!);
      return (li ? li[1]! : m[1]!)
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, "&");
    };
    if (prop("pdfaid:part") !== "2") out.push("6.6.4: pdfaid:part is not 2");
    if (prop("pdfaid:conformance") !== "B") out.push("6.6.4: pdfaid:conformance is not B");
    const info = resolve(trailer["/Info"]) ?? {};
    const instant = (s: string | undefined) => {
      if (!s) return undefined;
      const m = /^D:(\d{4})(\d\d)?(\d\d)?(\d\d)?(\d\d)?(\d\d)?([+-Z])?(\d\d)?'?(\d\d)?/.exec(s);
      const iso = m
        ? `${m[1]}-${m[2] ?? "01"}-${m[3] ?? "01"}T${m[4] ?? "00"}:${m[5] ?? "00"}:${m[6] ?? "00"}${m[7] && m[7] !== "Z" ? `${m[7]}${m[8] ?? "00"}:${m[9] ?? "00"}` : "Z"}`
        : s;
      return Date.parse(iso);
    };
    const pairs: [string, string, boolean][] = [
      ["/Title", "dc:title", false],
      ["/Author", "dc:creator", false],
      ["/Subject", "dc:description", false],
      ["/Keywords", "pdf:Keywords", false],
      ["/Creator", "xmp:CreatorTool", false],
      ["/Producer", "pdf:Producer", false],
      ["/CreationDate", "xmp:CreateDate", true],
      ["/ModDate", "xmp:ModifyDate", true],
    ];
    for (const [key, xmpName, isDate] of pairs) {
      const a = text(info[key]);
      const b = prop(xmpName);
      if (a === undefined) continue;
      const same = isDate ? instant(a) === Date.parse(b ?? "") : a === b;
      if (!same) out.push(`6.6.3: Info ${key} (${a}) and XMP ${xmpName} (${b}) differ`);
    }
    if (info["/Trapped"] !== undefined) out.push("6.6.3: Info /Trapped without its XMP pdf:Trapped");
  }

  // 6.1.11 / 6.9: no JavaScript or embedded files in the name tree; 6.11: no /Requirements.
  const names = resolve(root["/Names"]) ?? {};
  if (names["/JavaScript"]) out.push("6.1.11: JavaScript in the name tree");
  if (names["/EmbeddedFiles"]) out.push("6.8: embedded files");
  if (root["/Requirements"]) out.push("6.11: the catalog has /Requirements");
  // 6.9 Optional content: every configuration named, none with /AS.
  const oc = resolve(root["/OCProperties"]);
  if (oc) {
    for (const c of [oc["/D"], ...(resolve(oc["/Configs"]) ?? [])].map(resolve).filter(Boolean)) {
      if (!c["/Name"]) out.push("6.9: an optional content configuration without /Name");
      if (c["/AS"]) out.push("6.9: an optional content configuration with /AS");
    }
  }
  // 6.4.1 (interactive forms): no NeedAppearances true, no XFA.
  const form = resolve(root["/AcroForm"]);
  if (form?.["/NeedAppearances"] === true) out.push("6.4.1: /NeedAppearances true");
  if (form?.["/XFA"]) out.push("6.4.2: an XFA form");
  return [...new Set(out)];
}
