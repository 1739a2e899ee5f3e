//! Walks every unit of an ELF file in parallel and prints statistics:
//! `cargo run --release -p btfenc-dwarf --example walk_all -- FILE...`.

use std::time::Instant;

use rayon::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let start = Instant::now();
        let file = dwarf::ElfFile::open(&path)?;
        let dwarf = file.dwarf()?;
        let loaded = start.elapsed();
        let totals = dwarf
            .units()
            .par_iter()
            .map(|header| {
                let arena = bumpalo::Bump::new();
                let model = dwarf::walk::walk_unit(&dwarf, header, &arena)?;
                let placeholders = model
                    .nodes
                    .iter()
                    .filter(|node| matches!(node, dwarf::model::Node::Unsupported { tag: 0 }))
                    .count();
                Ok::<_, dwarf::Error>((
                    model.die_count,
                    model.nodes.len(),
                    model.functions.len(),
                    model.variables.len(),
                    placeholders,
                ))
            })
            .try_reduce(
                || (0, 0, 0, 0, 0),
                |a, b| Ok((a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3, a.4 + b.4)),
            )?;
        let symbols = file.symbols()?;
        println!(
            "{path}: {} units, {} DIEs, {} type nodes ({} unfilled), {} functions, {} variables; \
             {} func symbols, {} data symbols; load {:.3}s, total {:.3}s",
            dwarf.units().len(),
            totals.0,
            totals.1,
            totals.4,
            totals.2,
            totals.3,
            symbols.functions.len(),
            symbols.data.len(),
            loaded.as_secs_f64(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
