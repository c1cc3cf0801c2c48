//! A minimal OTLP/HTTP protobuf encoder for log records, so the OTel
//! dataset reaches VictoriaLogs (`/insert/opentelemetry/v1/logs`, protobuf
//! only) and Loki (`/otlp/v1/logs`) as the same bytes an OpenTelemetry
//! collector's `otlphttp` exporter sends. Only the fields the dataset uses
//! are encoded (field numbers from opentelemetry-proto's logs/v1,
//! common/v1 and resource/v1).

/// An attribute value: OTLP `AnyValue` with a string or an int.
#[derive(Debug, Clone)]
pub enum Value {
    Str(String),
    Int(i64),
}

/// One OTLP log record.
#[derive(Debug, Clone)]
pub struct Record {
    pub time_ns: i64,
    /// `SeverityNumber` (0 = unspecified).
    pub severity_number: u32,
    /// `SeverityText`, empty when the sender sets none.
    pub severity_text: String,
    /// The body, a string `AnyValue`.
    pub body: String,
    pub attributes: Vec<(String, Value)>,
}

/// Records sharing one resource (its attributes: `service.name`, …).
#[derive(Debug, Clone)]
pub struct ResourceLogs {
    pub resource: Vec<(String, String)>,
    pub records: Vec<Record>,
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    tag(out, field, 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn any_value(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    match v {
        Value::Str(s) => bytes(&mut out, 1, s.as_bytes()),
        Value::Int(i) => {
            tag(&mut out, 3, 0);
            varint(&mut out, *i as u64);
        }
    }
    out
}

fn key_value(key: &str, v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    bytes(&mut out, 1, key.as_bytes());
    bytes(&mut out, 2, &any_value(v));
    out
}

fn record(r: &Record) -> Vec<u8> {
    let mut out = Vec::new();
    tag(&mut out, 1, 1);
    out.extend_from_slice(&(r.time_ns as u64).to_le_bytes());
    if r.severity_number != 0 {
        tag(&mut out, 2, 0);
        varint(&mut out, u64::from(r.severity_number));
    }
    if !r.severity_text.is_empty() {
        bytes(&mut out, 3, r.severity_text.as_bytes());
    }
    bytes(&mut out, 5, &any_value(&Value::Str(r.body.clone())));
    for (k, v) in &r.attributes {
        bytes(&mut out, 6, &key_value(k, v));
    }
    out
}

/// `ExportLogsServiceRequest` bytes for `resources`.
pub fn encode(resources: &[ResourceLogs]) -> Vec<u8> {
    let mut out = Vec::new();
    for rl in resources {
        let mut resource = Vec::new();
        for (k, v) in &rl.resource {
            bytes(&mut resource, 1, &key_value(k, &Value::Str(v.clone())));
        }
        let mut scope_logs = Vec::new();
        for r in &rl.records {
            bytes(&mut scope_logs, 2, &record(r));
        }
        let mut msg = Vec::new();
        bytes(&mut msg, 1, &resource);
        bytes(&mut msg, 2, &scope_logs);
        bytes(&mut out, 1, &msg);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_a_record_as_protobuf() {
        let bytes = encode(&[ResourceLogs {
            resource: vec![("service.name".into(), "a".into())],
            records: vec![Record {
                time_ns: 1,
                severity_number: 9,
                severity_text: "INFO".into(),
                body: "hi".into(),
                attributes: vec![("n".into(), Value::Int(300))],
            }],
        }]);
        // resource_logs(1), 60 bytes → resource(1), 21 → attributes(1), 19
        // → key(1), the 12 bytes of "service.name".
        assert_eq!(&bytes[..8], &[0x0a, 60, 0x0a, 21, 0x0a, 19, 0x0a, 12]);
        // The int attribute 300 as a varint (0xac 0x02) closes the message.
        assert_eq!(&bytes[bytes.len() - 3..], &[0x18, 0xac, 0x02]);
    }
}
