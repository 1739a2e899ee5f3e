#![no_main]
//! See btfenc_fuzz::relocate.

libfuzzer_sys::fuzz_target!(|data: &[u8]| btfenc_fuzz::relocate(data));
