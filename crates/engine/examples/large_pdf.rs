//! Writes a deterministic scanned-looking PDF of many pages for the large-document benchmark
//! (`bun run bench large`; docs/scaling.md, "Large documents"):
//!
//! `cargo run -p engine --release --example large_pdf -- <output.pdf> [--pages 5000] [--grain 2]
//! [--quality 64] [--threads 2]`
//!
//! Every page is its own 300-dpi greyscale A4 JPEG (2480 × 3508 pixels): a paper grain drawn
//! from a generator seeded with the page number, a block whose place and shade depend on the
//! page, and lines of real English words in Helvetica (a header with the page number, then a
//! paragraph), so no two pages share an image object and OCR has words to read. Nothing depends
//! on the clock or the machine: the same arguments write the same bytes. The defaults give about
//! 440 KB a page (5,000 pages: about 2.2 GB). The file is written as it is made (one page in memory
//! per thread), with a classic cross-reference table.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::mpsc::sync_channel;

use jpeg_encoder::{ColorType, Encoder, PixelDensity};
use mupdf::{ColorParams, Colorspace, Device, Font, Matrix, Pixmap};

const WIDTH: u32 = 2480;
const HEIGHT: u32 = 3508;
const DPI: f32 = 300.0;
const PAGE_W_PT: f32 = 595.276;
const PAGE_H_PT: f32 = 841.89;

/// The vocabulary of the text lines, split at whitespace.
const WORDS: &str = "\
    account balance invoice payment customer supplier delivery order quantity price total amount receipt \
    ledger quarter report annual budget revenue expense office building street river harbour station \
    garden market village county council meeting minutes agenda member committee decision proposal \
    schedule contract service product material shipment warehouse inventory record archive document \
    letter notice summary chapter section paragraph figure table column number morning evening weather \
    winter summer spring autumn north south east west bridge railway engine machine worker manager \
    director company industry public private general special regular current previous following second \
    third final large small early late quick careful simple useful certain common local national written \
    printed signed approved received returned opened closed the and of to in for with on by from at as \
    was were is are has had will may each every all some this that which their our new old";

/// SplitMix64: a small generator whose stream depends only on its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Args {
    output: String,
    pages: u32,
    grain: i32,
    quality: u8,
    threads: u32,
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let mut a = Args { output: String::new(), pages: 5000, grain: 2, quality: 64, threads: 2 };
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
        match arg.as_str() {
            "--pages" => a.pages = value("--pages").parse().unwrap_or_else(|_| usage("--pages: a number")),
            "--grain" => a.grain = value("--grain").parse().unwrap_or_else(|_| usage("--grain: a number")),
            "--quality" => a.quality = value("--quality").parse().unwrap_or_else(|_| usage("--quality: 1-100")),
            "--threads" => a.threads = value("--threads").parse().unwrap_or_else(|_| usage("--threads: a number")),
            s if s.starts_with("--") => usage(&format!("unknown option {s}")),
            s => a.output = s.to_string(),
        }
    }
    if a.output.is_empty() || a.pages == 0 || a.threads == 0 {
        usage("an output path, at least one page and one thread are needed");
    }
    a
}

fn usage(msg: &str) -> ! {
    eprintln!("large_pdf: {msg}\nusage: large_pdf <output.pdf> [--pages N] [--grain A] [--quality Q] [--threads T]");
    std::process::exit(2);
}

/// The page's lines: a header naming the page, then a paragraph of words drawn by the page's generator.
fn page_lines(page: u32, pages: u32, words: &[&str], rng: &mut Rng) -> Vec<(f32, String)> {
    let mut lines = vec![
        (20.0, format!("Ledger volume {} - page {} of {}", page / 100 + 1, page + 1, pages)),
        (12.0, format!("Reference {:08} / register {}", rng.below(100_000_000), 1000 + page)),
    ];
    for _ in 0..16 {
        let mut line = String::new();
        while line.len() < 64 {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(words[rng.below(words.len() as u64) as usize]);
        }
        let mut chars = line.chars();
        let first = chars.next().map(|c| c.to_ascii_uppercase()).unwrap_or(' ');
        lines.push((11.0, format!("{first}{}.", chars.as_str())));
    }
    lines
}

/// Draws `lines` in black on a white greyscale pixmap of the page (glyph outlines filled by MuPDF).
fn draw_text(font: &Font, lines: &[(f32, String)]) -> Vec<u8> {
    let mut pix =
        Pixmap::new_with_w_h(&Colorspace::device_gray(), WIDTH as i32, HEIGHT as i32, false).expect("a page pixmap");
    pix.clear_with(255).expect("clearing the pixmap");
    {
        let dev = Device::from_pixmap(&pix).expect("a draw device");
        let px = DPI / 72.0;
        let mut y_pt = 90.0;
        for (size, text) in lines {
            y_pt += size * 1.9;
            let mut x_pt = 72.0;
            for ch in text.chars() {
                let gid = font.encode_character(ch as i32).expect("a glyph");
                // Font units to pixels: scale by the size, flip y (glyphs go up, pixels down).
                let ctm = Matrix::new(size * px, 0.0, 0.0, -size * px, x_pt * px, y_pt * px);
                if let Some(path) = font.outline_glyph_with_ctm(gid, &ctm).expect("an outline") {
                    dev.fill_path(
                        &path,
                        false,
                        &Matrix::IDENTITY,
                        &Colorspace::device_gray(),
                        &[0.0],
                        1.0,
                        ColorParams::default(),
                    )
                    .expect("filling a glyph");
                }
                x_pt += font.advance_glyph(gid).expect("an advance") * size;
            }
        }
    }
    pix.samples().to_vec()
}

/// One page's JPEG: grain and a block from the page's generator under the drawn text.
fn page_jpeg(page: u32, args: &Args, font: &Font) -> Vec<u8> {
    let mut rng = Rng(0x5eed_0000_0000_0000 ^ u64::from(page));
    let words: Vec<&str> = WORDS.split_ascii_whitespace().collect();
    let lines = page_lines(page, args.pages, &words, &mut rng);
    let text = draw_text(font, &lines);
    let (bx, by) = (rng.below(u64::from(WIDTH) - 800) as usize, 1400 + rng.below(1600) as usize);
    let (bw, bh) = (300 + rng.below(500) as usize, 200 + rng.below(400) as usize);
    let shade = 200 + rng.below(30) as i32;
    let mut out = vec![0u8; (WIDTH * HEIGHT) as usize];
    let w = WIDTH as usize;
    // The grain changes every 2 × 2 pixels: a scanner's texture rather than per-pixel noise.
    let mut grain_row = vec![0i32; w / 2 + 1];
    for y in 0..HEIGHT as usize {
        if y % 2 == 0 {
            for g in grain_row.iter_mut() {
                *g = rng.below((2 * args.grain + 1) as u64) as i32 - args.grain;
            }
        }
        let in_block_y = y >= by && y < by + bh;
        for x in 0..w {
            let paper = if in_block_y && x >= bx && x < bx + bw { shade } else { 238 };
            let v = (paper + grain_row[x / 2]).min(i32::from(text[y * w + x]));
            out[y * w + x] = v.clamp(0, 255) as u8;
        }
    }
    let mut jpeg = Vec::with_capacity(512 * 1024);
    let mut enc = Encoder::new(&mut jpeg, args.quality);
    enc.set_density(PixelDensity::dpi(DPI as u16));
    enc.encode(&out, WIDTH as u16, HEIGHT as u16, ColorType::Luma).expect("encoding the page");
    jpeg
}

/// Writes the PDF, counting bytes for the cross-reference table.
struct PdfOut {
    w: BufWriter<File>,
    at: u64,
    offsets: Vec<u64>,
}

impl PdfOut {
    fn bytes(&mut self, b: &[u8]) {
        self.w.write_all(b).expect("writing the PDF");
        self.at += b.len() as u64;
    }
    fn object(&mut self, num: usize, body: &[u8]) {
        self.offsets[num] = self.at;
        self.bytes(format!("{num} 0 obj\n").as_bytes());
        self.bytes(body);
        self.bytes(b"\nendobj\n");
    }
}

fn main() {
    let args = parse_args();
    let pages = args.pages as usize;
    // Objects: 1 catalog, 2 page tree, then per page its image, content stream and page.
    let objects = 3 + 3 * pages;
    let file = File::create(&args.output).unwrap_or_else(|e| usage(&format!("{}: {e}", args.output)));
    let mut pdf = PdfOut { w: BufWriter::with_capacity(1 << 20, file), at: 0, offsets: vec![0; objects] };
    pdf.bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n");
    let started = std::time::Instant::now();

    std::thread::scope(|s| {
        let threads = args.threads as usize;
        let mut receivers = Vec::new();
        for t in 0..threads {
            // Two pages ahead per thread at most: memory stays a few pages whatever the count.
            let (tx, rx) = sync_channel::<Vec<u8>>(2);
            receivers.push(rx);
            let args = &args;
            s.spawn(move || {
                let font = Font::new("Helvetica").expect("the base-14 Helvetica");
                for page in (t..pages).step_by(threads) {
                    if tx.send(page_jpeg(page as u32, args, &font)).is_err() {
                        return;
                    }
                }
            });
        }
        for page in 0..pages {
            let jpeg = receivers[page % threads].recv().expect("a page from its thread");
            let (img, content, page_obj) = (3 + 3 * page, 4 + 3 * page, 5 + 3 * page);
            let mut body = format!(
                "<< /Type /XObject /Subtype /Image /Width {WIDTH} /Height {HEIGHT} /ColorSpace /DeviceGray \
                 /BitsPerComponent 8 /Filter /DCTDecode /Length {} >>\nstream\n",
                jpeg.len()
            )
            .into_bytes();
            body.extend_from_slice(&jpeg);
            body.extend_from_slice(b"\nendstream");
            pdf.object(img, &body);
            let draw = format!("q {PAGE_W_PT} 0 0 {PAGE_H_PT} 0 0 cm /Im0 Do Q\n");
            pdf.object(content, format!("<< /Length {} >>\nstream\n{draw}endstream", draw.len()).as_bytes());
            pdf.object(
                page_obj,
                format!(
                    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_W_PT} {PAGE_H_PT}] \
                     /Resources << /XObject << /Im0 {img} 0 R >> >> /Contents {content} 0 R >>"
                )
                .as_bytes(),
            );
            if (page + 1) % 250 == 0 {
                eprintln!(
                    "large_pdf: {} pages, {:.0} MB, {:.0} s",
                    page + 1,
                    pdf.at as f64 / 1e6,
                    started.elapsed().as_secs_f64()
                );
            }
        }
    });

    pdf.object(1, b"<< /Type /Catalog /Pages 2 0 R >>");
    let kids: Vec<String> = (0..pages).map(|p| format!("{} 0 R", 5 + 3 * p)).collect();
    pdf.object(2, format!("<< /Type /Pages /Count {pages} /Kids [{}] >>", kids.join(" ")).as_bytes());
    let xref = pdf.at;
    let mut table = format!("xref\n0 {objects}\n0000000000 65535 f \n");
    for off in &pdf.offsets[1..] {
        table.push_str(&format!("{off:010} 00000 n \n"));
    }
    table.push_str(&format!("trailer\n<< /Size {objects} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"));
    pdf.bytes(table.as_bytes());
    pdf.w.flush().expect("flushing the PDF");
    eprintln!("large_pdf: wrote {} ({pages} pages, {} bytes)", args.output, pdf.at);
}
