//! Go behaviour that lokivl must reproduce byte for byte, in one place.
//!
//! Loki is a Go program, and several of its answers are whatever a Go
//! library prints or accepts: `line_format` templates run Go's
//! `text/template` with Loki's function map, byte sizes are read the way
//! go-humanize reads them. lokivl answers as Loki does, so each such routine
//! is reimplemented here once, checked against outputs recorded from Go and
//! Loki, and used by every crate that needs it. This crate depends on no
//! other crate of lokivl.
//!
//! Each module names the Go package and version it reproduces (Go 1.26.8,
//! prometheus/common v0.67.5, go-humanize v1.0.1: what Loki 3.7.8 is built
//! with): [`strconv`], [`duration`], [`humanize`], [`time`], [`base64`],
//! [`regexp`] and [`template`]. Their tests are cases recorded from Go.
//!
//! ```
//! use go::template::{Context, Template};
//!
//! struct Line;
//! impl Context for Line {
//!     fn label(&self, name: &str) -> Option<&str> {
//!         (name == "app").then_some("api")
//!     }
//!     fn line(&self) -> &str {
//!         "GET /health"
//!     }
//!     fn timestamp_ns(&self) -> i64 {
//!         0
//!     }
//! }
//!
//! let t = Template::parse("{{.app}}: {{__line__ | upper}}").unwrap();
//! let mut out = String::new();
//! t.render(&Line, &mut out).unwrap();
//! assert_eq!(out, "api: GET /HEALTH");
//! assert_eq!(go::humanize::parse_bytes("1.5KiB"), Some(1536));
//! assert_eq!(go::strconv::quote("a\u{a0}b"), r#""a\u00a0b""#);
//! ```

pub mod base64;
pub mod duration;
pub mod humanize;
pub mod regexp;
pub mod strconv;
pub mod template;
pub mod time;
