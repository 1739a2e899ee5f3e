#![no_main]
//! See btfenc_fuzz::validate_target.

libfuzzer_sys::fuzz_target!(|data: &[u8]| btfenc_fuzz::validate_target(data));
