#![no_main]
//! See btfenc_fuzz::btf_read.

libfuzzer_sys::fuzz_target!(|data: &[u8]| btfenc_fuzz::btf_read(data));
