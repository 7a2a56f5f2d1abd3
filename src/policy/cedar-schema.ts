/**
 * The Cedar schema of Gatehouse (Cedar schema syntax). Tenant and project policies are validated
 * against it before they are stored.
 *
 * Entities of a request (built by the engine from the request, never stored):
 * - `Agent::"<agentId>"` — the calling agent (all versions share one entity; `release` is `id@version`);
 * - `Tool::"<toolId>"` — the called tool (all versions share one entity; `version` tells them apart);
 * - `Tenant::"<tenant>"`, `Project::"<project>" in Tenant`, `Environment::"<name>" in Project`.
 *
 * `context.input` is the call's input. Cedar 4 cannot validate an open record
 * (`additionalAttributes` needs the experimental `partial-validate` feature), so `input` is
 * declared as an empty record. The validator then types `context.input has x` as false and does
 * not check what that guard protects, so a policy reads input attributes only behind a `has` guard:
 * `context.input has branch && context.input.branch == "main"`. An unguarded
 * `context.input.branch` is refused at validation, which is what we want: at run time it would
 * fail on every input that lacks the attribute.
 */
export const GATEHOUSE_CEDAR_SCHEMA = `namespace Gatehouse {
  entity Tenant;
  entity Project in [Tenant];
  entity Environment in [Project] = { class: String, frozen: Bool };
  entity Agent = { release: String, agentId: String };
  entity Tool = { toolId: String, version: String, kind: String, declaredClass: String };

  type CallContext = {
    environment: String,
    environmentClass: String,
    frozen: Bool,
    effectiveClass: String,
    declaredClass: String,
    project: String,
    tenant: String,
    input: {},
  };

  action invoke appliesTo { principal: Agent, resource: Tool, context: CallContext };
  action invokeUnattended appliesTo { principal: Agent, resource: Tool, context: CallContext };
}
`;
