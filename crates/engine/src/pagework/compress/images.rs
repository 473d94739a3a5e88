//! The engine's own image pass, run before MuPDF's image rewriter: the grey and colour
//! images stored as DCT (JPEG) or flate, and the bitonal (1-bit) images, are decoded,
//! downsampled and re-encoded here, spread over the cores; MuPDF's rewriter then only
//! sees the rest (indexed colour, CMYK, 16-bit, JPX, ...; inline images are kept as they
//! are). Images too large to decode (csrc/compressor.h, ENGINE_KEEP_ABOVE) are kept as
//! stored and hidden from the rewriter.
//!
//! Why: MuPDF's rewriter is single-threaded, decodes JPEG with IJG libjpeg (no SIMD)
//! at full size, scales bicubically at full resolution and always writes progressive
//! JPEG. Here JPEGs are decoded by libjpeg-turbo scaled in the DCT domain (1/2, 1/4,
//! 1/8: only the low frequencies are transformed), the remaining ratio is an area
//! average ([`super::resample`]), and the output is progressive JPEG (libjpeg-turbo,
//! see [`super::dct_image::JPEG_FLAGS`]) or flate (zlib-rs), streamed row by row.
//!
//! Policy: the effective dpi is the image's largest use; above the level's threshold
//! it is downsampled to the target dpi; JPEGs are re-encoded at the level's quality;
//! flate images become JPEG at `balanced` only when that is at least 10% smaller with
//! an SSIM of at least 0.95 against the flate pixels (photos; flat synthetic images stay
//! flate), at `strong` whenever JPEG is the smaller; bitonal images and 8-bit grey
//! images that are only black and white go to [`super::bitonal`] (1-bit, CCITT G4 or
//! flate), except, at `balanced`, a black-and-white 8-bit image that 1-bit would
//! downsample: it is averaged to grey at the target dpi and deflated, as Ghostscript
//! does; a new encoding replaces the old only when smaller. Anything that does not
//! decode cleanly is left to the rewriter.
//!
//! Threads: the MuPDF context stays on the calling thread, which reads each image's
//! stored bytes and writes the results back; workers only see bytes. At most
//! `2 x threads` images are in flight, so memory stays bounded whatever the count.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, sync_channel, Receiver};
use std::sync::{Arc, Mutex};

use flate2::write::ZlibEncoder;
use flate2::Compression;

use super::bitonal::{self, deflate, Bitonal};
use super::dct_image::{dct, dct_size, encode_jpeg};
use super::ffi::{Coding, Doc, ImageInfo};
use super::flate_rows::FlateRows;
use super::jpeg;
use super::resample::Downsampler;
use super::ssim::mean_ssim;
use super::ImageSettings;
use crate::control::JobControl;
use crate::error::Result;

/// Largest decoded image (bytes) the pass takes, bounding the memory of parallel
/// decodes (a JPEG that is not downsampled is decoded whole); bigger ones are left to
/// the rewriter, as before the pass.
const MAX_DECODED: u64 = 512 << 20;

/// What the pass did, for tests and tuning.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PassStats {
    /// Images replaced by a smaller encoding.
    pub replaced: usize,
    /// Images re-encoded but kept (the new encoding was not smaller).
    pub kept: usize,
    /// Images left to MuPDF's rewriter.
    pub left: usize,
}

enum Outcome {
    Replace {
        data: Vec<u8>,
        w: u32,
        h: u32,
        coding: Coding,
    },
    /// 1-bit rows: the C side picks CCITT G4 or flate (and keeps the original when
    /// neither is smaller).
    Bitonal(Bitonal),
    NotSmaller,
    Declined,
}

/// Runs the pass over `doc`'s eligible images.
pub(crate) fn run(doc: &mut Doc, settings: ImageSettings, control: &JobControl) -> Result<PassStats> {
    let mut stats = PassStats::default();
    let mut todo: Vec<ImageInfo> = Vec::new();
    for info in doc.gather() {
        if info.jbig2 && bitonal::target_size(info.width, info.height, info.dpi, &settings) == (info.width, info.height)
        {
            // JBIG2 not downsampled: G4 and flate are larger (scanned-jbig2.pdf: 8.8 KB
            // of JBIG2, 40 KB of G4); not worth decoding to find out.
            doc.mark_handled(info.index);
            stats.kept += 1;
        } else if takes(&info) {
            todo.push(info);
        } else {
            stats.left += 1;
        }
    }
    if todo.is_empty() {
        return Ok(stats);
    }
    // Largest first: the long jobs start early and the small ones fill the gaps.
    todo.sort_by_key(|i| std::cmp::Reverse(i.width as u64 * i.height as u64 * i.comps as u64));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8).min(todo.len());
    let todo = &todo;
    std::thread::scope(|scope| -> Result<()> {
        let (job_tx, job_rx) = sync_channel::<(usize, Vec<u8>)>(threads);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (res_tx, res_rx) = channel::<(usize, Outcome)>();
        for _ in 0..threads {
            let (job_rx, res_tx) = (Arc::clone(&job_rx), res_tx.clone());
            scope.spawn(move || worker(todo, settings, &job_rx, &res_tx));
        }
        // Only the workers hold the receivers: were they all gone, sending fails instead
        // of blocking.
        drop(job_rx);
        drop(res_tx);
        let mut fed = Ok(());
        for (k, info) in todo.iter().enumerate() {
            if let Err(e) = control.checkpoint() {
                fed = Err(e);
                break;
            }
            while let Ok((k, out)) = res_rx.try_recv() {
                apply(doc, &todo[k], out, &mut stats);
            }
            match doc.raw(info.index) {
                Ok(raw) => {
                    if job_tx.send((k, raw)).is_err() {
                        break;
                    }
                }
                Err(_) => stats.left += 1,
            }
        }
        drop(job_tx);
        for (k, out) in res_rx {
            apply(doc, &todo[k], out, &mut stats);
        }
        fed
    })?;
    Ok(stats)
}

/// Whether the pass can take this image at all (the decision to re-encode it comes
/// after decoding).
fn takes(info: &ImageInfo) -> bool {
    let decoded = info.width as u64 * info.height as u64 * info.comps as u64;
    if decoded == 0 || decoded > MAX_DECODED {
        return false;
    }
    match info.coding {
        Coding::Dct => jpeg::available(),
        Coding::Flate => true,
        Coding::Bitonal => true,
    }
}

fn worker(
    todo: &[ImageInfo],
    settings: ImageSettings,
    jobs: &Mutex<Receiver<(usize, Vec<u8>)>>,
    results: &std::sync::mpsc::Sender<(usize, Outcome)>,
) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((k, raw)) = job else { return };
        // A bug in one image's processing must not take the job down: that image is
        // left to MuPDF's rewriter.
        let out = catch_unwind(AssertUnwindSafe(|| process(&todo[k], raw, &settings))).unwrap_or(Outcome::Declined);
        if results.send((k, out)).is_err() {
            return;
        }
    }
}

fn apply(doc: &mut Doc, info: &ImageInfo, out: Outcome, stats: &mut PassStats) {
    match out {
        Outcome::Replace { data, w, h, coding } => match doc.replace(info.index, &data, w, h, coding) {
            Ok(()) => stats.replaced += 1,
            Err(_) => stats.left += 1,
        },
        Outcome::Bitonal(b) => match doc.replace_bitonal(info.index, &b.data, b.w, b.h, b.encoding) {
            Ok(true) => stats.replaced += 1,
            Ok(false) => stats.kept += 1,
            Err(_) => stats.left += 1,
        },
        Outcome::NotSmaller => {
            doc.mark_handled(info.index);
            stats.kept += 1;
        }
        Outcome::Declined => stats.left += 1,
    }
}

/// Output size: the target dpi's when the image is used above the threshold (rounded
/// as MuPDF's rewriter does), else unchanged.
pub(crate) fn target_size(info: &ImageInfo, s: &ImageSettings) -> (u32, u32) {
    let (w, h) = (info.width, info.height);
    if !(info.dpi > s.threshold_dpi as f32) {
        return (w, h);
    }
    let f = s.target_dpi as f32 / info.dpi;
    let tw = ((w as f32 * f + 0.5) as u32).clamp(1, w);
    let th = ((h as f32 * f + 0.5) as u32).clamp(1, h);
    if tw >= w && th >= h {
        (w, h)
    } else {
        (tw, th)
    }
}

fn process(info: &ImageInfo, raw: Vec<u8>, s: &ImageSettings) -> Outcome {
    let (tw, th) = match info.coding {
        Coding::Dct => dct_size(info, target_size(info, s)),
        _ => target_size(info, s),
    };
    let encoded = match info.coding {
        Coding::Dct => dct(info, &raw, tw, th, s).map(|(d, c)| Encoded::Image(d, c)),
        Coding::Flate => flate(info, &raw, tw, th, s),
        Coding::Bitonal => {
            let sizes = bitonal::candidate_sizes(info.width, info.height, info.dpi, s);
            bitonal::encode(raw, info.width, info.height, &sizes).map(Encoded::Bitonal)
        }
    };
    match encoded {
        // Flate at the same size: the save's re-deflation (zlib level 9, predictor dropped
        // when smaller, as at light) does it; replacing it here could make balanced larger
        // than light (chart-slanted-text.pdf).
        Some(Encoded::Image(_, Coding::Flate)) if (tw, th) == (info.width, info.height) => Outcome::NotSmaller,
        Some(Encoded::Image(data, coding)) if data.len() < info.stored_len => {
            Outcome::Replace { data, w: tw, h: th, coding }
        }
        Some(Encoded::Image(..)) => Outcome::NotSmaller,
        Some(Encoded::Bitonal(b)) => Outcome::Bitonal(b),
        Some(Encoded::Keep) => Outcome::NotSmaller,
        None => Outcome::Declined,
    }
}

/// A worker's new encoding of one image.
enum Encoded {
    Image(Vec<u8>, Coding),
    Bitonal(Bitonal),
    /// Kept as stored (the save re-deflates it).
    Keep,
}

/// True when every sample is 0 or 255 (and, for colour, R = G = B): MuPDF's rewriter
/// would classify the image as bitonal.
fn bitonal_row(row: &[u8], comps: u32) -> bool {
    if comps == 1 {
        row.iter().all(|&v| v == 0 || v == 255)
    } else {
        row.chunks_exact(3).all(|p| (p[0] == 0 || p[0] == 255) && p[0] == p[1] && p[1] == p[2])
    }
}

/// Where the (downsampled) rows go: deflated (at balanced), and kept for JPEG
/// encoding (when libjpeg-turbo is there).
struct Sink {
    z: Option<ZlibEncoder<Vec<u8>>>,
    px: Option<Vec<u8>>,
}

impl Sink {
    fn write(&mut self, row: &[u8]) -> std::io::Result<()> {
        if let Some(z) = self.z.as_mut() {
            std::io::Write::write_all(z, row)?;
        }
        if let Some(v) = self.px.as_mut() {
            v.extend_from_slice(row);
        }
        Ok(())
    }
}

/// zlib level of the pass's flate output, which the save does not deflate again: 9 up to
/// 4 MiB of samples, 6 above (scanned-multipage-assembly.pdf's 4500 x 4500 colour image
/// re-deflated at level 9 by the save was most of the file's 2.1 s; 0.64 s without).
fn flate_level(w: u32, h: u32, comps: u32) -> Compression {
    if w as u64 * h as u64 * comps as u64 <= 4 << 20 {
        Compression::best()
    } else {
        Compression::default()
    }
}

/// A flate image used at balanced becomes JPEG only when that is at least this much
/// smaller than its flate encoding...
const JPEG_AT_MOST: f64 = 0.9;
/// ...and this close to the (downsampled) pixels: photos pass, flat synthetic images
/// (screenshots, charts), where JPEG rings around edges, stay flate.
const JPEG_MIN_SSIM: f64 = 0.95;
/// A lower bound of an image's flate size (zlib-rs at [`flate_level`]) as a share of
/// libdeflate's level 1, for deciding JPEG against flate without the slow deflate when
/// the JPEG is far smaller. Measured over the 28 flate images the pass takes in the
/// corpus (balanced and strong): 0.859 to 0.974 (zlib-rs's own level 1 was no bound:
/// 0.175 on a flat 9000 px image; its level 6 was 0.924 to 1.000 but 3x slower than
/// libdeflate's level 1 on a photo).
const SLOW_OVER_FAST: f64 = 0.8;

/// The length of `data` deflated (zlib format) by libdeflate at level 1.
fn fast_deflate_len(data: &[u8]) -> Option<usize> {
    use libdeflate_sys::{
        libdeflate_alloc_compressor, libdeflate_free_compressor, libdeflate_zlib_compress,
        libdeflate_zlib_compress_bound,
    };
    // SAFETY: the compressor is checked for NULL, used on this thread only and freed;
    // the output buffer is as large as libdeflate's bound for the input.
    unsafe {
        let c = libdeflate_alloc_compressor(1);
        if c.is_null() {
            return None;
        }
        let bound = libdeflate_zlib_compress_bound(c, data.len());
        let mut out = vec![0u8; bound];
        let n = libdeflate_zlib_compress(c, data.as_ptr().cast(), data.len(), out.as_mut_ptr().cast(), bound);
        libdeflate_free_compressor(c);
        (n > 0).then_some(n)
    }
}

fn flate(info: &ImageInfo, raw: &[u8], tw: u32, th: u32, s: &ImageSettings) -> Option<Encoded> {
    let (w, h, c) = (info.width, info.height, info.comps);
    let row_len = w as usize * c as usize;
    let level = flate_level(tw, th, c);
    // With libjpeg-turbo the (downsampled) rows are kept, for the JPEG trial and the
    // deflates that set its bar (below); without it they are deflated as they come.
    let mut sink = Sink {
        z: (!jpeg::available()).then(|| ZlibEncoder::new(Vec::with_capacity(raw.len()), level)),
        px: jpeg::available().then(|| Vec::with_capacity(tw as usize * th as usize * c as usize)),
    };
    let mut rows = FlateRows::new(raw, row_len, c as usize, info.png_predictor);
    let mut bitonal = true;
    // The rows packed to bits while every sample so far is black or white (grey only).
    let mut bits = (c == 1).then(|| Vec::with_capacity((w as usize).div_ceil(8) * h as usize));
    let mut scaler = ((tw, th) != (w, h)).then(|| Downsampler::new(w, h, tw, th, c));
    for _ in 0..h {
        let row = rows.next_row()?;
        if bitonal {
            bitonal = bitonal_row(row, c);
            match bits.as_mut() {
                Some(b) if bitonal => bitonal::pack_row(row, b),
                _ => bits = None,
            }
        }
        match scaler.as_mut() {
            Some(d) => d.push(row, &mut |r| sink.write(r)).ok()?,
            None => sink.write(row).ok()?,
        }
    }
    let (bw, bh) = bitonal::target_size(w, h, info.dpi, s);
    // Black and white, downsampled, at balanced: grey, as Ghostscript's /ebook keeps an
    // 8-bit image. The area average keeps the edges' anti-aliasing, which a 1-bit image at
    // the bitonal target (twice the dpi) loses (scanned-typewriter-2400dpi.pdf at 100 dpi:
    // SSIM 0.980 as 1-bit at 300 dpi, 5.2 KB; 1.000 grey at 150 dpi, 11.9 KB; gs 15.5 KB).
    // Deflated only: JPEG rings around black-on-white edges.
    let grey_average = bitonal && s.lossless_stays_lossless && (bw, bh) != (w, h) && (tw, th) != (w, h);
    if bitonal && !grey_average {
        // Black and white: 1-bit (CCITT G4 or flate); colour ones are left to MuPDF.
        return bitonal::encode(bits?, w, h, &bitonal::candidate_sizes(w, h, info.dpi, s)).map(Encoded::Bitonal);
    }
    let Some(px) = sink.px else {
        return Some(Encoded::Image(sink.z?.finish().ok()?, Coding::Flate));
    };
    if grey_average {
        return Some(Encoded::Image(deflate(&px, level)?, Coding::Flate));
    }
    let jpeg_close = |j: &[u8]| {
        let back = jpeg::decode(j, tw, th, c, -1, tw, th).filter(|(bw, bh, _)| (*bw, *bh) == (tw, th));
        back.is_some_and(|(_, _, b)| mean_ssim(&px, &b, tw, th, c) >= JPEG_MIN_SSIM)
    };
    // Kept at its size and flate at balanced, the image is re-deflated by the save
    // (process()), so the flate encodings here only set the bar for the JPEG.
    let keeps_size = s.lossless_stays_lossless && (tw, th) == (w, h);
    let flate_or_keep = |z: Option<Vec<u8>>| match z {
        Some(z) if !keeps_size => Some(Encoded::Image(z, Coding::Flate)),
        _ => Some(Encoded::Keep),
    };
    // The bar a JPEG of `len` bytes must pass against the flate size `z`: at balanced at
    // most JPEG_AT_MOST of it (and close to the pixels), at strong no larger.
    let bar = if s.lossless_stays_lossless { JPEG_AT_MOST } else { 1.0 };
    let under_bar = |len: usize, z: f64| len as f64 <= bar * z;
    // The save's deflate of an image kept at its size is never larger than its stored
    // bytes: a JPEG over the bar against them loses without a deflate.
    let loses_to_stored = |len: usize| keeps_size && !under_bar(len, info.stored_len as f64);
    // The fast deflate that sets the bar (below) runs beside the JPEG encoding: an image
    // alone in its file is the whole pass, and the pass's other worker is idle then. When
    // the JPEG is done first, its closeness test (needed at balanced if it wins) runs
    // while the deflate finishes (annotator-base64-image.pdf: the deflate of its 1.5 MB of
    // photo took longer than the JPEG encoding).
    let (j, fast, early_close) = std::thread::scope(|scope| {
        let fast = scope.spawn(|| fast_deflate_len(&px));
        let j = encode_jpeg(&px, tw, th, c, s.jpeg_quality, s);
        let early_close = match &j {
            Some(j) if s.lossless_stays_lossless && !fast.is_finished() && !loses_to_stored(j.len()) => {
                Some(jpeg_close(j))
            }
            _ => None,
        };
        (j, fast.join().ok().flatten(), early_close)
    });
    let Some(j) = j else {
        return flate_or_keep(if keeps_size { None } else { deflate(&px, level) });
    };
    let passes = |z: f64| under_bar(j.len(), z);
    if loses_to_stored(j.len()) {
        return Some(Encoded::Keep);
    }
    // A fast deflate first: a JPEG far under it wins without the slow one (a photo's
    // level 9 was 40 of annotator-base64-image.pdf's 80 ms, libdeflate's level 1 9 ms)...
    let close = || early_close.unwrap_or_else(|| !s.lossless_stays_lossless || jpeg_close(&j));
    if fast.is_some_and(|n| passes(SLOW_OVER_FAST * n as f64)) && close() {
        return Some(Encoded::Image(j, Coding::Dct));
    }
    // ...and one over the bar against it loses without one: the slow deflate is smaller
    // than libdeflate's level 1 (at most 0.974 of it, see SLOW_OVER_FAST; were it not, a
    // JPEG that would have won is missed and the image stays lossless). An image kept
    // at its size is then left to the save's deflates (chart-slanted-text.pdf: its level-9
    // deflate here was a third of the file's time).
    if keeps_size && fast.is_some_and(|n| !passes(n as f64)) {
        return Some(Encoded::Keep);
    }
    let best = deflate(&px, level)?;
    if passes(best.len() as f64) && close() {
        Some(Encoded::Image(j, Coding::Dct))
    } else {
        flate_or_keep(Some(best))
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::super::resample::downsample;
    use super::*;

    fn info(w: u32, h: u32, comps: u32, dpi: f32, png: bool) -> ImageInfo {
        ImageInfo {
            index: 0,
            coding: Coding::Flate,
            width: w,
            height: h,
            comps,
            png_predictor: png,
            flate_wrapped: false,
            color_transform: -1,
            dpi,
            stored_len: usize::MAX,
            jbig2: false,
        }
    }

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    fn inflate(data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        flate2::read::ZlibDecoder::new(data).read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn target_size_follows_the_threshold() {
        let s = super::super::BALANCED;
        assert_eq!(target_size(&info(3000, 2000, 3, 300.0, false), &s), (1500, 1000));
        assert_eq!(target_size(&info(3000, 2000, 3, 225.0, false), &s), (3000, 2000));
        assert_eq!(target_size(&info(3000, 2000, 3, 226.0, false), &s), (1991, 1327));
    }

    #[test]
    fn a_jpeg_just_over_a_dct_scale_of_its_target_takes_that_scale() {
        let s = super::super::BALANCED;
        // 290 dpi: target 1274 x 1788 for 150 dpi; half (1232 x 1728) is within 5%.
        let scan = info(2464, 3456, 3, 290.0, false);
        assert_eq!(target_size(&scan, &s), (1274, 1788));
        assert_eq!(dct_size(&scan, target_size(&scan, &s)), (1232, 1728));
        // 250 dpi: target 1800 x 1200 for 3000 x 2000; half (1500 x 1000) is 17% short.
        let far = info(3000, 2000, 3, 250.0, false);
        assert_eq!(dct_size(&far, target_size(&far, &s)), target_size(&far, &s));
        // A size kept stays.
        let kept = info(3000, 2000, 3, 200.0, false);
        assert_eq!(dct_size(&kept, target_size(&kept, &s)), (3000, 2000));
    }

    #[test]
    fn a_flate_image_is_halved_and_stays_flate_at_balanced() {
        let (w, h) = (400u32, 300u32);
        let px: Vec<u8> = (0..w * h * 3).map(|i| ((i / 3 % w) as u8) ^ ((i / 3 / w) as u8)).collect();
        let raw = deflate(&px);
        let Some(Encoded::Image(out, coding)) =
            flate(&info(w, h, 3, 300.0, false), &raw, 200, 150, &super::super::BALANCED)
        else {
            panic!("not an image")
        };
        assert_eq!(coding, Coding::Flate);
        let back = inflate(&out);
        assert_eq!(back, downsample(&px, w, h, 200, 150, 3));
    }

    #[test]
    fn a_black_and_white_grey_image_becomes_1_bit_unless_balanced_downsamples_it() {
        let (w, h) = (64u32, 64u32);
        let px: Vec<u8> = (0..w * h).map(|i| if (i / 7) % 2 == 0 { 0 } else { 255 }).collect();
        let raw = deflate(&px);
        // strong, above its bitonal threshold (300 dpi): 1-bit at 200 dpi, or, this image being
        // small, at a milder level's size where that takes fewer bytes (bitonal::candidate_sizes).
        let Some(Encoded::Bitonal(b)) = flate(&info(w, h, 1, 600.0, false), &raw, 8, 8, &super::super::STRONG) else {
            panic!("not bitonal")
        };
        let sizes = super::super::bitonal::candidate_sizes(w, h, 600.0, &super::super::STRONG);
        assert_eq!(sizes[0], (21, 21));
        assert!(sizes.contains(&(b.w, b.h)), "{:?} not in {sizes:?}", (b.w, b.h));
        // balanced, above 450 dpi: the grey area average at 150 dpi, deflated (no JPEG).
        let Some(Encoded::Image(out, Coding::Flate)) =
            flate(&info(w, h, 1, 600.0, false), &raw, 16, 16, &super::super::BALANCED)
        else {
            panic!("not grey flate")
        };
        assert_eq!(inflate(&out), downsample(&px, w, h, 16, 16, 1));
        // balanced at 300 dpi: not downsampled by 1-bit, so 1-bit at the same size.
        let Some(Encoded::Bitonal(b)) = flate(&info(w, h, 1, 300.0, false), &raw, 32, 32, &super::super::BALANCED)
        else {
            panic!("not bitonal")
        };
        assert_eq!((b.w, b.h), (64, 64));
    }

    #[test]
    fn a_truncated_flate_image_is_left_to_the_rewriter() {
        let px: Vec<u8> = (0..100u32 * 100).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
        let raw = deflate(&px);
        let cut = &raw[..raw.len() / 2];
        assert!(flate(&info(100, 100, 1, 300.0, false), &raw, 50, 50, &super::super::BALANCED).is_some());
        assert!(flate(&info(100, 100, 1, 300.0, false), cut, 50, 50, &super::super::BALANCED).is_none());
    }
}
