"""`git oxide mcp`: the repository's sessions served to an agent as MCP tools."""
