"""Build a site: map each log to its files, reduce them into the listings, plan what changed."""
