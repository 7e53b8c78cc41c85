//! Benchmarks of the pure parts on the hot path of a race: summarising trials, classifying
//! second-comer snapshots, and rendering a full report. Process I/O is measured by
//! `conformance run` itself (trials per second, barrier spread), not here.
#![allow(missing_docs)] // criterion_main! generates an undocumented `main`

use std::collections::BTreeMap;

use criterion::{criterion_group, criterion_main, Criterion};

use conformance::snapshot::{Entry, Identity};
use conformance::verdict::{classify_second, summarize_race, Report, Trial};

fn trials(n: usize) -> Vec<Trial> {
    (0..n)
        .map(|i| Trial {
            reports: vec![Report::Success, if i % 7 == 0 { Report::Success } else { Report::Error }, Report::Error],
            held: vec![true, false, false],
            t0_us: vec![Some(1.0), Some(1.0 + (i % 50) as f64), Some(3.0)],
            offset_us: 0,
            held_during_us: vec![None; 3],
            unstamped: None,
            placed: Vec::new(),
        })
        .collect()
}

fn bench_verdicts(c: &mut Criterion) {
    let t = trials(10_000);
    c.bench_function("summarize_race 3x10000", |b| b.iter(|| summarize_race(3, std::hint::black_box(&t))));
    let file = |id, s: &str| Entry::File { id: Some(Identity(1, id)), bytes: s.as_bytes().to_vec() };
    let mut entries = BTreeMap::new();
    entries.insert("owner.A".to_string(), file(2, "A"));
    let before = Entry::Dir { id: Some(Identity(1, 1)), entries: entries.clone() };
    entries.insert("src-1".to_string(), file(3, "B"));
    let after = Entry::Dir { id: Some(Identity(1, 1)), entries };
    c.bench_function("classify_second nested", |b| {
        b.iter(|| classify_second(&before, Report::Success, std::hint::black_box(&after), "B", false))
    });
}

fn bench_render(c: &mut Criterion) {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/reports/linux/results.json"))
        .expect("baseline present");
    let r: conformance::report::Results = serde_json::from_str(&text).expect("parses");
    c.bench_function("render markdown (baseline)", |b| {
        b.iter(|| conformance::report::markdown::render(std::hint::black_box(&r)))
    });
    c.bench_function("render terminal tables (baseline)", |b| {
        b.iter(|| {
            for rt in r.measured_runtimes() {
                std::hint::black_box(conformance::report::table::render_terminal(&r, rt));
            }
        })
    });
}

/// A matrix file of `n` variants (ids `node.v0` …), as a user's generated matrix would be.
fn matrix_text(n: usize) -> String {
    let mut t = String::from("family = \"node\"\n");
    for i in 0..n {
        t.push_str(&format!(
            "\n[[variant]]\nid = \"node.v{i}\"\ncall = \"call{i}(p)\"\ncreates = \"file\"\nintent = \"lock-file\"\n"
        ));
    }
    t
}

/// Loading a matrix of 1k, 10k and 100k variants: linear (issue 32 measured 1k 0.10 s, 2k
/// 0.36 s, 4k 0.93 s and 100k unfinished after 11 minutes before the fix).
fn bench_matrix_load(c: &mut Criterion) {
    let mut g = c.benchmark_group("matrix_load");
    g.sample_size(10);
    for n in [1_000, 10_000, 100_000] {
        let text = matrix_text(n);
        let path = std::path::Path::new("bench.toml");
        g.bench_function(format!("{n} variants"), |b| {
            b.iter(|| conformance::matrix::parse_file(path, &text).expect("parses").len())
        });
    }
    g.finish();
}

/// The baseline's node cells copied for `n` variants (`node.v0` …), every other runtime's left
/// out: a results file as large as a user's generated matrix makes.
fn many_variants(base: &conformance::report::Results, n: usize) -> conformance::report::Results {
    let node: Vec<_> =
        base.cells.iter().filter(|c| c.variant == "node.mkdirSync" && c.source.is_none()).cloned().collect();
    let mut r = base.clone();
    r.against.clear();
    r.cells = (0..n)
        .flat_map(|i| {
            node.iter().map(move |c| {
                let mut c = c.clone();
                c.id = c.id.replace("node.mkdirSync", &format!("node.v{i}"));
                c.variant = format!("node.v{i}");
                c
            })
        })
        .collect();
    r
}

/// Rendering reports of 1k, 4k and 8k variants: linear (the adversarial pass of issue 32
/// measured Markdown at 0.10 s, 2.28 s and 8.7 s before rows and answers were indexed).
fn bench_render_many(c: &mut Criterion) {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/reports/linux/results.json"))
        .expect("baseline present");
    let base: conformance::report::Results = serde_json::from_str(&text).expect("parses");
    let mut g = c.benchmark_group("render_markdown_many");
    g.sample_size(10);
    for n in [1_000, 4_000, 8_000] {
        let r = many_variants(&base, n);
        g.bench_function(format!("{n} variants"), |b| {
            b.iter(|| conformance::report::markdown::render(std::hint::black_box(&r)).len())
        });
    }
    g.finish();
}

criterion_group!(benches, bench_verdicts, bench_render, bench_matrix_load, bench_render_many);
criterion_main!(benches);
