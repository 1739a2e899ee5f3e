//! Times the sequential start of an encoding (symbols, unit list, lowering
//! context), min and median of N runs, with the legacy flags' rules
//! (`MODERN=1`: `--btf_features`'):
//! `cargo run --release -p btf-writer --example open_bench -- FILE [N]`.

use std::time::Instant;

use btf::lower::{self, Features};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: open_bench FILE [N]")?;
    let n: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(10)
        .max(1);
    let legacy = std::env::var_os("MODERN").is_none();
    let features = if legacy {
        Features::legacy(lower::LegacyFlags {
            btf_gen_floats: true,
            ..Default::default()
        })
    } else {
        Features::parse("encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs", true)?
    };
    let mut t = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..n {
        let t0 = Instant::now();
        let file = dwarf::ElfFile::open(&path)?;
        let t1 = Instant::now();
        let symbols = file.symbols()?;
        let t2 = Instant::now();
        let dwarf = file.dwarf()?;
        let t3 = Instant::now();
        let ctx = lower::Context::new(features, &symbols);
        let t4 = Instant::now();
        std::hint::black_box((&ctx, &dwarf));
        for (v, d) in t.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3]) {
            v.push(d.as_secs_f64() * 1000.0);
        }
    }
    for (name, v) in ["open", "symbols", "dwarf", "context"].iter().zip(&mut t) {
        v.sort_by(f64::total_cmp);
        eprintln!("{name:8} min {:.2} med {:.2}", v[0], v[n / 2]);
    }
    Ok(())
}
