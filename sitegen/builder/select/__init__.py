"""What the site keeps: duplicates, retention and the size budget."""
