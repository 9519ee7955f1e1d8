"""The reduce: the site-wide pages and the SQL tables' files, by query from the state."""
