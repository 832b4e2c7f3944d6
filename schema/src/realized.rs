//! `operation_realized`: predicted vs realized loads of an operation.
//!
//! The prediction is written with the operation, in the transaction that queues it
//! ([`Store::queue_operation_predicted`]); the observer writes what the readings after its
//! completion showed, each part once ([`Store::record_realized`]).

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::{OperationRecord, Store, StoreError};

/// One broker's seven loads, indexed like `ballast_model::Load::ALL`.
pub type LoadValues = [f64; 7];

/// The per-broker loads an operation was predicted to leave: its moves applied to the reading
/// it was queued on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prediction {
    /// When the reading the prediction was made from was taken (unix ms).
    pub reading_at_ms: i64,
    /// Partitions in that reading.
    pub partitions: u64,
    /// Of those, partitions with no measured rate at that reading (their rates are unknown).
    pub partitions_without_rates: u64,
    /// Every broker of the reading, by id.
    pub brokers: Vec<PredictedBroker>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PredictedBroker {
    pub broker_id: i32,
    /// Alive and not in maintenance when predicted: fair shares are counted over these.
    pub takes_load: bool,
    /// Its loads at the reading (before the operation).
    pub before: LoadValues,
    /// Its loads with the operation's moves applied.
    pub after: LoadValues,
}

/// Every broker's loads at one reading after an operation completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadsReading {
    /// When the reading was taken (unix ms).
    pub reading_at_ms: i64,
    pub partitions: u64,
    /// Partitions with no measured rate at that reading.
    pub partitions_without_rates: u64,
    /// Broker id and its loads, by id.
    pub brokers: Vec<(i32, LoadValues)>,
}

/// Which part of the realized loads a reading gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealizedPart {
    /// Leader and follower counts and disk: the first reading after completion.
    Counts,
    /// The four rates: the first reading the settling and a full rate window after completion.
    Rates,
}

/// What is kept of one operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Realized {
    pub operation_id: String,
    pub prediction: Prediction,
    pub counts: Option<LoadsReading>,
    pub rates: Option<LoadsReading>,
}

/// A completed operation with a prediction whose realized loads are not all read yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealizedDue {
    pub operation_id: String,
    pub finished_at_ms: i64,
    pub counts_missing: bool,
    pub rates_missing: bool,
}

fn parse<T: serde::de::DeserializeOwned>(r: &Row<'_>, idx: usize) -> rusqlite::Result<Option<T>> {
    let s: Option<String> = r.get(idx)?;
    s.map(|s| {
        serde_json::from_str(&s).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

fn realized_from_row(r: &Row<'_>) -> rusqlite::Result<Realized> {
    let prediction = parse::<Prediction>(r, 1)?.ok_or(rusqlite::Error::InvalidColumnType(
        1,
        "predicted".into(),
        rusqlite::types::Type::Null,
    ))?;
    Ok(Realized {
        operation_id: r.get(0)?,
        prediction,
        counts: parse(r, 2)?,
        rates: parse(r, 3)?,
    })
}

pub(crate) fn text<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Invalid(format!("not JSON: {e}")))
}

pub(crate) fn insert_prediction_tx(
    tx: &rusqlite::Transaction<'_>,
    operation_id: &str,
    prediction: &Prediction,
) -> Result<(), StoreError> {
    tx.prepare_cached("INSERT INTO operation_realized (operation_id, predicted) VALUES (?1, ?2)")?
        .execute(params![operation_id, text(prediction)?])?;
    Ok(())
}

impl Store {
    /// The prediction and realized loads of operation `id`; None when it has no prediction.
    pub fn operation_realized(&self, id: &str) -> Result<Option<Realized>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(
                    "SELECT operation_id, predicted, counts, rates FROM operation_realized
                     WHERE operation_id = ?1",
                )?
                .query_row([id], realized_from_row)
                .optional()?)
        })
    }

    /// Completed operations with a prediction whose counts or rates are not read yet, oldest
    /// completion first.
    pub fn realized_due(&self) -> Result<Vec<RealizedDue>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(
                    "SELECT o.id, o.finished_at_ms, r.counts IS NULL, r.rates IS NULL
                     FROM operation_realized r JOIN operations o ON o.id = r.operation_id
                     WHERE o.state = 'completed' AND o.finished_at_ms IS NOT NULL
                       AND (r.counts IS NULL OR r.rates IS NULL)
                     ORDER BY o.finished_at_ms, o.id",
                )?
                .query_map([], |r| {
                    Ok(RealizedDue {
                        operation_id: r.get(0)?,
                        finished_at_ms: r.get(1)?,
                        counts_missing: r.get(2)?,
                        rates_missing: r.get(3)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Keeps `reading` as the `part` of operation `id`'s realized loads, unless that part is
    /// kept already (each is written once). True when written.
    pub fn record_realized(
        &self,
        id: &str,
        part: RealizedPart,
        reading: &LoadsReading,
    ) -> Result<bool, StoreError> {
        let sql = match part {
            RealizedPart::Counts => {
                "UPDATE operation_realized SET counts = ?2 WHERE operation_id = ?1 AND counts IS NULL"
            }
            RealizedPart::Rates => {
                "UPDATE operation_realized SET rates = ?2 WHERE operation_id = ?1 AND rates IS NULL"
            }
        };
        let body = text(reading)?;
        self.write(|tx| Ok(tx.prepare_cached(sql)?.execute(params![id, body])? == 1))
    }

    /// The completed operation with a prediction that finished last, with what is kept of it.
    pub fn last_realized(&self) -> Result<Option<(OperationRecord, Realized)>, StoreError> {
        let id: Option<String> = self.read(|tx| {
            Ok(tx
                .prepare_cached(
                    "SELECT o.id FROM operation_realized r JOIN operations o ON o.id = r.operation_id
                     WHERE o.state = 'completed' AND o.finished_at_ms IS NOT NULL
                     ORDER BY o.finished_at_ms DESC, o.id DESC LIMIT 1",
                )?
                .query_row([], |r| r.get(0))
                .optional()?)
        })?;
        let Some(id) = id else { return Ok(None) };
        let (Some(op), Some(realized)) = (self.operation(&id)?, self.operation_realized(&id)?)
        else {
            return Ok(None);
        };
        Ok(Some((op, realized)))
    }
}
