//! DescribeAcls, CreateAcls, DeleteAcls (v1+: literal and prefixed patterns), any broker.

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::{CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest};

use ballast_model::BrokerId;

use crate::client::{str_bytes, Client};
use crate::error::{Error, ItemError, Result};
use crate::types::{
    AclBinding, AclCreateResult, AclDeleteResult, AclFilter, AclOperation, AclPatternType,
    AclPermissionType, AclResourceType, DeletedAcl,
};

impl Client {
    /// DescribeAcls: the bindings matching `filter`, sorted. A cluster without an authorizer
    /// answers SECURITY_DISABLED, returned as the error.
    pub async fn describe_acls(&self, filter: &AclFilter) -> Result<Vec<AclBinding>> {
        self.describe_acls_via(None, filter).await
    }

    /// As [`Client::describe_acls`], answered by `broker` (on KRaft each broker shows a change
    /// once it applied it from the metadata log).
    pub async fn describe_acls_at(
        &self,
        broker: BrokerId,
        filter: &AclFilter,
    ) -> Result<Vec<AclBinding>> {
        self.describe_acls_via(Some(broker), filter).await
    }

    async fn describe_acls_via(
        &self,
        broker: Option<BrokerId>,
        filter: &AclFilter,
    ) -> Result<Vec<AclBinding>> {
        self.retrying("DescribeAcls", move || async move {
            let conn = self.connection_via(broker).await?;
            let version = conn.version::<DescribeAclsRequest>()?;
            let (resource_type, name, pattern, principal, host, operation, permission) =
                filter.wire();
            let mut request = DescribeAclsRequest::default();
            request.resource_type_filter = resource_type;
            request.resource_name_filter = name.as_deref().map(str_bytes);
            request.pattern_type_filter = pattern;
            request.principal_filter = principal.as_deref().map(str_bytes);
            request.host_filter = host.as_deref().map(str_bytes);
            request.operation = operation;
            request.permission_type = permission;
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka(
                    "DescribeAcls",
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                ));
            }
            let mut out: Vec<AclBinding> = response
                .resources
                .into_iter()
                .flat_map(|r| {
                    let resource_type = AclResourceType::from_wire(r.resource_type);
                    let resource_name = r.resource_name.to_string();
                    let pattern_type = AclPatternType::from_wire(r.pattern_type);
                    r.acls.into_iter().map(move |a| AclBinding {
                        resource_type,
                        resource_name: resource_name.clone(),
                        pattern_type,
                        principal: a.principal.to_string(),
                        host: a.host.to_string(),
                        operation: AclOperation::from_wire(a.operation),
                        permission_type: AclPermissionType::from_wire(a.permission_type),
                    })
                })
                .collect();
            out.sort_by_key(sort_key);
            Ok(out)
        })
        .await
    }

    /// CreateAcls. One result per binding, in order.
    pub async fn create_acls(&self, bindings: &[AclBinding]) -> Result<Vec<AclCreateResult>> {
        for b in bindings {
            if matches!(b.pattern_type, AclPatternType::Unknown)
                || matches!(b.operation, AclOperation::Unknown)
                || matches!(b.permission_type, AclPermissionType::Unknown)
                || matches!(b.resource_type, AclResourceType::Unknown)
            {
                return Err(Error::InvalidArgument(format!(
                    "acl binding {b:?} uses an unknown value"
                )));
            }
        }
        self.retrying("CreateAcls", move || async move {
            let conn = self.any_connection().await?;
            let version = conn.version::<CreateAclsRequest>()?;
            let mut request = CreateAclsRequest::default();
            request.creations = bindings
                .iter()
                .map(|b| {
                    let mut c = AclCreation::default();
                    c.resource_type = b.resource_type.wire();
                    c.resource_name = str_bytes(&b.resource_name);
                    c.resource_pattern_type = b.pattern_type.wire();
                    c.principal = str_bytes(&b.principal);
                    c.host = str_bytes(&b.host);
                    c.operation = b.operation.wire();
                    c.permission_type = b.permission_type.wire();
                    c
                })
                .collect();
            let response = conn.send(&request, version).await?;
            if response.results.len() != bindings.len() {
                return Err(Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!(
                        "createacls answered {} results for {} bindings",
                        response.results.len(),
                        bindings.len()
                    ),
                });
            }
            Ok(bindings
                .iter()
                .zip(response.results)
                .map(|(b, r)| AclCreateResult {
                    binding: b.clone(),
                    error: ItemError::from_code(
                        r.error_code,
                        r.error_message.map(|m| m.to_string()),
                    ),
                })
                .collect())
        })
        .await
    }

    /// DeleteAcls. One result per filter, in order, with the bindings it matched.
    pub async fn delete_acls(&self, filters: &[AclFilter]) -> Result<Vec<AclDeleteResult>> {
        self.retrying("DeleteAcls", move || async move {
            let conn = self.any_connection().await?;
            let version = conn.version::<DeleteAclsRequest>()?;
            let mut request = DeleteAclsRequest::default();
            request.filters = filters
                .iter()
                .map(|f| {
                    let (resource_type, name, pattern, principal, host, operation, permission) =
                        f.wire();
                    let mut d = DeleteAclsFilter::default();
                    d.resource_type_filter = resource_type;
                    d.resource_name_filter = name.as_deref().map(str_bytes);
                    d.pattern_type_filter = pattern;
                    d.principal_filter = principal.as_deref().map(str_bytes);
                    d.host_filter = host.as_deref().map(str_bytes);
                    d.operation = operation;
                    d.permission_type = permission;
                    d
                })
                .collect();
            let response = conn.send(&request, version).await?;
            if response.filter_results.len() != filters.len() {
                return Err(Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!(
                        "deleteacls answered {} results for {} filters",
                        response.filter_results.len(),
                        filters.len()
                    ),
                });
            }
            Ok(filters
                .iter()
                .zip(response.filter_results)
                .map(|(f, r)| {
                    let mut deleted: Vec<DeletedAcl> = r
                        .matching_acls
                        .into_iter()
                        .map(|m| DeletedAcl {
                            binding: AclBinding {
                                resource_type: AclResourceType::from_wire(m.resource_type),
                                resource_name: m.resource_name.to_string(),
                                pattern_type: AclPatternType::from_wire(m.pattern_type),
                                principal: m.principal.to_string(),
                                host: m.host.to_string(),
                                operation: AclOperation::from_wire(m.operation),
                                permission_type: AclPermissionType::from_wire(m.permission_type),
                            },
                            error: ItemError::from_code(
                                m.error_code,
                                m.error_message.map(|x| x.to_string()),
                            ),
                        })
                        .collect();
                    deleted.sort_by_key(|d| sort_key(&d.binding));
                    AclDeleteResult {
                        filter: f.clone(),
                        error: ItemError::from_code(
                            r.error_code,
                            r.error_message.map(|m| m.to_string()),
                        ),
                        deleted,
                    }
                })
                .collect())
        })
        .await
    }
}

fn sort_key(b: &AclBinding) -> (i8, String, i8, String, String, i8, i8) {
    (
        b.resource_type.wire(),
        b.resource_name.clone(),
        b.pattern_type.wire(),
        b.principal.clone(),
        b.host.clone(),
        b.operation.wire(),
        b.permission_type.wire(),
    )
}
