//! Rewrites a standalone BTF blob N times and checks the bytes are the
//! same, for timing `write::write` alone:
//! `cargo run --release -p btf-writer --example write_bench -- FILE.btf [N]`.
//! Names here sit in one compact section; in the encoder they are spread
//! over `.debug_str`, and writing costs about twice as much.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: write_bench FILE [N]")?;
    let n: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(20)
        .max(1);
    let data = std::fs::read(&path)?;
    let parsed = btf::read::parse(&data, None)?;
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let out = btf::write::write(&parsed.btf, parsed.endian)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        if out != data {
            return Err("output differs".into());
        }
    }
    times.sort_by(f64::total_cmp);
    eprintln!(
        "{} types: min {:.2} ms median {:.2} ms",
        parsed.btf.types.len(),
        times[0],
        times[n / 2]
    );
    Ok(())
}
