//! The glyph-less font of the searchable PDF's text layer: the TrueType program embedded
//! (two empty glyphs, built here) and the `ToUnicode` map from CIDs back to characters.

/// Advance of every CID, in 1/1000 em (the font's `/DW`, and the searchable layer's unit).
pub const CID_ADVANCE: f32 = 500.0;

/// The `ToUnicode` CMap of a text layer whose CID `i + 1` is `chars[i]` (UTF-16, so
/// characters beyond the BMP survive too).
pub(super) fn to_unicode_cmap(chars: &[char]) -> String {
    let mut cmap = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    // At most 100 entries per bfchar section (the CMap format's limit).
    for (chunk_index, chunk) in chars.chunks(100).enumerate() {
        cmap.push_str(&format!("{} beginbfchar\n", chunk.len()));
        for (i, c) in chunk.iter().enumerate() {
            let cid = chunk_index * 100 + i + 1;
            let mut units = [0u16; 2];
            let utf16: String = c.encode_utf16(&mut units).iter().map(|u| format!("{u:04X}")).collect();
            cmap.push_str(&format!("<{cid:04X}> <{utf16}>\n"));
        }
        cmap.push_str("endbfchar\n");
    }
    cmap.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    cmap
}

/// A TrueType font with two empty glyphs (`.notdef` and the one every CID in use maps to
/// through the layer's `/CIDToGIDMap` stream, see `searchable/mod.rs`): the embedded program of
/// the glyph-less font. Nothing is ever drawn with it
/// (render mode 3); it is there so readers need no substitute and the PDF names no font it
/// does not carry. Built here rather than copied, so the project ships no third-party
/// binary: tables `head`, `hhea`, `maxp`, `OS/2`, `hmtx`, `cmap`, `loca`, `glyf`, `name`,
/// `post`, 1000 units per em, every advance [`CID_ADVANCE`].
pub fn glyphless_ttf() -> Vec<u8> {
    fn be16(v: &mut Vec<u8>, x: u16) {
        v.extend_from_slice(&x.to_be_bytes());
    }
    fn be32(v: &mut Vec<u8>, x: u32) {
        v.extend_from_slice(&x.to_be_bytes());
    }
    let adv = CID_ADVANCE as u16;
    let glyphs = 2u16;
    let mut head = Vec::new();
    be32(&mut head, 0x0001_0000); // version
    be32(&mut head, 0x0001_0000); // fontRevision
    be32(&mut head, 0); // checkSumAdjustment (set below)
    be32(&mut head, 0x5F0F_3CF5); // magic
    be16(&mut head, 0b1011); // flags: baseline at 0, lsb at 0, integer ppem
    be16(&mut head, 1000); // unitsPerEm
    head.extend_from_slice(&[0; 16]); // created, modified
    for v in [0i16, -200, adv as i16, 800] {
        be16(&mut head, v as u16); // xMin yMin xMax yMax
    }
    be16(&mut head, 0); // macStyle
    be16(&mut head, 8); // lowestRecPPEM
    be16(&mut head, 2); // fontDirectionHint
    be16(&mut head, 0); // indexToLocFormat: short
    be16(&mut head, 0); // glyphDataFormat

    let mut hhea = Vec::new();
    be32(&mut hhea, 0x0001_0000);
    be16(&mut hhea, 800); // ascender
    be16(&mut hhea, (-200i16) as u16); // descender
    be16(&mut hhea, 0); // lineGap
    be16(&mut hhea, adv); // advanceWidthMax
    for _ in 0..3 {
        be16(&mut hhea, 0); // minLSB, minRSB, xMaxExtent
    }
    be16(&mut hhea, 1); // caretSlopeRise
    hhea.extend_from_slice(&[0; 12]); // caretSlopeRun, caretOffset, reserved x4
    be16(&mut hhea, 0); // metricDataFormat
    be16(&mut hhea, glyphs); // numberOfHMetrics

    let mut maxp = Vec::new();
    be32(&mut maxp, 0x0001_0000);
    be16(&mut maxp, glyphs);
    for v in [0u16, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0] {
        be16(&mut maxp, v); // maxPoints.. (maxZones = 1)
    }

    let mut os2 = Vec::new();
    be16(&mut os2, 1); // version
    be16(&mut os2, adv); // xAvgCharWidth
    be16(&mut os2, 400); // usWeightClass
    be16(&mut os2, 5); // usWidthClass
    be16(&mut os2, 0); // fsType: installable
    for _ in 0..10 {
        be16(&mut os2, 0); // subscript/superscript/strikeout metrics
    }
    be16(&mut os2, 0); // sFamilyClass
    os2.extend_from_slice(&[0; 10]); // panose
    os2.extend_from_slice(&[0; 16]); // ulUnicodeRange1-4
    os2.extend_from_slice(b"NONE"); // achVendID
    be16(&mut os2, 0x40); // fsSelection: regular
    be16(&mut os2, 0x20); // usFirstCharIndex
    be16(&mut os2, 0xFFFF); // usLastCharIndex
    be16(&mut os2, 800); // sTypoAscender
    be16(&mut os2, (-200i16) as u16); // sTypoDescender
    be16(&mut os2, 0); // sTypoLineGap
    be16(&mut os2, 800); // usWinAscent
    be16(&mut os2, 200); // usWinDescent
    os2.extend_from_slice(&[0; 8]); // ulCodePageRange1-2

    let mut hmtx = Vec::new();
    for _ in 0..glyphs {
        be16(&mut hmtx, adv);
        be16(&mut hmtx, 0);
    }

    // cmap: one format-4 subtable (3,1) with only the final 0xFFFF segment.
    let mut cmap = Vec::new();
    be16(&mut cmap, 0);
    be16(&mut cmap, 1);
    be16(&mut cmap, 3);
    be16(&mut cmap, 1);
    be32(&mut cmap, 12);
    for v in [4u16, 24, 0, 2, 2, 0, 0, 0xFFFF, 0, 0xFFFF, 1, 0] {
        be16(&mut cmap, v); // format, length, language, segCountX2, searchRange, entrySelector, rangeShift, endCode, pad, startCode, idDelta, idRangeOffset
    }

    // Both glyphs empty: loca offsets all 0 (short format, offsets / 2).
    let mut loca = Vec::new();
    for _ in 0..=glyphs {
        be16(&mut loca, 0);
    }
    let glyf: Vec<u8> = Vec::new();

    let mut name = Vec::new();
    let family = "GlyphLessFont";
    let utf16: Vec<u8> = family.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let ids = [1u16, 2, 4, 6];
    let style: Vec<u8> = "Regular".encode_utf16().flat_map(u16::to_be_bytes).collect();
    be16(&mut name, 0);
    be16(&mut name, ids.len() as u16);
    be16(&mut name, 6 + 12 * ids.len() as u16);
    let mut strings = Vec::new();
    for id in ids {
        let s = if id == 2 { &style } else { &utf16 };
        be16(&mut name, 3);
        be16(&mut name, 1);
        be16(&mut name, 0x409);
        be16(&mut name, id);
        be16(&mut name, s.len() as u16);
        be16(&mut name, strings.len() as u16);
        strings.extend_from_slice(s);
    }
    name.extend_from_slice(&strings);

    let mut post = Vec::new();
    be32(&mut post, 0x0003_0000);
    post.extend_from_slice(&[0; 28]);

    let mut tables: Vec<(&[u8; 4], Vec<u8>)> = vec![
        (b"OS/2", os2),
        (b"cmap", cmap),
        (b"glyf", glyf),
        (b"head", head),
        (b"hhea", hhea),
        (b"hmtx", hmtx),
        (b"loca", loca),
        (b"maxp", maxp),
        (b"name", name),
        (b"post", post),
    ];
    tables.sort_by_key(|(tag, _)| **tag);
    let checksum = |data: &[u8]| -> u32 {
        data.chunks(4).fold(0u32, |sum, c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            sum.wrapping_add(u32::from_be_bytes(w))
        })
    };
    let n = tables.len() as u16;
    let mut out = Vec::new();
    be32(&mut out, 0x0001_0000);
    be16(&mut out, n);
    let entry_selector = 15 - n.leading_zeros() as u16; // floor(log2 n)
    let search_range = 16u16 << entry_selector;
    be16(&mut out, search_range);
    be16(&mut out, entry_selector);
    be16(&mut out, n * 16 - search_range);
    let mut offset = 12 + 16 * u32::from(n);
    let mut body = Vec::new();
    let mut head_at = 0usize;
    for (tag, data) in &tables {
        out.extend_from_slice(*tag);
        be32(&mut out, checksum(data));
        be32(&mut out, offset);
        be32(&mut out, data.len() as u32);
        if *tag == b"head" {
            head_at = (offset as usize) + 8;
        }
        body.extend_from_slice(data);
        while body.len() % 4 != 0 {
            body.push(0);
        }
        offset = 12 + 16 * u32::from(n) + body.len() as u32;
    }
    out.extend_from_slice(&body);
    let adjust = 0xB1B0_AFBAu32.wrapping_sub(checksum(&out));
    out[head_at..head_at + 4].copy_from_slice(&adjust.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_glyphless_font_has_a_table_directory_mupdf_can_load() {
        let ttf = glyphless_ttf();
        assert_eq!(&ttf[0..4], &[0, 1, 0, 0]);
        let font = mupdf::Font::from_bytes("GlyphLessFont", &ttf).expect("MuPDF loads the generated font");
        assert_eq!(font.name(), "GlyphLessFont");
    }
}
