//! The pipeline run the way a batch runs it: many files at once on one
//! rayon pool, the workers of every file sharing its threads, where a
//! thread waiting in rayon may run another file's worker nested on its
//! own stack.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rayon::prelude::*;

use super::{encode, Options};
use crate::lower::Features;

/// Fixture objects with several units each.
const FILES: [&str; 5] = [
    "multi-cu/gcc-dwarf5.o",
    "multi-cu/clang.o",
    "exec/prog-gcc",
    "exec/prog-clang",
    "lld/prog-btf-placeholder",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/obj")
        .join(name)
}

fn options(lowered_ahead: usize) -> Options {
    let features = Features::parse(
        "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func",
        true,
    )
    .expect("a known feature list");
    let mut options = Options::new(features);
    options.lowered_ahead = lowered_ahead;
    options
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

/// With room for one lowered unit only, workers wait for their turn at
/// almost every unit; in a batch of 40 encodings on 4 threads each of them
/// also runs nested under other files' waits. Every encoding must finish,
/// each with the bytes the file gives alone.
#[test]
fn a_batch_whose_workers_keep_waiting_for_their_turn_finishes_with_the_same_output() {
    let alone: Vec<Vec<u8>> = pool(1).install(|| {
        FILES
            .iter()
            .map(|name| {
                encode(&fixture(name), &options(1), None)
                    .unwrap_or_else(|err| panic!("{name}: {err}"))
                    .btf
            })
            .collect()
    });
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let batch: Vec<(usize, Vec<u8>)> = pool(4).install(|| {
            (0..FILES.len() * 8)
                .into_par_iter()
                .map(|i| {
                    let file = i % FILES.len();
                    let encoded = encode(&fixture(FILES[file]), &options(1), None)
                        .unwrap_or_else(|err| panic!("{}: {err}", FILES[file]));
                    (file, encoded.btf)
                })
                .collect()
        });
        let _ = done.send(batch);
    });
    let batch = finished
        .recv_timeout(Duration::from_secs(120))
        .expect("the batch finishes: no worker waits for itself or for one that waits");
    for (file, btf) in batch {
        assert!(
            btf == alone[file],
            "{}: output differs in the batch",
            FILES[file]
        );
    }
}
