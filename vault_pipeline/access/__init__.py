"""The vault read from outside: the Python API (`api`), the HTTP service (`serve`) and its
standard-library client (`client`), and the agent tools - a session's world (`world`), the
tools' schemas (`specs`) and implementation (`tools`, `fulltext`), their MCP and HTTP faces
(`mcp_server`, `tools_http`), the trajectory log (`log`) and an export cut like a session
(`export_world`)."""
