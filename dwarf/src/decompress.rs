//! Decompressing `SHF_COMPRESSED` sections within bounds.
//!
//! The compression header's `ch_size` is only a claim: `object` reserves
//! that much up front (and the zlib path zero-fills it), so a 3 KB object
//! whose header claims 8 GiB took gigabytes and seconds before failing.
//! Here the output grows with what the stream really yields, and stops
//! with an error as soon as it would pass the smallest of: the claimed
//! size, [`MAX_SECTION`], and [`MAX_RATIO`] times the compressed bytes
//! (plus a little). A stream that ends short of the claimed size is an
//! error too, as it is for `object`.

use std::borrow::Cow;
use std::io::Read;

use object::{CompressedData, CompressionFormat};

/// The largest section decompressed: 32-bit DWARF cannot address more,
/// and Debian's whole vmlinux `.debug_info` is under 200 MB.
pub const MAX_SECTION: u64 = u32::MAX as u64;

/// The largest expansion accepted. Deflate cannot do better than about
/// 1032:1; real debug sections compress 3:1 to 10:1 with either format.
pub const MAX_RATIO: u64 = 1032;

/// Output allowed on top of [`MAX_RATIO`] times the input, for tiny
/// sections.
const SLACK: u64 = 1 << 20;

/// First step of output growth.
const FIRST_CHUNK: usize = 64 << 10;

/// The uncompressed bytes of `data`, borrowed when it is not compressed.
pub fn decompress<'data>(data: &CompressedData<'data>) -> Result<Cow<'data, [u8]>, String> {
    let claimed = data.uncompressed_size;
    let limit = claimed.min(MAX_SECTION).min(
        (data.data.len() as u64)
            .saturating_mul(MAX_RATIO)
            .saturating_add(SLACK),
    );
    let out = match data.format {
        CompressionFormat::None => return Ok(Cow::Borrowed(data.data)),
        CompressionFormat::Zlib => inflate(data.data, limit)?,
        CompressionFormat::Zstandard => unzstd(data.data, limit)?,
        other => return Err(format!("unsupported compression {other:?}")),
    };
    if out.len() as u64 != claimed {
        return Err(format!(
            "compressed stream holds {} bytes, its header claims {claimed}",
            out.len()
        ));
    }
    Ok(Cow::Owned(out))
}

fn too_large(claimed_limit: u64) -> String {
    format!(
        "decompressed data exceeds {claimed_limit} bytes (the least of the size its header \
         claims, {MAX_SECTION} and {MAX_RATIO} times the compressed size)"
    )
}

fn inflate(input: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut stream = flate2::Decompress::new(true);
    let mut out: Vec<u8> = Vec::new();
    loop {
        if out.len() == out.capacity() {
            if out.len() >= limit {
                // Room for one more byte tells a stream that ends exactly
                // at the limit from one that goes on.
                if out.len() > limit {
                    return Err(too_large(limit as u64));
                }
                out.reserve_exact(1);
            } else {
                let step = out.len().max(FIRST_CHUNK).min(limit - out.len());
                out.reserve_exact(step);
            }
        }
        let consumed = stream.total_in() as usize;
        let before = (consumed, out.len());
        let rest = input.get(consumed..).unwrap_or(&[]);
        let status = stream
            .decompress_vec(rest, &mut out, flate2::FlushDecompress::None)
            .map_err(|err| format!("invalid zlib data: {err}"))?;
        if out.len() > limit {
            return Err(too_large(limit as u64));
        }
        match status {
            flate2::Status::StreamEnd => return Ok(out),
            _ if (stream.total_in() as usize, out.len()) == before
                && out.len() < out.capacity() =>
            {
                return Err("truncated zlib data".into());
            }
            _ => {}
        }
    }
}

fn unzstd(mut input: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    // One frame after another, as `object` (and the ELF gABI) allow.
    while !input.is_empty() {
        let decoder = ruzstd::decoding::StreamingDecoder::new(&mut input)
            .map_err(|err| format!("invalid zstd data: {err}"))?;
        let room = limit.saturating_sub(out.len() as u64).saturating_add(1);
        decoder
            .take(room)
            .read_to_end(&mut out)
            .map_err(|err| format!("invalid zstd data: {err}"))?;
        if out.len() as u64 > limit {
            return Err(too_large(limit));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn compressed(format: CompressionFormat, data: &[u8], claimed: u64) -> CompressedData<'_> {
        CompressedData {
            format,
            data,
            uncompressed_size: claimed,
        }
    }

    #[test]
    fn zlib_round_trip_and_false_claims() {
        let plain: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let packed = zlib(&plain);
        let data = compressed(CompressionFormat::Zlib, &packed, plain.len() as u64);
        assert_eq!(decompress(&data).unwrap().as_ref(), plain.as_slice());
        // Claims of more or less than the stream holds are refused, and a
        // claim of 8 GiB costs nothing.
        let start = std::time::Instant::now();
        let data = compressed(CompressionFormat::Zlib, &packed, 8 << 30);
        assert!(decompress(&data).unwrap_err().contains("claims"));
        assert!(start.elapsed().as_secs() < 2);
        let data = compressed(CompressionFormat::Zlib, &packed, 1000);
        assert!(decompress(&data).unwrap_err().contains("exceeds"));
        let data = compressed(
            CompressionFormat::Zlib,
            &packed[..packed.len() / 2],
            plain.len() as u64,
        );
        assert!(decompress(&data).is_err());
    }

    #[test]
    fn expansion_is_bounded_by_the_input() {
        // 1 MB of zeros packs into about 1 KB; with a small enough bound
        // the output stops there, whatever the header claims.
        let plain = vec![0u8; 1 << 20];
        let packed = zlib(&plain);
        assert!(inflate(&packed, 100_000).unwrap_err().contains("exceeds"));
        assert_eq!(inflate(&packed, 1 << 20).unwrap().len(), 1 << 20);
        let limit = |claimed: u64| {
            claimed.min(MAX_SECTION).min(
                (packed.len() as u64)
                    .saturating_mul(MAX_RATIO)
                    .saturating_add(SLACK),
            )
        };
        assert!(limit(8 << 30) < 3 << 20);
    }
}
