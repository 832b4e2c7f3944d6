//! Fetch (records decoded: uncompressed, gzip, snappy, lz4, zstd; control batches skipped; a
//! partial trailing batch ignored) and Produce, both to the partition leader.

use ballast_model::TopicPartition;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{FetchRequest, ProduceRequest};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    self as wire_records, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
    TimestampType,
};

use crate::client::{topic_name, Client};
use crate::codes;
use crate::error::{Error, Result};
use crate::types::{
    Acks, Compression, FetchedRecords, ProduceRecord, ProduceResult, Record, RecordHeader,
};
use crate::wire::guarded;

/// Batch header layout (magic v2): base offset (8), length (4), leader epoch (4), magic (1),
/// crc (4), attributes (2), last offset delta (4), timestamps (16), producer (14), count (4).
const BATCH_OVERHEAD: usize = 12;
const MAGIC_AT: usize = 16;
const ATTRIBUTES_AT: usize = 21;
const LAST_OFFSET_DELTA_AT: usize = 23;
const RECORD_COUNT_AT: usize = 57;
const BATCH_HEADER: usize = 61;
/// A record takes at least 7 bytes uncompressed; compressed batches are bounded more loosely.
const MAX_RECORDS_PER_BATCH: usize = 10_000_000;

impl Client {
    /// Fetch from the leader of `tp`, starting at `offset`, at most about `max_bytes` (the broker
    /// still returns a first batch larger than that). Records before `offset` in the first batch
    /// are dropped; an offset outside the log gives OFFSET_OUT_OF_RANGE. Reads uncommitted data
    /// (isolation level READ_UNCOMMITTED).
    pub async fn fetch(
        &self,
        tp: &TopicPartition,
        offset: i64,
        max_bytes: i32,
    ) -> Result<FetchedRecords> {
        if max_bytes <= 0 {
            return Err(Error::InvalidArgument(format!(
                "max_bytes must be positive, got {max_bytes}"
            )));
        }
        self.retrying("Fetch", move || async move {
            let leader = self.leader_of(tp).await?;
            let conn = self.connection(leader).await?;
            let version = conn.version::<FetchRequest>()?;
            let mut partition = FetchPartition::default();
            partition.partition = tp.partition;
            partition.fetch_offset = offset;
            partition.partition_max_bytes = max_bytes;
            let mut topic = FetchTopic::default();
            topic.topic = topic_name(&tp.topic);
            topic.partitions = vec![partition];
            let mut request = FetchRequest::default();
            request.max_wait_ms = 0;
            request.min_bytes = 1;
            request.max_bytes = max_bytes;
            request.isolation_level = 0;
            request.topics = vec![topic];
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka("Fetch", response.error_code, None));
            }
            let data = response
                .responses
                .into_iter()
                .filter(|t| t.topic.0.as_str() == tp.topic)
                .flat_map(|t| t.partitions)
                .find(|p| p.partition_index == tp.partition)
                .ok_or_else(|| Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!("fetch answer lacks {tp}"),
                })?;
            if data.error_code != 0 {
                return Err(Error::kafka("Fetch", data.error_code, None));
            }
            let (records, next) = decode_records(data.records.unwrap_or_default(), offset)
                .map_err(|detail| Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!("records of {tp}: {detail}"),
                })?;
            Ok(FetchedRecords {
                topic: tp.topic.clone(),
                partition: tp.partition,
                records,
                high_watermark: data.high_watermark,
                log_start_offset: (version >= 5 && data.log_start_offset >= 0)
                    .then_some(data.log_start_offset),
                last_stable_offset: (data.last_stable_offset >= 0)
                    .then_some(data.last_stable_offset),
                next_offset: next.unwrap_or(offset).max(offset),
            })
        })
        .await
    }

    /// The records of `tp` with offsets in `[start, end)`, fetched in steps of `max_bytes`;
    /// stops early at the high watermark.
    pub async fn fetch_range(
        &self,
        tp: &TopicPartition,
        start: i64,
        end: i64,
        max_bytes: i32,
    ) -> Result<Vec<Record>> {
        let mut out = Vec::new();
        let mut offset = start;
        while offset < end {
            let fetched = self.fetch(tp, offset, max_bytes).await?;
            out.extend(fetched.records.into_iter().filter(|r| r.offset < end));
            if fetched.next_offset <= offset || fetched.next_offset >= fetched.high_watermark {
                break;
            }
            offset = fetched.next_offset;
        }
        Ok(out)
    }

    /// Produce one batch to the leader of `tp`. With `Acks::None` the broker does not answer
    /// and no offset is known.
    pub async fn produce(
        &self,
        tp: &TopicPartition,
        records: &[ProduceRecord],
        acks: Acks,
        compression: Compression,
    ) -> Result<ProduceResult> {
        if records.is_empty() {
            return Err(Error::InvalidArgument("nothing to produce".to_string()));
        }
        let batch = encode_batch(records, compression).map_err(Error::InvalidArgument)?;
        let batch = &batch;
        self.retrying("Produce", move || async move {
            let leader = self.leader_of(tp).await?;
            let conn = self.connection(leader).await?;
            let version = conn.version::<ProduceRequest>()?;
            let mut partition = PartitionProduceData::default();
            partition.index = tp.partition;
            partition.records = Some(batch.clone());
            let mut topic = TopicProduceData::default();
            topic.name = topic_name(&tp.topic);
            topic.partition_data = vec![partition];
            let mut request = ProduceRequest::default();
            request.acks = match acks {
                Acks::None => 0,
                Acks::Leader => 1,
                Acks::All => -1,
            };
            request.timeout_ms =
                i32::try_from(self.inner.config.request_timeout.as_millis()).unwrap_or(i32::MAX);
            request.topic_data = vec![topic];
            if acks == Acks::None {
                conn.send_only(&request, version).await?;
                return Ok(ProduceResult {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    base_offset: None,
                    log_append_time: None,
                });
            }
            let response = conn.send(&request, version).await?;
            let answer = response
                .responses
                .into_iter()
                .filter(|t| t.name.0.as_str() == tp.topic)
                .flat_map(|t| t.partition_responses)
                .find(|p| p.index == tp.partition)
                .ok_or_else(|| Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!("produce answer lacks {tp}"),
                })?;
            if answer.error_code != 0 {
                let mut message = answer.error_message.map(|m| m.to_string());
                if let Some(first) = answer.record_errors.first() {
                    if let Some(m) = &first.batch_index_error_message {
                        message = Some(format!("record {}: {m}", first.batch_index));
                    }
                }
                return Err(Error::kafka("Produce", answer.error_code, message));
            }
            Ok(ProduceResult {
                topic: tp.topic.clone(),
                partition: tp.partition,
                base_offset: Some(answer.base_offset),
                log_append_time: (answer.log_append_time_ms >= 0)
                    .then_some(answer.log_append_time_ms),
            })
        })
        .await
    }

    /// The leader of `tp` from metadata; a partition without a leader is LEADER_NOT_AVAILABLE
    /// (retried), an unknown one UNKNOWN_TOPIC_OR_PARTITION.
    pub(crate) async fn leader_of(&self, tp: &TopicPartition) -> Result<i32> {
        let metadata = self
            .metadata_with_topics(std::slice::from_ref(&tp.topic))
            .await?;
        let Some(partition) = metadata.partition(tp) else {
            return Err(Error::UnknownTopicOrPartition {
                topic: tp.topic.clone(),
                partition: Some(tp.partition),
            });
        };
        partition
            .leader
            .ok_or_else(|| Error::kafka("Metadata", codes::LEADER_NOT_AVAILABLE, None))
    }
}

/// One magic-v2 batch of `records` (offsets 0..n, no producer id).
pub(crate) fn encode_batch(
    records: &[ProduceRecord],
    compression: Compression,
) -> Result<Bytes, String> {
    let wire: Vec<wire_records::Record> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut headers = kafka_protocol::indexmap::IndexMap::new();
            for (k, v) in &r.headers {
                headers.insert(StrBytes::from_string(k.clone()), v.clone());
            }
            let offset = i as i64;
            wire_records::Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset,
                // offset - sequence must be constant for one batch; base sequence comes out -1
                sequence: (offset as i32).wrapping_sub(1),
                timestamp: r.timestamp.unwrap_or(-1),
                key: r.key.clone(),
                value: r.value.clone(),
                headers,
            }
        })
        .collect();
    let options = RecordEncodeOptions {
        version: 2,
        compression: match compression {
            Compression::None => wire_records::Compression::None,
            Compression::Gzip => wire_records::Compression::Gzip,
            Compression::Snappy => wire_records::Compression::Snappy,
            Compression::Lz4 => wire_records::Compression::Lz4,
            Compression::Zstd => wire_records::Compression::Zstd,
        },
    };
    let mut buf = BytesMut::new();
    guarded(|| {
        RecordBatchEncoder::encode(&mut buf, wire.iter(), &options)
            .map_err(|e| format!("cannot encode records: {e}"))
    })?;
    Ok(buf.freeze())
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Decodes the record batches of a Fetch answer. Returns the records at or after `from`
/// (control records skipped) and the offset after the last complete batch. A trailing partial
/// batch (cut by the fetch size) is ignored.
pub(crate) fn decode_records(
    mut data: Bytes,
    from: i64,
) -> Result<(Vec<Record>, Option<i64>), String> {
    let mut out = Vec::new();
    let mut next = None;
    while data.len() >= BATCH_OVERHEAD {
        let base_offset = i64::from_be_bytes([
            data[0], data[1], data[2], data[3], data[4], data[5], data[6], data[7],
        ]);
        let length = be_i32(&data, 8);
        let Ok(length) = usize::try_from(length) else {
            return Err(format!("batch at offset {base_offset} has length {length}"));
        };
        let total = BATCH_OVERHEAD + length;
        if data.len() < total {
            break; // partial trailing batch
        }
        let batch = data.split_to(total);
        if batch.len() <= MAGIC_AT {
            return Err(format!("batch at offset {base_offset} is too short"));
        }
        let magic = batch[MAGIC_AT];
        if magic != 2 {
            return Err(format!(
                "batch at offset {base_offset} uses message format v{magic}; only v2 (Kafka 0.11+) is supported"
            ));
        }
        if batch.len() < BATCH_HEADER {
            return Err(format!("batch at offset {base_offset} is too short"));
        }
        let attributes = i16::from_be_bytes([batch[ATTRIBUTES_AT], batch[ATTRIBUTES_AT + 1]]);
        let last_offset_delta = be_i32(&batch, LAST_OFFSET_DELTA_AT);
        let count = be_i32(&batch, RECORD_COUNT_AT);
        next = Some(
            base_offset
                .saturating_add(i64::from(last_offset_delta))
                .saturating_add(1),
        );
        let compressed = attributes & 0x7 != 0;
        let count_ok = usize::try_from(count)
            .is_ok_and(|c| c <= MAX_RECORDS_PER_BATCH && (compressed || c * 7 <= batch.len()));
        if !count_ok {
            return Err(format!(
                "batch at offset {base_offset} claims {count} records"
            ));
        }
        let is_control = attributes & (1 << 5) != 0;
        if is_control {
            continue;
        }
        let mut batch = batch;
        let set = guarded(|| {
            RecordBatchDecoder::decode(&mut batch)
                .map_err(|e| format!("batch at offset {base_offset}: {e}"))
        })?;
        for r in set.records {
            if r.control || r.offset < from {
                continue;
            }
            out.push(Record {
                offset: r.offset,
                timestamp: r.timestamp,
                log_append_time: r.timestamp_type == TimestampType::LogAppend,
                key: r.key,
                value: r.value,
                headers: r
                    .headers
                    .into_iter()
                    .map(|(k, v)| RecordHeader {
                        key: k.to_string(),
                        value: v,
                    })
                    .collect(),
            });
        }
    }
    Ok((out, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<ProduceRecord> {
        (0..n)
            .map(|i| {
                ProduceRecord::new(
                    (i % 2 == 0).then_some(format!("k{i}").as_bytes()),
                    Some(format!("value-{i}-{}", "x".repeat(i * 3)).as_bytes()),
                )
                .with_timestamp(1_700_000_000_000 + i as i64)
                .with_header("h", Some(b"v"))
            })
            .collect()
    }

    /// Rewrites a batch's base offset (fetch answers carry absolute offsets).
    fn at_offset(batch: &Bytes, base: i64) -> Bytes {
        let mut b = BytesMut::from(&batch[..]);
        b[0..8].copy_from_slice(&base.to_be_bytes());
        b.freeze()
    }

    #[test]
    fn records_decode_for_every_compression() {
        for compression in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let input = sample(20);
            let batch = encode_batch(&input, compression).unwrap();
            let (records, next) = decode_records(at_offset(&batch, 100), 0).unwrap();
            assert_eq!(records.len(), 20, "{compression:?}");
            assert_eq!(next, Some(120), "{compression:?}");
            for (i, r) in records.iter().enumerate() {
                assert_eq!(r.offset, 100 + i as i64);
                assert_eq!(r.key, input[i].key, "{compression:?}");
                assert_eq!(r.value, input[i].value, "{compression:?}");
                assert_eq!(r.timestamp, 1_700_000_000_000 + i as i64);
                assert_eq!(
                    r.headers,
                    vec![RecordHeader {
                        key: "h".into(),
                        value: Some(Bytes::from_static(b"v"))
                    }]
                );
            }
        }
    }

    #[test]
    fn records_before_the_fetch_offset_are_dropped() {
        let batch = encode_batch(&sample(10), Compression::Lz4).unwrap();
        let (records, next) = decode_records(at_offset(&batch, 50), 55).unwrap();
        assert_eq!(records.first().map(|r| r.offset), Some(55));
        assert_eq!(records.len(), 5);
        assert_eq!(next, Some(60));
    }

    #[test]
    fn a_partial_trailing_batch_is_ignored() {
        let first = at_offset(&encode_batch(&sample(3), Compression::None).unwrap(), 0);
        let second = at_offset(&encode_batch(&sample(4), Compression::Zstd).unwrap(), 3);
        let mut data = BytesMut::from(&first[..]);
        data.extend_from_slice(&second[..second.len() / 2]);
        let (records, next) = decode_records(data.freeze(), 0).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(next, Some(3));
        // a fragment shorter than a batch header is ignored too
        let (records, next) = decode_records(second.slice(..7), 0).unwrap();
        assert!(records.is_empty());
        assert_eq!(next, None);
    }

    #[test]
    fn control_batches_are_skipped() {
        let data = encode_batch(&sample(2), Compression::None).unwrap();
        let control = {
            let mut r = wire_records::Record {
                transactional: true,
                control: true,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: 7,
                producer_epoch: 0,
                timestamp_type: TimestampType::Creation,
                offset: 2,
                sequence: -1,
                timestamp: 0,
                key: Some(Bytes::from_static(&[0, 0, 0, 0])),
                value: Some(Bytes::from_static(&[0, 0, 0, 0, 0, 0])),
                headers: Default::default(),
            };
            r.sequence = -1;
            let mut buf = BytesMut::new();
            RecordBatchEncoder::encode(
                &mut buf,
                [&r],
                &RecordEncodeOptions {
                    version: 2,
                    compression: wire_records::Compression::None,
                },
            )
            .unwrap();
            buf.freeze()
        };
        let mut all = BytesMut::from(&data[..]);
        all.extend_from_slice(&control);
        let (records, next) = decode_records(all.freeze(), 0).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(next, Some(3), "the control batch still advances the offset");
    }

    #[test]
    fn a_corrupt_batch_is_an_error_not_a_panic() {
        let batch = encode_batch(&sample(5), Compression::Gzip).unwrap();
        let mut bad = BytesMut::from(&batch[..]);
        let last = bad.len() - 3;
        bad[last] ^= 0xff;
        assert!(decode_records(bad.freeze(), 0).is_err(), "crc mismatch");
        let mut legacy = BytesMut::from(&batch[..]);
        legacy[MAGIC_AT] = 1;
        let err = decode_records(legacy.freeze(), 0).unwrap_err();
        assert!(err.contains("message format v1"), "{err}");
        let mut huge = BytesMut::from(&batch[..]);
        huge[RECORD_COUNT_AT..RECORD_COUNT_AT + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(decode_records(huge.freeze(), 0).is_err());
        let mut negative = BytesMut::from(&batch[..]);
        negative[8..12].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(decode_records(negative.freeze(), 0).is_err());
    }

    #[test]
    fn one_produce_call_makes_one_batch() {
        let batch = encode_batch(&sample(50), Compression::Snappy).unwrap();
        let infos = RecordBatchDecoder::decode_batch_info(&mut batch.clone()).unwrap();
        assert_eq!(infos.len(), 1);
        assert_eq!(infos[0].record_count, 50);
        assert_eq!(infos[0].base_sequence, -1);
        assert_eq!(infos[0].producer_id, -1);
    }
}
