//! JPEG decoding (with DCT-domain downscaling) and encoding for the image pass, with the
//! system's libjpeg-turbo loaded by csrc/turbo.c. Each call has its own codec state, so
//! worker threads call these freely. Without the library (or without jpeglib.h at build
//! time) [`available`] is false and the pass leaves JPEG work to MuPDF's rewriter.

#[cfg(engine_turbo)]
mod imp {
    use std::ffi::{c_char, c_int, c_uchar, c_ulong, CStr};
    use std::sync::OnceLock;

    extern "C" {
        fn engine_turbo_decoder_available() -> c_int;
        fn engine_turbo_decode(
            data: *const c_uchar,
            len: c_ulong,
            w: c_int,
            h: c_int,
            comps: c_int,
            transform: c_int,
            min_w: c_int,
            min_h: c_int,
            out: *mut *mut c_uchar,
            ow: *mut c_int,
            oh: *mut c_int,
            msg: *mut c_char,
            msglen: c_int,
        ) -> c_int;
        fn engine_turbo_encode_flags(
            px: *const c_uchar,
            w: c_int,
            h: c_int,
            stride: c_int,
            comps: c_int,
            quality: c_int,
            dpi: c_int,
            flags: c_int,
            out: *mut *mut c_uchar,
            outlen: *mut c_ulong,
            msg: *mut c_char,
            msglen: c_int,
        ) -> c_int;
        fn engine_turbo_free(p: *mut c_uchar);
    }

    pub fn available() -> bool {
        static ON: OnceLock<bool> = OnceLock::new();
        *ON.get_or_init(|| unsafe { engine_turbo_decoder_available() } != 0)
    }

    pub fn decode(
        data: &[u8],
        w: u32,
        h: u32,
        comps: u32,
        transform: i32,
        min_w: u32,
        min_h: u32,
    ) -> Option<(u32, u32, Pixels)> {
        let mut out: *mut c_uchar = std::ptr::null_mut();
        let (mut ow, mut oh): (c_int, c_int) = (0, 0);
        let mut msg = [0 as c_char; 256];
        let rc = unsafe {
            engine_turbo_decode(
                data.as_ptr(),
                data.len() as c_ulong,
                w as c_int,
                h as c_int,
                comps as c_int,
                transform as c_int,
                min_w as c_int,
                min_h as c_int,
                &mut out,
                &mut ow,
                &mut oh,
                msg.as_mut_ptr(),
                msg.len() as c_int,
            )
        };
        if rc != 0 || out.is_null() {
            return None;
        }
        let len = ow as usize * oh as usize * comps as usize;
        Some((ow as u32, oh as u32, Pixels { ptr: out, len }))
    }

    /// Decoded pixels in libjpeg-turbo's buffer, freed on drop: not copied out (a full-page
    /// colour scan is 25 MB; copying it and faulting in the copy's pages took 10 ms).
    pub struct Pixels {
        ptr: *mut c_uchar,
        len: usize,
    }

    impl std::ops::Deref for Pixels {
        type Target = [u8];
        fn deref(&self) -> &[u8] {
            // SAFETY: engine_turbo_decode returned `len` bytes at `ptr`, owned by this value.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }

    impl Drop for Pixels {
        fn drop(&mut self) {
            unsafe { engine_turbo_free(self.ptr) };
        }
    }

    pub fn encode(
        px: &[u8],
        w: u32,
        h: u32,
        comps: u32,
        quality: u32,
        dpi: u32,
        flags: i32,
    ) -> Result<Vec<u8>, String> {
        let mut out: *mut c_uchar = std::ptr::null_mut();
        let mut len: c_ulong = 0;
        let mut msg = [0 as c_char; 256];
        let rc = unsafe {
            engine_turbo_encode_flags(
                px.as_ptr(),
                w as c_int,
                h as c_int,
                (w * comps) as c_int,
                comps as c_int,
                quality as c_int,
                dpi as c_int,
                flags,
                &mut out,
                &mut len,
                msg.as_mut_ptr(),
                msg.len() as c_int,
            )
        };
        if rc != 0 || out.is_null() {
            return Err(unsafe { CStr::from_ptr(msg.as_ptr()) }.to_string_lossy().into_owned());
        }
        let v = unsafe { std::slice::from_raw_parts(out, len as usize) }.to_vec();
        unsafe { engine_turbo_free(out) };
        Ok(v)
    }
}

#[cfg(not(engine_turbo))]
mod imp {
    pub fn available() -> bool {
        false
    }
    pub type Pixels = Vec<u8>;
    pub fn decode(_: &[u8], _: u32, _: u32, _: u32, _: i32, _: u32, _: u32) -> Option<(u32, u32, Pixels)> {
        None
    }
    pub fn encode(_: &[u8], _: u32, _: u32, _: u32, _: u32, _: u32, _: i32) -> Result<Vec<u8>, String> {
        Err("libjpeg-turbo is not available".into())
    }
}

/// Optimised Huffman tables (`TURBO_OPTIMIZE` in csrc/turbo.c).
#[allow(dead_code)]
pub const OPTIMIZE: i32 = 1;
/// Progressive scans, which imply optimised tables (`TURBO_PROGRESSIVE`).
pub const PROGRESSIVE: i32 = 2;

/// True when libjpeg-turbo's decoder and encoder were found.
pub fn available() -> bool {
    imp::available()
}

/// Decodes a JPEG of exactly `w` x `h` pixels and `comps` components (1 or 3, as RGB),
/// scaled down in the DCT domain as far as 1/8, 1/4 or 1/2 allow while staying at
/// least `min_w` x `min_h`. `transform`: PDF's /ColorTransform (1 YCbCr, 0 RGB, -1 as
/// the JPEG's markers say). `None` when the data does not decode cleanly or does not
/// match (left to MuPDF then).
pub fn decode(
    data: &[u8],
    w: u32,
    h: u32,
    comps: u32,
    transform: i32,
    min_w: u32,
    min_h: u32,
) -> Option<(u32, u32, Pixels)> {
    imp::decode(data, w, h, comps, transform, min_w, min_h)
}

/// Decoded pixels (packed rows), as [`decode`] gives them.
pub use imp::Pixels;

/// Encodes packed `comps`-component pixels (4:2:0 for colour) with `flags`.
pub fn encode(px: &[u8], w: u32, h: u32, comps: u32, quality: u32, dpi: u32, flags: i32) -> Result<Vec<u8>, String> {
    assert_eq!(px.len(), w as usize * h as usize * comps as usize);
    imp::encode(px, w, h, comps, quality, dpi, flags)
}
