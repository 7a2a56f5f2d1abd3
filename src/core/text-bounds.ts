/**
 * The longest reason a person writes on a decision or a release: approving or rejecting an
 * approval, revoking a token, retiring an MCP server, deprecating or revoking a tool version, a
 * class rule's reason. The edges refuse a longer one naming the field and this bound.
 */
export const MAX_REASON_LENGTH = 2000;
