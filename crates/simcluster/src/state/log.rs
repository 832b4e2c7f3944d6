//! Records: batches produced by real clients are kept (bounded per partition) and returned at
//! their offsets; every other offset returns a generated record, deterministic for the
//! partition and offset, of the partition's average message size.

use std::collections::VecDeque;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

/// Kept per partition: the most recent produced batches up to this many bytes.
pub const STORED_BYTES_PER_PARTITION: usize = 8 << 20;

/// Largest generated value; bigger average message sizes are capped.
const MAX_SYNTHETIC_VALUE: usize = 64 << 10;

#[derive(Debug, Clone)]
pub struct StoredBatch {
    pub base: i64,
    pub last: i64,
    /// The batch header's max timestamp.
    pub max_timestamp: i64,
    pub bytes: Bytes,
}

impl StoredBatch {
    /// (offset, timestamp) of every record, decompressing if needed.
    pub fn timestamps(&self) -> Vec<(i64, i64)> {
        let mut bytes = self.bytes.clone();
        match RecordBatchDecoder::decode(&mut bytes) {
            Ok(set) => set
                .records
                .iter()
                .map(|r| (r.offset, r.timestamp))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct StoredLog {
    pub batches: VecDeque<StoredBatch>,
    pub bytes: usize,
}

impl StoredLog {
    pub fn push(&mut self, batch: StoredBatch) {
        self.bytes += batch.bytes.len();
        self.batches.push_back(batch);
        while self.bytes > STORED_BYTES_PER_PARTITION && self.batches.len() > 1 {
            if let Some(b) = self.batches.pop_front() {
                self.bytes -= b.bytes.len();
            }
        }
    }

    pub fn trim_before(&mut self, offset: i64) {
        while self.batches.front().is_some_and(|b| b.last < offset) {
            if let Some(b) = self.batches.pop_front() {
                self.bytes -= b.bytes.len();
            }
        }
    }

    /// The first stored record at or after `from` whose timestamp is at or after `ts`.
    pub fn first_at_or_after(&self, ts: i64) -> Option<(i64, i64)> {
        self.batches
            .iter()
            .filter(|b| b.max_timestamp >= ts)
            .find_map(|b| b.timestamps().into_iter().find(|(_, t)| *t >= ts))
    }

    /// The stored record with the largest timestamp (the first of equals).
    pub fn max_timestamp(&self) -> Option<(i64, i64)> {
        let batch = self.batches.iter().max_by(|a, b| {
            a.max_timestamp
                .cmp(&b.max_timestamp)
                .then(b.base.cmp(&a.base))
        })?;
        batch
            .timestamps()
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
    }

    /// The first stored batch that ends at or after `offset`.
    pub fn first_from(&self, offset: i64) -> Option<&StoredBatch> {
        let idx = self.batches.partition_point(|b| b.last < offset);
        self.batches.get(idx)
    }
}

/// Why a produced record set was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordsError {
    Corrupt(String),
    TooLarge(usize),
}

/// One v2 batch of a produce request: its bytes and record count.
#[derive(Debug, Clone)]
pub struct IncomingBatch {
    pub bytes: Bytes,
    pub count: i64,
    pub max_timestamp: i64,
}

/// Splits a produce request's records into v2 batches, checking each one's CRC and layout
/// without decompressing (any codec the batch header names is accepted).
pub fn split_batches(
    records: &Bytes,
    max_batch: usize,
) -> Result<Vec<IncomingBatch>, RecordsError> {
    let mut out = Vec::new();
    let mut rest = records.clone();
    while rest.has_remaining() {
        if rest.len() < 61 {
            return Err(RecordsError::Corrupt("truncated record batch".into()));
        }
        let length = i32::from_be_bytes([rest[8], rest[9], rest[10], rest[11]]);
        if length < 49 {
            return Err(RecordsError::Corrupt(format!(
                "invalid batch length {length}"
            )));
        }
        let total = 12 + length as usize;
        if total > rest.len() {
            return Err(RecordsError::Corrupt("truncated record batch".into()));
        }
        let magic = rest[16];
        if magic != 2 {
            return Err(RecordsError::Corrupt(format!(
                "record batch magic {magic} is not supported (only v2)"
            )));
        }
        if total > max_batch {
            return Err(RecordsError::TooLarge(total));
        }
        let bytes = rest.split_to(total);
        let mut check = bytes.clone();
        let info = RecordBatchDecoder::decode_batch_info(&mut check)
            .map_err(|e| RecordsError::Corrupt(e.to_string()))?;
        let Some(info) = info.first() else {
            return Err(RecordsError::Corrupt("empty record batch".into()));
        };
        if info.control || info.transactional {
            return Err(RecordsError::Corrupt(
                "transactional and control batches are not simulated".into(),
            ));
        }
        let last_delta = i32::from_be_bytes([bytes[23], bytes[24], bytes[25], bytes[26]]);
        let max_ts = i64::from_be_bytes([
            bytes[35], bytes[36], bytes[37], bytes[38], bytes[39], bytes[40], bytes[41], bytes[42],
        ]);
        let count = i64::from(last_delta) + 1;
        if count <= 0 || i64::from(info.record_count) != count {
            return Err(RecordsError::Corrupt(format!(
                "record count {} does not match last offset delta {last_delta}",
                info.record_count
            )));
        }
        out.push(IncomingBatch {
            bytes,
            count,
            max_timestamp: max_ts,
        });
    }
    Ok(out)
}

/// A stored copy of an incoming batch with its base offset and leader epoch set (neither is
/// covered by the batch CRC).
pub fn assign_offset(batch: &IncomingBatch, base: i64, leader_epoch: i32) -> StoredBatch {
    let mut buf = BytesMut::from(&batch.bytes[..]);
    buf[0..8].copy_from_slice(&base.to_be_bytes());
    buf[12..16].copy_from_slice(&leader_epoch.to_be_bytes());
    StoredBatch {
        base,
        last: base + batch.count - 1,
        max_timestamp: batch.max_timestamp,
        bytes: buf.freeze(),
    }
}

/// Deterministic value bytes of a synthetic record.
fn synthetic_value(topic: &str, partition: i32, offset: i64, size: usize) -> Bytes {
    let head = format!("simulated {topic}-{partition}@{offset} ");
    let mut v = BytesMut::with_capacity(size);
    while v.len() < size {
        let take = (size - v.len()).min(head.len());
        v.put_slice(&head.as_bytes()[..take]);
    }
    v.freeze()
}

/// Encoded size of one synthetic record, roughly: value, key and record framing.
pub fn synthetic_record_size(msg_bytes: f64) -> usize {
    (msg_bytes as usize).clamp(1, MAX_SYNTHETIC_VALUE) + 32
}

/// Encodes `count` synthetic records from `base` as one uncompressed v2 batch.
#[allow(clippy::too_many_arguments)]
pub fn synthetic_batch(
    out: &mut BytesMut,
    topic: &str,
    partition: i32,
    base: i64,
    count: i64,
    msg_bytes: f64,
    leader_epoch: i32,
    timestamp_of: impl Fn(i64) -> i64,
) -> Result<(), String> {
    let size = (msg_bytes as usize).clamp(1, MAX_SYNTHETIC_VALUE);
    let records: Vec<Record> = (base..base + count)
        .map(|offset| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: leader_epoch,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset,
            // Constant offset-sequence keeps the records in one batch; the first is -1.
            sequence: ((offset - base) as i32).wrapping_sub(1),
            timestamp: timestamp_of(offset),
            key: Some(Bytes::from(format!("key-{offset}"))),
            value: Some(synthetic_value(topic, partition, offset, size)),
            headers: Default::default(),
        })
        .collect();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(out, records.iter(), &options).map_err(|e| e.to_string())
}

/// A StrBytes for a topic name (helper for handlers).
pub fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_batches_decode_with_their_offsets() {
        let mut buf = BytesMut::new();
        synthetic_batch(&mut buf, "t", 0, 100, 3, 50.0, 2, |o| 1_000 + o).expect("encode");
        let mut bytes = buf.freeze();
        let batches = split_batches(&bytes, usize::MAX).expect("split");
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].count, 3);
        let set = RecordBatchDecoder::decode(&mut bytes).expect("decode");
        let offsets: Vec<i64> = set.records.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, vec![100, 101, 102]);
        assert_eq!(set.records[0].value.as_ref().map(|v| v.len()), Some(50));
    }

    #[test]
    fn stored_batches_get_their_base_offset_and_stay_valid() {
        let mut buf = BytesMut::new();
        synthetic_batch(&mut buf, "t", 0, 0, 2, 10.0, 0, |_| 5).expect("encode");
        let incoming = split_batches(&buf.freeze(), usize::MAX).expect("split");
        let stored = assign_offset(&incoming[0], 42, 7);
        assert_eq!((stored.base, stored.last), (42, 43));
        let mut b = stored.bytes.clone();
        let set = RecordBatchDecoder::decode(&mut b).expect("crc still valid");
        assert_eq!(set.records[1].offset, 43);
        let mut log = StoredLog::default();
        log.push(stored);
        assert_eq!(log.first_from(43).map(|b| b.base), Some(42));
        assert!(log.first_from(44).is_none());
    }

    #[test]
    fn corrupt_batches_are_refused() {
        let bytes = Bytes::from_static(&[0u8; 70]);
        assert!(split_batches(&bytes, usize::MAX).is_err());
    }
}
