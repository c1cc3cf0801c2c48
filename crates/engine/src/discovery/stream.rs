//! The labels Loki's ingest adds, given to each entry before the proxy's
//! stages run: `service_name` on the stream labels, `detected_level` in the
//! structured metadata (derivation in [`crate::discovery`]).
//! Whoever feeds rows to a [`crate::pipeline::Pipeline`] built with
//! [`crate::pipeline::Pipeline::discovering`] calls these (log queries do in
//! [`crate::page`]; metric queries evaluated from rows would too).

use std::borrow::Cow;

use crate::discovery::{DETECTED_LEVEL, SERVICE_NAME, derive_service_name, level_label, level_of};

/// Adds the `service_name` Loki derives to sorted Loki-named stream labels
/// that lack it, when `discovery` derives it.
pub fn with_service_name(labels: &mut Vec<(String, String)>, discovery: &logsql_ast::Discovery) {
    if !discovery.service_name() || labels.iter().any(|(k, _)| k == SERVICE_NAME) {
        return;
    }
    let get = |n: &str| labels.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    let v = derive_service_name(
        discovery.service_name_labels.iter().map(String::as_str),
        get,
    )
    .to_owned();
    let at = labels.partition_point(|(k, _)| k.as_str() < SERVICE_NAME);
    labels.insert(at, (SERVICE_NAME.to_owned(), v));
}

/// Sets the entry's `detected_level` structured metadata as Loki's ingest
/// would: a stored one is normalized, else it is derived. A stream label of
/// that name is left alone (Loki never has one).
pub fn with_detected_level<'a>(
    stream: &'a [(String, String)],
    meta: &mut Vec<(Cow<'a, str>, &'a str)>,
    line: &'a str,
) {
    if stream.iter().any(|(k, _)| k == DETECTED_LEVEL) {
        return;
    }
    let level = {
        let meta_get = |n: &str| meta.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let stream_level =
            level_label(|n| stream.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str()));
        level_of(stream_level, &meta_get, line)
    };
    match meta.iter_mut().find(|(k, _)| k == DETECTED_LEVEL) {
        Some(slot) => slot.1 = level,
        None => meta.push((Cow::Borrowed(DETECTED_LEVEL), level)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(l: &[(&str, &str)]) -> Vec<(String, String)> {
        l.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn service_name_is_added_in_label_order() {
        let d = logsql_ast::Discovery {
            service_name_labels: vec!["job".into(), "app".into()],
            log_levels: false,
        };
        let mut l = pairs(&[("app", "a"), ("job", "j"), ("zone", "z")]);
        with_service_name(&mut l, &d);
        assert_eq!(
            l,
            pairs(&[
                ("app", "a"),
                ("job", "j"),
                ("service_name", "j"),
                ("zone", "z")
            ])
        );
        let mut stored = pairs(&[("app", "a"), ("service_name", "s")]);
        with_service_name(&mut stored, &d);
        assert_eq!(stored, pairs(&[("app", "a"), ("service_name", "s")]));
        let mut off = pairs(&[("app", "a")]);
        with_service_name(&mut off, &logsql_ast::Discovery::default());
        assert_eq!(off, pairs(&[("app", "a")]));
    }

    #[test]
    fn detected_level_is_set_or_normalized() {
        let stream = pairs(&[("app", "a")]);
        let mut meta: Vec<(Cow<'_, str>, &str)> = vec![(Cow::Borrowed("trace_id"), "t")];
        with_detected_level(&stream, &mut meta, "ERROR: x");
        assert_eq!(meta[1], (Cow::Borrowed(DETECTED_LEVEL), "error"));
        let mut meta: Vec<(Cow<'_, str>, &str)> = vec![(Cow::Borrowed(DETECTED_LEVEL), "WRN")];
        with_detected_level(&stream, &mut meta, "info");
        assert_eq!(meta, vec![(Cow::Borrowed(DETECTED_LEVEL), "warn")]);
    }
}
