"""Reading Ballista event logs: the v1 schema, one log's reader, and log discovery."""
