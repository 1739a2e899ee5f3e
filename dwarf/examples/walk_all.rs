//! Walks every unit of an ELF file in parallel and prints statistics:
//! `cargo run --release -p btfenc-dwarf --example walk_all -- FILE...`.

use std::time::Instant;

use rayon::prelude::*;

/// Prints every complete named struct/union of every unit, one member a
/// line, in a text form close to `bpftool btf dump format raw`.
fn dump_structs(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    use dwarf::model::{CompositeKind, Node};
    let file = dwarf::ElfFile::open(path)?;
    let dwarf = file.dwarf()?;
    let mut out = String::new();
    for header in dwarf.units() {
        let arena = bumpalo::Bump::new();
        let model = dwarf::walk::walk_unit(&dwarf, header, &arena)?;
        for f in &model.functions {
            let params: Vec<&str> = f.params.iter().map(|p| p.name.unwrap_or("")).collect();
            out.push_str(&format!(
                "FUNC '{}' decl={} inline={} external={} low_pc={} nocall={} varargs={} params={}\n",
                f.name, f.declaration, f.inline, f.external, f.low_pc.is_some(), f.nocall, f.varargs, params.join(",")
            ));
        }
        for v in &model.variables {
            out.push_str(&format!(
                "VAR '{}' decl={} external={} address={:?} in_function={}\n",
                v.name, v.declaration, v.external, v.address, v.in_function
            ));
        }
        for node in &model.nodes {
            if let Node::Enum {
                name: Some(name),
                byte_size,
                declaration: false,
                enumerators,
                underlying_signed,
            } = node
            {
                let signed = match underlying_signed {
                    Some(true) => "SIGNED",
                    Some(false) => "UNSIGNED",
                    None => "NONE",
                };
                out.push_str(&format!(
                    "ENUM '{name}' encoding={signed} size={byte_size} vlen={}\n",
                    enumerators.len()
                ));
                for e in enumerators.iter() {
                    let value = if e.negative {
                        (e.value as i64).to_string()
                    } else {
                        e.value.to_string()
                    };
                    out.push_str(&format!("\t'{}' val={value}\n", e.name));
                }
            }
            if let Node::Composite {
                kind,
                name: Some(name),
                byte_size,
                declaration: false,
                members,
                ..
            } = node
            {
                let kind = if *kind == CompositeKind::Union {
                    "UNION"
                } else {
                    "STRUCT"
                };
                out.push_str(&format!(
                    "{kind} '{name}' size={byte_size} vlen={}\n",
                    members.len()
                ));
                for member in members.iter() {
                    out.push_str(&format!(
                        "\t'{}' bits_offset={} bitfield_size={}\n",
                        member.name.unwrap_or(""),
                        member.bit_offset,
                        member.bitfield_size
                    ));
                }
            }
        }
    }
    print!("{out}");
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--count-dies") {
        // Every DIE, with a bare gimli scan: the baseline for the walker.
        for path in &args[1..] {
            let start = Instant::now();
            let file = dwarf::ElfFile::open(path)?;
            let dwarf = file.dwarf()?;
            let count: u64 = dwarf
                .units()
                .par_iter()
                .map(|header| -> Result<u64, gimli::Error> {
                    let unit = gimli::Unit::new(&dwarf.gimli, *header)?;
                    let mut entries = unit.entries_raw(None)?;
                    let mut count = 0;
                    while !entries.is_empty() {
                        if let Some(abbrev) = entries.read_abbreviation()? {
                            count += 1;
                            entries.skip_attributes(abbrev.attributes())?;
                        }
                    }
                    Ok(count)
                })
                .try_reduce(|| 0, |a, b| Ok(a + b))?;
            println!(
                "{path}: {count} DIEs in {:.3}s",
                start.elapsed().as_secs_f64()
            );
        }
        return Ok(());
    }
    if args.first().map(String::as_str) == Some("--dump-structs") {
        for path in &args[1..] {
            dump_structs(path)?;
        }
        return Ok(());
    }
    for path in args {
        let start = Instant::now();
        let file = dwarf::ElfFile::open(&path)?;
        let dwarf = file.dwarf()?;
        let loaded = start.elapsed();
        if dwarf.has_cross_unit_references()? {
            let arena = bumpalo::Bump::new();
            let model = dwarf::walk::walk_units(&dwarf, dwarf.units(), &arena)?;
            println!(
                "{path}: cross-unit references: {} units walked as one, {} DIEs, {} nodes, {:.3}s",
                dwarf.units().len(),
                model.die_count,
                model.nodes.len(),
                start.elapsed().as_secs_f64()
            );
            continue;
        }
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
