//! The layers every request passes before and after its handler.
//!
//! Outermost first: [`observe`] (request id, tenant, access log, metrics,
//! 499 on client disconnect), [`headers`] (security headers), then
//! [`protect`] (URL/header/body size, in-flight cap, per-tenant rate,
//! `query_timeout`). In front of them all, [`hit`] answers response-cache
//! hits with the same checks, without running the layers.
//!
//! Below them, [`listen`] accepts connections under the [`conn`] bounds
//! (connection cap, head, idle and write deadlines).

pub mod conn;
pub mod headers;
pub mod health;
pub mod hit;
pub mod listen;
pub mod observe;
pub mod protect;
pub mod tls;
