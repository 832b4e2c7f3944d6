//! JSON Schema pieces the operations' input types use (derived with utoipa): the rules the
//! server enforces, stated in the document every door publishes (OpenAPI), so a request the
//! schema allows is one the operation accepts.

use serde_json::Value;

/// A string limited to `values` (the server compares them ignoring case), for
/// `#[param(schema_with = ...)]` next to the list the parser reads.
pub fn string_enum<'a>(values: impl IntoIterator<Item = &'a str>) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(values.into_iter().map(str::to_string)))
        .build()
}

/// [`string_enum`] for an optional body field: `null` is the field left out.
pub fn string_enum_or_null<'a>(
    values: impl IntoIterator<Item = &'a str>,
) -> utoipa::openapi::Object {
    let values: Vec<Value> = values
        .into_iter()
        .map(|v| Value::String(v.to_string()))
        .chain([Value::Null])
        .collect();
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::Type::String,
            utoipa::openapi::Type::Null,
        ]))
        .enum_values(Some(values))
        .build()
}

/// An optional list of distinct broker ids (`null` or absent: the default), at least one: the
/// body fields the server refuses empty or with a repeated id.
pub fn distinct_broker_ids_or_null() -> utoipa::openapi::Schema {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Type};
    let id = ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Int32,
        )))
        .minimum(Some(0));
    OneOfBuilder::new()
        .item(
            ArrayBuilder::new()
                .items(id)
                .min_items(Some(1))
                .unique_items(true),
        )
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .build()
        .into()
}

/// A string matching `pattern` (an ECMA-262 regular expression the server's own check agrees with).
pub fn string_pattern(pattern: &str) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .pattern(Some(pattern))
        .build()
}

/// An instant as [`crate::time::parse_instant_ms`] reads it: Unix milliseconds or RFC 3339
/// (a date, or a time with `Z` or an offset), years 1980 to 2999; empty allowed where `empty`.
pub fn instant_schema(empty: bool) -> utoipa::openapi::Object {
    let time = "[0-9]{1,15}|(19[89][0-9]|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{3})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?";
    let pattern = if empty {
        format!("^(|{time})$")
    } else {
        format!("^({time})$")
    };
    string_pattern(&pattern)
}

/// A topic name by Kafka's rules (`crate::names::topic`).
pub fn topic_name() -> utoipa::openapi::Object {
    string_pattern(crate::names::TOPIC_PATTERN)
}
