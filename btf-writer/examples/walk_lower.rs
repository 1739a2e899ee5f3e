//! Walks and lowers units of an ELF file on one thread, for profiling the
//! first pipeline phase alone (under `valgrind --tool=callgrind` its
//! instruction counts are exact where a shared machine's timings are not):
//! `cargo run --release -p btf-writer --example walk_lower -- FILE [FIRST] [COUNT]`.

use std::time::Instant;

use btf::lower::{self, Features};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: walk_lower FILE [FIRST] [COUNT]")?;
    let first: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(0);
    let count: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(usize::MAX);
    // Borrowed by the models as long as the file's own strings: declared
    // before the file.
    let names = bumpalo::Bump::new();
    let file = dwarf::ElfFile::open(&path)?;
    let symbols = file.symbols()?;
    let dwarf = file.dwarf()?;
    let features = Features::parse("encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs", true)?;
    let ctx = lower::Context::new(features, &symbols);
    let started = Instant::now();
    let (mut dies, mut types) = (0u64, 0usize);
    for unit in dwarf.units().iter().skip(first).take(count) {
        let arena = bumpalo::Bump::new();
        let cu = dwarf::walk::walk_unit_copying_inline_names(&dwarf, unit, &arena, &names)?;
        dies += cu.die_count;
        types += lower::lower_cu(&cu, &ctx)?.types.len();
    }
    eprintln!(
        "{dies} DIEs, {types} types in {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    Ok(())
}
