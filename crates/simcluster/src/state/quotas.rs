//! Client quotas (KIP-546): entities of user, client-id and ip, default entities, and the
//! describe match semantics (exact, default, any specified).

use std::collections::BTreeMap;

use super::{err, ApiError};

/// An entity: sorted (entity type, name) pairs; a None name is the default entity.
pub type Entity = Vec<(String, Option<String>)>;

/// Quota values by key.
pub type Values = BTreeMap<String, f64>;

#[derive(Debug, Clone, Default)]
pub struct Quotas {
    pub entries: BTreeMap<Entity, BTreeMap<String, f64>>,
}

pub const MATCH_EXACT: i8 = 0;
pub const MATCH_DEFAULT: i8 = 1;
pub const MATCH_SPECIFIED: i8 = 2;

/// One DescribeClientQuotas filter component.
#[derive(Debug, Clone)]
pub struct Component {
    pub entity_type: String,
    pub match_type: i8,
    pub name: Option<String>,
}

pub fn validate_entity(entity: &Entity) -> Result<(), ApiError> {
    let bad = |m: String| ApiError::new(err::INVALID_REQUEST, m);
    if entity.is_empty() {
        return Err(bad("Invalid empty client quota entity".into()));
    }
    let mut seen = Vec::new();
    for (t, _) in entity {
        if !matches!(t.as_str(), "user" | "client-id" | "ip") {
            return Err(bad(format!("Unhandled client quota entity type: {t}")));
        }
        if seen.contains(&t) {
            return Err(bad(format!("Duplicate {t} entity in client quota entity")));
        }
        seen.push(t);
    }
    if seen.iter().any(|t| *t == "ip") && seen.len() > 1 {
        return Err(bad(
            "Invalid quota entity combination, IP entity should not be combined with User or ClientId entities".into(),
        ));
    }
    Ok(())
}

pub fn validate_key(entity: &Entity, key: &str, value: f64, remove: bool) -> Result<(), ApiError> {
    let is_ip = entity.iter().any(|(t, _)| t == "ip");
    let ok = if is_ip {
        key == "connection_creation_rate"
    } else {
        matches!(
            key,
            "producer_byte_rate"
                | "consumer_byte_rate"
                | "request_percentage"
                | "controller_mutation_rate"
        )
    };
    if !ok {
        return Err(ApiError::new(
            err::INVALID_REQUEST,
            format!("Invalid configuration key {key}"),
        ));
    }
    if !remove && (!value.is_finite() || value <= 0.0) {
        return Err(ApiError::new(
            err::INVALID_REQUEST,
            format!("Illegal value {value} for key {key}: must be positive"),
        ));
    }
    Ok(())
}

impl Quotas {
    /// Entries matching every component (and, when strict, no other entity types).
    pub fn describe(
        &self,
        components: &[Component],
        strict: bool,
    ) -> Result<Vec<(Entity, Values)>, ApiError> {
        for c in components {
            match c.match_type {
                MATCH_EXACT if c.name.is_none() => {
                    return Err(ApiError::new(
                        err::INVALID_REQUEST,
                        format!("Request specified no match for exact {}", c.entity_type),
                    ))
                }
                MATCH_EXACT | MATCH_DEFAULT | MATCH_SPECIFIED => {}
                other => {
                    return Err(ApiError::new(
                        err::INVALID_REQUEST,
                        format!("Unexpected match type: {other}"),
                    ))
                }
            }
        }
        let mut out = Vec::new();
        'entries: for (entity, values) in &self.entries {
            for c in components {
                let Some((_, name)) = entity.iter().find(|(t, _)| *t == c.entity_type) else {
                    continue 'entries;
                };
                let ok = match c.match_type {
                    MATCH_EXACT => name == &c.name,
                    MATCH_DEFAULT => name.is_none(),
                    _ => name.is_some(),
                };
                if !ok {
                    continue 'entries;
                }
            }
            if strict && entity.len() != components.len() {
                continue;
            }
            out.push((entity.clone(), values.clone()));
        }
        Ok(out)
    }

    pub fn alter(&mut self, entity: Entity, ops: &[(String, f64, bool)]) {
        let values = self.entries.entry(entity.clone()).or_default();
        for (key, value, remove) in ops {
            if *remove {
                values.remove(key);
            } else {
                values.insert(key.clone(), *value);
            }
        }
        if values.is_empty() {
            self.entries.remove(&entity);
        }
    }
}
