//! The layers every request passes before and after its handler.
//!
//! Outermost first: [`observe`] (request id, tenant, access log, metrics,
//! 499 on client disconnect), [`headers`] (security headers), then
//! [`protect`] (URL/header/body size, in-flight cap, per-tenant rate,
//! `query_timeout`).

pub mod headers;
pub mod health;
pub mod observe;
pub mod protect;
pub mod tls;
