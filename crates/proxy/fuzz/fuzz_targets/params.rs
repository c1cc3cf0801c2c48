//! Fuzzes request-parameter parsing: any query string must give parameters or
//! a Loki error, never a panic (overflowing times, steps and limits included).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proxy::params::{self, Form};

/// 2026-08-22T10:00:00Z, a fixed "now" so runs are reproducible.
const NOW: i64 = 1_787_392_800_000_000_000;

fuzz_target!(|data: &[u8]| {
    let mut form = Form::default();
    form.extend_urlencoded(data);
    if let Ok(p) = params::range_params(&form, NOW) {
        assert!(p.step > 0, "step must be positive after validation");
        assert!(p.bounds.end >= p.bounds.start);
        assert!(p.limit > 0);
        let limits = params::QueryLimits::default();
        let _ = params::check_query_length(limits, p.bounds);
        let _ = params::check_max_entries(limits, p.limit);
    }
    let _ = params::instant_params(&form, NOW);
    let _ = params::bounds(&form, NOW);
    let _ = params::limit(&form);
    let _ = params::direction(&form);
});
