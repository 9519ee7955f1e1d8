"""Where the site goes: a local directory, or a bucket through a local copy."""
