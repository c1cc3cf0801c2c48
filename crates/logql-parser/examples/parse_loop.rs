//! Profiling aid: parses a query in a loop (`parse_loop [iterations] [query]`),
//! by default the typical Grafana query of the `parse/grafana_typical` bench.
fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let q = args.next().unwrap_or_else(|| {
        r#"sum by (level) (count_over_time({app="x"} |= "err" | json [5m]))"#.to_string()
    });
    let t = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(logql_parser::parse(std::hint::black_box(&q)).is_ok());
    }
    println!("{:?}/iter", t.elapsed() / n as u32);
}
