//! ACLs and client quotas.

use std::collections::BTreeMap;

use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::{
    alter_client_quotas_response, describe_client_quotas_response, AlterClientQuotasRequest,
    AlterClientQuotasResponse, CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest,
    DeleteAclsResponse, DescribeAclsRequest, DescribeAclsResponse, DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
};

use super::{sb, Ctx};
use crate::state::acls::{Acl, AclFilter};
use crate::state::quotas::{self, Component, Entity};

fn filter_of(
    resource_type: i8,
    name: &Option<kafka_protocol::protocol::StrBytes>,
    pattern: i8,
    principal: &Option<kafka_protocol::protocol::StrBytes>,
    host: &Option<kafka_protocol::protocol::StrBytes>,
    operation: i8,
    permission: i8,
) -> AclFilter {
    AclFilter {
        resource_type,
        resource_name: name.as_ref().map(|s| s.to_string()),
        pattern_type: pattern,
        principal: principal.as_ref().map(|s| s.to_string()),
        host: host.as_ref().map(|s| s.to_string()),
        operation,
        permission,
    }
}

pub fn describe_acls(ctx: &Ctx, req: DescribeAclsRequest) -> DescribeAclsResponse {
    let c = ctx.shared.lock();
    let mut resp = DescribeAclsResponse::default();
    let f = filter_of(
        req.resource_type_filter,
        &req.resource_name_filter,
        req.pattern_type_filter,
        &req.principal_filter,
        &req.host_filter,
        req.operation,
        req.permission_type,
    );
    if let Err(e) = f.validate() {
        resp.error_code = e.code;
        resp.error_message = Some(sb(e.message));
        return resp;
    }
    let mut groups: BTreeMap<(i8, String, i8), Vec<AclDescription>> = BTreeMap::new();
    for a in c.acls.iter().filter(|a| f.matches(a)) {
        let mut d = AclDescription::default();
        d.principal = sb(a.principal.clone());
        d.host = sb(a.host.clone());
        d.operation = a.operation;
        d.permission_type = a.permission;
        groups
            .entry((a.resource_type, a.resource_name.clone(), a.pattern_type))
            .or_default()
            .push(d);
    }
    resp.resources = groups
        .into_iter()
        .map(|((t, n, p), acls)| {
            let mut r = DescribeAclsResource::default();
            r.resource_type = t;
            r.resource_name = sb(n);
            r.pattern_type = p;
            r.acls = acls;
            r
        })
        .collect();
    resp
}

pub fn create_acls(ctx: &Ctx, req: CreateAclsRequest) -> CreateAclsResponse {
    let mut c = ctx.shared.lock();
    let mut resp = CreateAclsResponse::default();
    for cr in &req.creations {
        let acl = Acl {
            resource_type: cr.resource_type,
            resource_name: cr.resource_name.to_string(),
            pattern_type: cr.resource_pattern_type,
            principal: cr.principal.to_string(),
            host: cr.host.to_string(),
            operation: cr.operation,
            permission: cr.permission_type,
        };
        let mut r = AclCreationResult::default();
        match acl.validate() {
            Ok(()) => {
                if !c.acls.contains(&acl) {
                    c.acls.push(acl);
                }
            }
            Err(e) => {
                r.error_code = e.code;
                r.error_message = Some(sb(e.message));
            }
        }
        resp.results.push(r);
    }
    resp
}

pub fn delete_acls(ctx: &Ctx, req: DeleteAclsRequest) -> DeleteAclsResponse {
    let mut c = ctx.shared.lock();
    let mut resp = DeleteAclsResponse::default();
    for f in &req.filters {
        let filter = filter_of(
            f.resource_type_filter,
            &f.resource_name_filter,
            f.pattern_type_filter,
            &f.principal_filter,
            &f.host_filter,
            f.operation,
            f.permission_type,
        );
        let mut r = DeleteAclsFilterResult::default();
        if let Err(e) = filter.validate() {
            r.error_code = e.code;
            r.error_message = Some(sb(e.message));
            resp.filter_results.push(r);
            continue;
        }
        let (gone, kept): (Vec<Acl>, Vec<Acl>) = std::mem::take(&mut c.acls)
            .into_iter()
            .partition(|a| filter.matches(a));
        c.acls = kept;
        r.matching_acls = gone
            .into_iter()
            .map(|a| {
                let mut m = DeleteAclsMatchingAcl::default();
                m.resource_type = a.resource_type;
                m.resource_name = sb(a.resource_name);
                m.pattern_type = a.pattern_type;
                m.principal = sb(a.principal);
                m.host = sb(a.host);
                m.operation = a.operation;
                m.permission_type = a.permission;
                m
            })
            .collect();
        resp.filter_results.push(r);
    }
    resp
}

pub fn describe_client_quotas(
    ctx: &Ctx,
    req: DescribeClientQuotasRequest,
) -> DescribeClientQuotasResponse {
    let c = ctx.shared.lock();
    let mut resp = DescribeClientQuotasResponse::default();
    let components: Vec<Component> = req
        .components
        .iter()
        .map(|x| Component {
            entity_type: x.entity_type.to_string(),
            match_type: x.match_type,
            name: x._match.as_ref().map(|s| s.to_string()),
        })
        .collect();
    // A change still on its way to the brokers is not shown yet.
    let shown = c.lag.pending().then(|| c.lag.shown_quotas(&c.quotas));
    match shown
        .as_ref()
        .unwrap_or(&c.quotas)
        .describe(&components, req.strict)
    {
        Ok(list) => {
            resp.entries = Some(
                list.into_iter()
                    .map(|(entity, values)| {
                        let mut e = describe_client_quotas_response::EntryData::default();
                        e.entity = entity
                            .into_iter()
                            .map(|(t, n)| {
                                let mut d = describe_client_quotas_response::EntityData::default();
                                d.entity_type = sb(t);
                                d.entity_name = n.map(sb);
                                d
                            })
                            .collect();
                        e.values = values
                            .into_iter()
                            .map(|(k, v)| {
                                let mut d = describe_client_quotas_response::ValueData::default();
                                d.key = sb(k);
                                d.value = v;
                                d
                            })
                            .collect();
                        e
                    })
                    .collect(),
            );
        }
        Err(e) => {
            resp.error_code = e.code;
            resp.error_message = Some(sb(e.message));
            resp.entries = None;
        }
    }
    resp
}

pub fn alter_client_quotas(ctx: &Ctx, req: AlterClientQuotasRequest) -> AlterClientQuotasResponse {
    let mut c = ctx.shared.lock();
    let mut resp = AlterClientQuotasResponse::default();
    for entry in &req.entries {
        let mut entity: Entity = entry
            .entity
            .iter()
            .map(|e| {
                (
                    e.entity_type.to_string(),
                    e.entity_name.as_ref().map(|n| n.to_string()),
                )
            })
            .collect();
        entity.sort();
        let ops: Vec<(String, f64, bool)> = entry
            .ops
            .iter()
            .map(|o| (o.key.to_string(), o.value, o.remove))
            .collect();
        let check = quotas::validate_entity(&entity).and_then(|()| {
            ops.iter()
                .try_for_each(|(k, v, remove)| quotas::validate_key(&entity, k, *v, *remove))
        });
        let mut r = alter_client_quotas_response::EntryData::default();
        r.entity = entity
            .iter()
            .map(|(t, n)| {
                let mut d = alter_client_quotas_response::EntityData::default();
                d.entity_type = sb(t.clone());
                d.entity_name = n.clone().map(sb);
                d
            })
            .collect();
        match check {
            Ok(()) => {
                if !req.validate_only {
                    let before = c.quotas.entries.get(&entity).cloned().unwrap_or_default();
                    c.quotas.alter(entity.clone(), &ops);
                    let after = c.quotas.entries.get(&entity).cloned().unwrap_or_default();
                    let now = c.now_ms;
                    c.lag.quota_committed(entity, &before, &after, now);
                }
            }
            Err(e) => {
                r.error_code = e.code;
                r.error_message = Some(sb(e.message));
            }
        }
        resp.entries.push(r);
    }
    resp
}
