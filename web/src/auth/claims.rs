//! From a provider's claims to a person (docs/auth.md, "Claims"). Pure functions: the rules are
//! tested here, the login only calls them.
//!
//! - user name: `AUTH_<P>_USERNAME_CLAIM`, else the first of `preferred_username`, `upn`,
//!   `unique_name`, `email`, `sub`;
//! - email: `AUTH_<P>_EMAIL_CLAIM`, else `email`, else `upn` when it is an address;
//! - display name: `name`, else `given_name` (with `family_name`), else `unique_name`, else `upn`;
//! - groups: `AUTH_<P>_GROUPS_CLAIM`, else the first non-empty of `groups`, `roles`, `role`,
//!   `group`;
//! - roles: every role-shaped claim merged (`roles`, `role`, Keycloak's `realm_access.roles`, and
//!   claims named by a URI or prefix ending in `/role`, `/roles`, `:role`, `:roles`).
//!
//! A claim may be a string or an array of strings; a configured claim may be a dotted path into
//! nested objects (`realm_access.roles`).

use ballast_config::OidcProvider;
use serde_json::{Map, Value};

/// The default groups lookup order: the first non-empty claim wins.
pub const GROUP_CLAIMS: [&str; 4] = ["groups", "roles", "role", "group"];
/// The default user-name lookup order.
pub const USERNAME_CLAIMS: [&str; 5] = ["preferred_username", "upn", "unique_name", "email", "sub"];

/// A person as the login sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub subject: String,
    pub user_id: String,
    pub name: Option<String>,
    pub email: Option<String>,
    pub groups: Vec<String>,
    pub roles: Vec<String>,
}

impl Person {
    /// Groups and roles together (the filters and the write groups look at both).
    pub fn memberships(&self) -> impl Iterator<Item = &String> {
        self.groups.iter().chain(self.roles.iter())
    }
}

/// The value at `path`: the claim named so, else a dotted path into nested objects.
fn lookup<'a>(claims: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    if let Some(v) = claims.get(path) {
        return Some(v);
    }
    let mut parts = path.split('.');
    let mut v = claims.get(parts.next()?)?;
    for part in parts {
        v = v.as_object()?.get(part)?;
    }
    Some(v)
}

/// A non-empty string claim.
fn text(claims: &Map<String, Value>, path: &str) -> Option<String> {
    lookup(claims, path)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A claim as a list: an array of strings, or one string.
fn list(claims: &Map<String, Value>, path: &str) -> Vec<String> {
    match lookup(claims, path) {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn push_unique(into: &mut Vec<String>, items: Vec<String>) {
    for item in items {
        if !into.contains(&item) {
            into.push(item);
        }
    }
}

/// Whether a claim name is role-shaped.
fn role_shaped(name: &str) -> bool {
    let last = name.rsplit(['/', ':']).next().unwrap_or(name);
    name == "roles" || name == "role" || (name != last && matches!(last, "role" | "roles"))
}

/// Maps `claims` (the ID token's, merged with userinfo) with `provider`'s settings.
pub fn person(claims: &Map<String, Value>, provider: &OidcProvider) -> Result<Person, String> {
    let subject = text(claims, "sub").ok_or("the identity token has no subject (sub)")?;
    let user_id = match &provider.username_claim {
        Some(claim) => text(claims, claim).ok_or_else(|| {
            format!(
                "the claim {claim:?} (AUTH_{}_USERNAME_CLAIM) is missing or empty",
                provider.name.to_ascii_uppercase()
            )
        })?,
        None => USERNAME_CLAIMS
            .iter()
            .find_map(|c| text(claims, c))
            .unwrap_or_else(|| subject.clone()),
    };
    let email = match &provider.email_claim {
        Some(claim) => text(claims, claim),
        None => text(claims, "email").or_else(|| text(claims, "upn").filter(|u| u.contains('@'))),
    };
    let given = text(claims, "given_name");
    let name = text(claims, "name")
        .or_else(|| {
            given.as_ref().map(|g| match text(claims, "family_name") {
                Some(f) => format!("{g} {f}"),
                None => g.clone(),
            })
        })
        .or_else(|| text(claims, "unique_name"))
        .or_else(|| text(claims, "upn"));
    let groups = match &provider.groups_claim {
        Some(claim) => list(claims, claim),
        None => GROUP_CLAIMS
            .iter()
            .map(|c| list(claims, c))
            .find(|g| !g.is_empty())
            .unwrap_or_default(),
    };
    let mut roles = Vec::new();
    let mut names: Vec<&String> = claims.keys().filter(|k| role_shaped(k)).collect();
    names.sort();
    for name in names {
        push_unique(&mut roles, list(claims, name));
    }
    push_unique(&mut roles, list(claims, "realm_access.roles"));
    Ok(Person {
        subject,
        user_id,
        name,
        email,
        groups,
        roles,
    })
}

/// Why a person may not log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// `ALLOWED_DOMAINS` (the email's domain, case-insensitive) and `ALLOWED_GROUPS` (any group or
/// role); an empty list allows everyone.
pub fn admit(
    person: &Person,
    allowed_domains: &[String],
    allowed_groups: &[String],
) -> Result<(), Refusal> {
    if !allowed_domains.is_empty() {
        let domain = person
            .email
            .as_deref()
            .and_then(|e| e.rsplit_once('@'))
            .map(|(_, d)| d.to_ascii_lowercase());
        match domain {
            None => {
                return Err(Refusal(format!(
                    "{} has no email address, and only addresses in {} are allowed",
                    person.user_id,
                    allowed_domains.join(", ")
                )))
            }
            Some(d) if !allowed_domains.iter().any(|a| a.eq_ignore_ascii_case(&d)) => {
                return Err(Refusal(format!(
                    "the domain {d} is not allowed (ALLOWED_DOMAINS: {})",
                    allowed_domains.join(", ")
                )))
            }
            Some(_) => {}
        }
    }
    if !allowed_groups.is_empty() && !person.memberships().any(|g| allowed_groups.contains(g)) {
        return Err(Refusal(format!(
            "{} is not in an allowed group (ALLOWED_GROUPS: {})",
            person.user_id,
            allowed_groups.join(", ")
        )));
    }
    Ok(())
}

/// `write` for everyone when `write_groups` is empty, else for members only.
pub fn scope(person: &Person, write_groups: &[String]) -> super::Scope {
    if write_groups.is_empty() || person.memberships().any(|g| write_groups.contains(g)) {
        super::Scope::Write
    } else {
        super::Scope::Read
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn provider() -> OidcProvider {
        OidcProvider {
            name: "corp".into(),
            issuer: "https://idp.example.com".into(),
            client_id: "c".into(),
            client_secret: None,
            scopes: vec!["openid".into()],
            display_name: "Corp".into(),
            username_claim: None,
            email_claim: None,
            groups_claim: None,
        }
    }

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn groups_come_from_the_first_non_empty_of_groups_roles_role_group() {
        let p = provider();
        let g = |v: Value| person(&claims(v), &p).expect("person").groups;
        assert_eq!(
            g(json!({"sub": "1", "groups": ["a"], "roles": ["b"]})),
            ["a"]
        );
        assert_eq!(g(json!({"sub": "1", "groups": [], "roles": ["b"]})), ["b"]);
        assert_eq!(g(json!({"sub": "1", "role": "c", "group": "d"})), ["c"]);
        assert_eq!(g(json!({"sub": "1", "group": "d"})), ["d"]);
        assert!(g(json!({"sub": "1"})).is_empty());
    }

    #[test]
    fn configured_claims_win_and_may_be_dotted_paths() {
        let mut p = provider();
        p.username_claim = Some("login".into());
        p.email_claim = Some("mail".into());
        p.groups_claim = Some("realm_access.roles".into());
        let who = person(
            &claims(json!({"sub": "1", "login": "al", "mail": "al@x.org",
                "preferred_username": "alice", "realm_access": {"roles": ["ops"]}})),
            &p,
        )
        .expect("person");
        assert_eq!(who.user_id, "al");
        assert_eq!(who.email.as_deref(), Some("al@x.org"));
        assert_eq!(who.groups, ["ops"]);
        p.username_claim = Some("absent".into());
        assert!(person(&claims(json!({"sub": "1"})), &p).is_err());
    }

    #[test]
    fn upn_unique_name_given_name_and_role_shaped_claims_are_merged() {
        let who = person(
            &claims(json!({
                "sub": "s", "upn": "carol@example.com", "unique_name": "EXAMPLE\\carol",
                "given_name": "Carol", "role": "operator",
                "http://schemas.microsoft.com/ws/2008/06/identity/claims/role": ["auditor"],
                "cognito:roles": "x"
            })),
            &provider(),
        )
        .expect("person");
        assert_eq!(who.user_id, "carol@example.com");
        assert_eq!(who.email.as_deref(), Some("carol@example.com"));
        assert_eq!(who.name.as_deref(), Some("Carol"));
        assert_eq!(who.groups, ["operator"]);
        assert_eq!(who.roles, ["x", "auditor", "operator"]);
        let who = person(
            &claims(json!({"sub": "s", "unique_name": "EXAMPLE\\c"})),
            &provider(),
        )
        .expect("person");
        assert_eq!(who.user_id, "EXAMPLE\\c");
        assert_eq!(who.email, None);
        assert_eq!(
            person(&claims(json!({"sub": "only"})), &provider())
                .expect("p")
                .user_id,
            "only"
        );
        assert!(person(&claims(json!({"name": "x"})), &provider()).is_err());
    }

    #[test]
    fn allowed_domains_and_groups_refuse_everyone_else() {
        let who = |email: Option<&str>, groups: &[&str]| Person {
            subject: "s".into(),
            user_id: "u".into(),
            name: None,
            email: email.map(str::to_string),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            roles: vec![],
        };
        let domains = vec!["example.com".to_string()];
        assert!(admit(&who(Some("a@Example.COM"), &[]), &domains, &[]).is_ok());
        assert!(admit(&who(Some("a@other.org"), &[]), &domains, &[])
            .unwrap_err()
            .0
            .contains("not allowed"));
        assert!(admit(&who(None, &[]), &domains, &[]).is_err());
        let groups = vec!["kafka-admins".to_string()];
        assert!(admit(&who(None, &["kafka-admins"]), &[], &groups).is_ok());
        assert!(admit(&who(None, &["staff"]), &[], &groups).is_err());
        assert!(admit(&who(None, &[]), &[], &[]).is_ok());
    }

    #[test]
    fn write_groups_limit_the_write_scope_to_their_members() {
        let mut p = Person {
            subject: "s".into(),
            user_id: "u".into(),
            name: None,
            email: None,
            groups: vec!["staff".into()],
            roles: vec![],
        };
        assert_eq!(scope(&p, &[]), crate::auth::Scope::Write);
        assert_eq!(scope(&p, &["ops".to_string()]), crate::auth::Scope::Read);
        p.roles.push("ops".into());
        assert_eq!(scope(&p, &["ops".to_string()]), crate::auth::Scope::Write);
    }
}
