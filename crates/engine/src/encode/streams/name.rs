//! A row's labels as the streams encoder handles them: each name kept as
//! VictoriaLogs spells it plus how Loki prints it, so dotted names need no
//! allocation, and the category Loki files the label under.

use std::cmp::Ordering;

use crate::labels::is_valid_label_name;

/// A label name as Loki reports it, kept as the raw VictoriaLogs name plus
/// how to print it, so that dotted names need no allocation.
#[derive(Debug, Clone, Copy)]
pub(super) struct Name<'s> {
    pub(super) raw: &'s str,
    /// `raw` is already a valid label name.
    pub(super) clean: bool,
    /// Loki appended `_extracted` (collision with a stream label).
    pub(super) extracted: bool,
}

impl<'s> Name<'s> {
    pub(super) fn new(raw: &'s str) -> Self {
        Self {
            raw,
            clean: is_valid_label_name(raw),
            extracted: false,
        }
    }

    /// The Loki form's bytes: `_` for a leading digit, `_` for every
    /// character outside `[a-zA-Z0-9_]`, then the `_extracted` suffix.
    pub(super) fn bytes(&self) -> impl Iterator<Item = u8> + Clone + 's {
        let clean = self.clean;
        let lead =
            (!clean && self.raw.as_bytes().first().is_some_and(u8::is_ascii_digit)).then_some(b'_');
        // One `_` per non-ASCII character: its lead byte maps to `_` and its
        // continuation bytes (0x80..0xC0) are dropped, so no UTF-8 decoding.
        let body = self
            .raw
            .bytes()
            .filter(|b| !(0x80..0xC0).contains(b))
            .map(move |b| {
                if clean || b.is_ascii_alphanumeric() || b == b'_' {
                    b
                } else {
                    b'_'
                }
            });
        let suffix: &'static [u8] = if self.extracted { b"_extracted" } else { b"" };
        lead.into_iter().chain(body).chain(suffix.iter().copied())
    }

    /// Whether the Loki form of this name is `loki`.
    pub(super) fn is(&self, loki: &str) -> bool {
        if self.clean && !self.extracted {
            self.raw == loki
        } else {
            self.bytes().eq(loki.bytes())
        }
    }

    pub(super) fn cmp(&self, other: &Name<'_>) -> Ordering {
        // Names of one row mostly differ in their first byte: decided
        // without a `memcmp` call or building the byte iterators (which
        // cost more than the rest of a row's label sorting).
        match self.first_byte().cmp(&other.first_byte()) {
            Ordering::Equal => {}
            order => return order,
        }
        if self.clean && other.clean && !self.extracted && !other.extracted {
            self.raw.cmp(other.raw)
        } else {
            self.bytes().cmp(other.bytes())
        }
    }

    /// Whether the Loki forms are equal (`cmp` is `Equal`): names of
    /// different lengths, most of them, are told apart without comparing
    /// bytes.
    pub(super) fn same(&self, other: &Name<'_>) -> bool {
        if self.clean && other.clean && !self.extracted && !other.extracted {
            self.raw == other.raw
        } else {
            self.cmp(other) == Ordering::Equal
        }
    }

    /// The first byte of the Loki form (`self.bytes().next()`).
    fn first_byte(&self) -> Option<u8> {
        let Some(&b) = self.raw.as_bytes().first() else {
            return self.extracted.then_some(b'_');
        };
        // A `str` never starts with a continuation byte; a leading digit of
        // a name that is not clean gets a `_` in front.
        if self.clean || b.is_ascii_alphabetic() || b == b'_' {
            Some(b)
        } else {
            Some(b'_')
        }
    }

    /// Appends the Loki form to `out` (it is ASCII when not `clean`).
    pub(super) fn push_to(&self, out: &mut String) {
        if self.clean {
            out.push_str(self.raw);
            if self.extracted {
                out.push_str("_extracted");
            }
        } else {
            out.extend(self.bytes().map(char::from));
        }
    }

    pub(super) fn write(&self, out: &mut Vec<u8>) {
        if self.clean {
            out.extend_from_slice(self.raw.as_bytes());
            if self.extracted {
                out.extend_from_slice(b"_extracted");
            }
        } else {
            out.extend(self.bytes());
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Stream,
    Metadata,
    Parsed,
}

/// One label of a row.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lbl<'s> {
    pub(super) name: Name<'s>,
    pub(super) value: &'s str,
    pub(super) kind: Kind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmp_orders_as_the_loki_forms_bytes() {
        let raws = [
            "",
            "a",
            "app",
            "app.x",
            "_a",
            "k8s.pod.name",
            "k8s_pod_name",
            "k8s",
            "1a",
            "_1a",
            "9",
            "é",
            "éa",
            "-x",
            ".",
            "trace_id",
            "Zeta",
            "zeta",
            "a.b",
            "a_b",
            "a-b",
        ];
        let names = raws.iter().flat_map(|r| {
            [false, true].map(|extracted| Name {
                extracted,
                ..Name::new(r)
            })
        });
        for a in names.clone() {
            assert_eq!(a.first_byte(), a.bytes().next(), "{a:?}");
            for b in names.clone() {
                assert_eq!(a.cmp(&b), a.bytes().cmp(b.bytes()), "{a:?} {b:?}");
                assert_eq!(a.same(&b), a.bytes().eq(b.bytes()), "{a:?} {b:?}");
            }
        }
    }
}
