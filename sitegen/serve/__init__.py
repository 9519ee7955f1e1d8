"""``sitegen serve``: a preview server with live reload."""
