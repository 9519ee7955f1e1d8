"""Put a site on disk: the one writer, atomic publishing, locks, archives and host configs."""
