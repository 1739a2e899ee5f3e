//! ELF in, BTF out, through the library alone: what `btfenc -J
//! --btf_encode_detached=OUT FILE` does, in a screenful.
//!
//! `cargo run -p btf-writer --example encode -- FILE OUT [FEATURES] [BASE]`
//!
//! FEATURES is a `--btf_features` list (default: `default`, pahole 1.31's
//! defaults); with BASE (a raw BTF file, such as a vmlinux's), FILE's BTF is
//! split on it, as a module's is.

use std::path::Path;

use btf::encode::{encode, Options, SplitOn};
use btf::lower::Features;

/// Encodes `input` into raw BTF bytes.
pub fn encode_file(
    input: &Path,
    features: &str,
    base: Option<&Path>,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let options = Options::new(Features::parse(features, true)?);
    let Some(base_path) = base else {
        return Ok(encode(input, &options, None)?.btf);
    };
    // The base's types are parsed once and borrowed by the encoding.
    let base_bytes = std::fs::read(base_path)?;
    let parsed = btf::read::parse(&base_bytes, None)?;
    let split_on = SplitOn::new(
        base_path,
        &parsed,
        &base_bytes,
        &options.features,
        btf::encode::SplitsOn::One,
    )?;
    Ok(encode(input, &options, Some(&split_on))?.btf)
}

#[allow(dead_code)] // Unused when a test includes this file.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, rest @ ..] = args.as_slice() else {
        return Err("usage: encode FILE OUT [FEATURES] [BASE]".into());
    };
    let features = rest.first().map_or("default", String::as_str);
    let base = rest.get(1).map(Path::new);
    let bytes = encode_file(Path::new(input), features, base)?;
    std::fs::write(output, bytes)?;
    Ok(())
}
