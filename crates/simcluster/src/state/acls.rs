//! ACL bindings and Kafka's filter semantics (resource pattern ANY and MATCH included).

use super::{err, ApiError};

pub mod code {
    pub const ANY: i8 = 1;
    // Pattern types.
    pub const PATTERN_MATCH: i8 = 2;
    pub const PATTERN_LITERAL: i8 = 3;
    pub const PATTERN_PREFIXED: i8 = 4;
    // Permission types.
    pub const DENY: i8 = 2;
    pub const ALLOW: i8 = 3;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acl {
    pub resource_type: i8,
    pub resource_name: String,
    pub pattern_type: i8,
    pub principal: String,
    pub host: String,
    pub operation: i8,
    pub permission: i8,
}

/// A DescribeAcls/DeleteAcls filter.
#[derive(Debug, Clone)]
pub struct AclFilter {
    pub resource_type: i8,
    pub resource_name: Option<String>,
    pub pattern_type: i8,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: i8,
    pub permission: i8,
}

impl AclFilter {
    pub fn validate(&self) -> Result<(), ApiError> {
        let bad = |what: &str| ApiError::new(err::INVALID_REQUEST, what.to_string());
        if self.resource_type <= 0 || self.resource_type > 7 {
            return Err(bad("The resource type filter is unknown"));
        }
        if self.pattern_type <= 0 || self.pattern_type > 4 {
            return Err(bad("The pattern type filter is unknown"));
        }
        if self.operation <= 0 || self.operation > 15 {
            return Err(bad("The operation filter is unknown"));
        }
        if self.permission <= 0 || self.permission > 3 {
            return Err(bad("The permission type filter is unknown"));
        }
        Ok(())
    }

    pub fn matches(&self, acl: &Acl) -> bool {
        use code::*;
        if self.resource_type != ANY && self.resource_type != acl.resource_type {
            return false;
        }
        let name_ok = match self.pattern_type {
            ANY => self
                .resource_name
                .as_ref()
                .is_none_or(|n| *n == acl.resource_name),
            PATTERN_MATCH => match &self.resource_name {
                None => true,
                Some(n) => match acl.pattern_type {
                    PATTERN_LITERAL => acl.resource_name == *n || acl.resource_name == "*",
                    PATTERN_PREFIXED => n.starts_with(&acl.resource_name),
                    _ => false,
                },
            },
            p => {
                p == acl.pattern_type
                    && self
                        .resource_name
                        .as_ref()
                        .is_none_or(|n| *n == acl.resource_name)
            }
        };
        name_ok
            && self.principal.as_ref().is_none_or(|p| *p == acl.principal)
            && self.host.as_ref().is_none_or(|h| *h == acl.host)
            && (self.operation == ANY || self.operation == acl.operation)
            && (self.permission == ANY || self.permission == acl.permission)
    }
}

impl Acl {
    /// Rejects what Kafka rejects on CreateAcls.
    pub fn validate(&self) -> Result<(), ApiError> {
        let bad = |what: String| ApiError::new(err::INVALID_REQUEST, what);
        if !(2..=7).contains(&self.resource_type) {
            return Err(bad(format!(
                "Invalid resource type {} for an ACL binding",
                self.resource_type
            )));
        }
        if self.pattern_type != code::PATTERN_LITERAL && self.pattern_type != code::PATTERN_PREFIXED
        {
            return Err(bad(
                "Invalid pattern type: only LITERAL and PREFIXED can be created".into(),
            ));
        }
        if !(2..=15).contains(&self.operation) {
            return Err(bad(format!("Invalid operation {}", self.operation)));
        }
        if self.permission != code::ALLOW && self.permission != code::DENY {
            return Err(bad(format!("Invalid permission type {}", self.permission)));
        }
        if self.resource_name.is_empty() {
            return Err(bad("Resource name must not be empty".into()));
        }
        match self.principal.split_once(':') {
            Some((kind, name)) if !kind.is_empty() && !name.is_empty() => {}
            _ => {
                return Err(bad(format!(
                    "Could not parse principal from `{}` (no colon is present separating the principal type from the principal name)",
                    self.principal
                )))
            }
        }
        if self.host.is_empty() {
            return Err(bad("Host must not be empty".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::code::*;
    use super::*;

    fn acl(name: &str, pattern: i8) -> Acl {
        Acl {
            resource_type: 2,
            resource_name: name.into(),
            pattern_type: pattern,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: 3,
            permission: ALLOW,
        }
    }

    fn filter(name: Option<&str>, pattern: i8) -> AclFilter {
        AclFilter {
            resource_type: ANY,
            resource_name: name.map(str::to_string),
            pattern_type: pattern,
            principal: None,
            host: None,
            operation: ANY,
            permission: ANY,
        }
    }

    #[test]
    fn match_filters_find_literal_wildcard_and_prefixed_bindings() {
        let lit = acl("orders", PATTERN_LITERAL);
        let star = acl("*", PATTERN_LITERAL);
        let pre = acl("ord", PATTERN_PREFIXED);
        let other = acl("payments", PATTERN_LITERAL);
        let f = filter(Some("orders"), PATTERN_MATCH);
        assert!(f.matches(&lit) && f.matches(&star) && f.matches(&pre));
        assert!(!f.matches(&other));
        let any = filter(Some("orders"), ANY);
        assert!(any.matches(&lit) && !any.matches(&star) && !any.matches(&pre));
        let exact_prefixed = filter(Some("ord"), PATTERN_PREFIXED);
        assert!(exact_prefixed.matches(&pre) && !exact_prefixed.matches(&lit));
        assert!(filter(None, ANY).matches(&other));
    }
}
