/**
 * The Cedar text a new tenant starts with (and what applies while a tenant has stored none):
 * - every agent may `invoke` every tool; whether the agent may call the tool at all (its release
 *   closure) and the class limits are checked by other stages;
 * - a call may run unattended (`invokeUnattended`) only when its effective class is `read` or
 *   `workspace-write`; `shared-write` and `production` calls need approval.
 */
export function defaultTenantPolicy(): string {
  return `// Gatehouse default tenant policy.
@id("invoke-any-tool")
permit (principal, action == Gatehouse::Action::"invoke", resource);

@id("unattended-read-and-workspace-write")
permit (principal, action == Gatehouse::Action::"invokeUnattended", resource)
when { context.effectiveClass == "read" || context.effectiveClass == "workspace-write" };
`;
}
