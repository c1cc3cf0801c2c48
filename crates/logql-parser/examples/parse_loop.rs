//! Profiling aid: parses the typical Grafana query in a loop.
fn main() {
    let q = r#"sum by (level) (count_over_time({app="x"} |= "err" | json [5m]))"#;
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let t = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(logql_parser::parse(std::hint::black_box(q)).is_ok());
    }
    println!("{:?}/iter", t.elapsed() / n as u32);
}
