//! Runs a scenario JSON file through the engine alone (no Python), for
//! profiling: `cargo run --release --example run_scenario -- FILE [REPEATS]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run_scenario FILE.json [REPEATS]");
        std::process::exit(2);
    };
    let repeats: usize = args.next().and_then(|x| x.parse().ok()).unwrap_or(1);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    for _ in 0..repeats {
        let t0 = std::time::Instant::now();
        let mut progress = |_, _| true;
        match mediasim_engine::run_json(&text, &Default::default(), &mut progress) {
            Ok(out) => {
                let meta: serde_json::Value =
                    serde_json::from_str(&out.meta_json).expect("meta is JSON");
                println!(
                    "events {} engine {:.4} s total {:.4} s",
                    meta["events"],
                    meta["wall_s"],
                    t0.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
}
