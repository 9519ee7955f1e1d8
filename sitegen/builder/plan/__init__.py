"""What changed since the published site: the listing diff, the plan, and the run they make."""
